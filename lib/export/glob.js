'use strict'

// Redis's glob (stringmatchlen in util.c), byte by byte: what SCAN's MATCH keeps, for keys
// export finds otherwise (CLUSTER GETKEYSINSLOT, ./cluster-faults.js). `*` any bytes, `?` one
// byte, `[abc]`, `[^abc]`, `[a-z]`, `\x` the byte x itself.

const STAR = 0x2a
const QUESTION = 0x3f
const OPEN = 0x5b
const CLOSE = 0x5d
const CARET = 0x5e
const DASH = 0x2d
const BACKSLASH = 0x5c

/** Whether `key` (a Buffer) matches `pattern` (a string, its UTF-8 bytes). */
function globMatch (pattern, key) {
  const p = Buffer.isBuffer(pattern) ? pattern : Buffer.from(pattern)
  return match(p, 0, key, 0)
}

function match (p, i, s, j) {
  while (i < p.length && j <= s.length) {
    const c = p[i]
    if (c === STAR) {
      while (i + 1 < p.length && p[i + 1] === STAR) i++
      if (i + 1 === p.length) return true
      for (let k = j; k <= s.length; k++) if (match(p, i + 1, s, k)) return true
      return false
    }
    if (j === s.length) return false
    if (c === QUESTION) {
      i++; j++
      continue
    }
    if (c === OPEN) {
      const r = inClass(p, i + 1, s[j])
      if (!r.matched) return false
      i = r.end + 1; j++
      continue
    }
    let lit = c
    if (c === BACKSLASH && i + 1 < p.length) lit = p[++i]
    if (lit !== s[j]) return false
    i++; j++
  }
  while (i < p.length && p[i] === STAR) i++
  return i === p.length && j === s.length
}

/** A `[...]` class from `i` (after the `[`): { matched, end: the index of its `]` (or the last byte) }. */
function inClass (p, i, b) {
  const not = p[i] === CARET
  if (not) i++
  let matched = false
  for (; i < p.length && p[i] !== CLOSE; i++) {
    if (p[i] === BACKSLASH && i + 1 < p.length) {
      i++
      if (p[i] === b) matched = true
    } else if (i + 2 < p.length && p[i + 1] === DASH) {
      let lo = p[i]
      let hi = p[i + 2]
      if (lo > hi) [lo, hi] = [hi, lo]
      if (b >= lo && b <= hi) matched = true
      i += 2
    } else if (p[i] === b) {
      matched = true
    }
  }
  return { matched: not ? !matched : matched, end: Math.min(i, p.length - 1) }
}

module.exports = { globMatch }
