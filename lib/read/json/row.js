'use strict'

// The NDJSON fast path: a line that is a flat JSON object whose values are plain strings
// (no backslash escapes), numbers whose text is exactly what String(JSON.parse(text))
// gives, true, false or null becomes a JsonRow: byte ranges of its keys and values, which
// the mapper copies straight into RESP. Any other line (nested values, escapes, arrays,
// numbers such as 1.0 or 1e5, anything malformed) returns null and goes through
// JSON.parse as before, so the fast path never has to be right about a hard case.

const { startsWithIndex } = require('./value')
const { KEY_ORDER, FieldMissing } = require('../row')

const QUOTE = 0x22
const BACKSLASH = 0x5c
const SPACE = 0x20
const TAB = 9
const BOUNDS = 16384
const MAX_DIGITS = 15 // a decimal of up to 15 significant digits round-trips through a double

/**
 * A flat object as byte ranges of `buf`: pair k has its key at [b[j], b[j + 1]) and its
 * value at [b[j + 2], b[j + 3]) with j = i + 4k (strings without their quotes);
 * b[j + 2] === -1 for null. `b` is a bounds table shared by many rows.
 */
class JsonRow {
  constructor (buf, b, i, n) {
    this.buf = buf
    this.b = b
    this.i = i
    this.n = n // number of pairs
  }

  /** Index of the last pair whose key is `name` (bytes), or -1: the one JSON.parse keeps. */
  find (name) {
    const b = this.b
    const buf = this.buf
    const len = name.length
    for (let k = this.n - 1; k >= 0; k--) {
      const j = this.i + 4 * k
      const s = b[j]
      if (b[j + 1] - s !== len) continue
      let x = 0
      while (x < len && buf[s + x] === name[x]) x++
      if (x === len) return k
    }
    return -1
  }

  /** The object JSON.parse would give for the line, with the key order of the line (KEY_ORDER). */
  toObject () {
    const out = {}
    const buf = this.buf
    const keys = new Array(this.n) // no repeated keys on the fast path: n distinct keys
    for (let k = 0; k < this.n; k++) {
      const j = this.i + 4 * k
      const vs = this.b[j + 2]
      const ve = this.b[j + 3]
      const key = buf.toString('utf8', this.b[j], this.b[j + 1])
      let value
      if (vs === -1) value = null
      else if (buf[vs - 1] === QUOTE) value = buf.toString('utf8', vs, ve)
      else if (buf[vs] === 0x74) value = true
      else if (buf[vs] === 0x66) value = false
      else value = Number(buf.toString('latin1', vs, ve))
      // An own "__proto__" property, as JSON.parse makes (assigning it would set the prototype).
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
      else out[key] = value
      keys[k] = key
    }
    // Integer-like keys come first in a JS object, wherever they were in the line.
    if (startsWithIndex(out)) out[KEY_ORDER] = keys
    return out
  }

  /** The plain record (read/row.js). */
  toPlain () {
    return this.toObject()
  }

  toJSON () {
    return this.toObject()
  }
}

/**
 * A word's writer (read/row.js RowKind): its fields copied as spans of the row's bytes, by
 * key; null when a name is a dotted path (the record is then made an object first).
 */
function word (parts, shape) {
  const fields = parts.filter(p => typeof p !== 'string')
  if (fields.some(p => p.name.includes('.'))) return null
  const keys = fields.map(p => Buffer.from(p.name))
  if (parts.length === 1) {
    const key = keys[0]
    const name = fields[0].name
    return (row, w) => {
      const j = valueAt(row, key, name) + 2
      w.span(row.buf, row.b[j], row.b[j + 1])
    }
  }
  const texts = parts.map(p => typeof p === 'string' ? Buffer.from(p) : null)
  const spans = new Int32Array(2 * keys.length)
  return (row, w) => {
    for (let m = 0; m < keys.length; m++) {
      const j = valueAt(row, keys[m], fields[m].name) + 2
      spans[2 * m] = row.b[j]
      spans[2 * m + 1] = row.b[j + 1]
    }
    w.spanParts(texts, row.buf, spans)
  }
}

/** Where in row.b the pair named `bytes` starts; a missing or null value throws, as for a plain record. */
function valueAt (row, bytes, name) {
  const k = row.find(bytes)
  if (k === -1) throw new FieldMissing(name)
  const j = row.i + 4 * k
  if (row.b[j + 2] === -1) throw new FieldMissing(name, `field "${name}" is null`)
  return j
}

/** `*`: each pair that is not null, key and value as spans. */
const starOfRows = {
  count (row) {
    let n = 0
    for (let k = 0, j = row.i; k < row.n; k++, j += 4) if (row.b[j + 2] !== -1) n += 2
    return n
  },
  write (row, w) {
    const b = row.b
    for (let k = 0, j = row.i; k < row.n; k++, j += 4) {
      if (b[j + 2] === -1) continue
      w.span(row.buf, b[j], b[j + 1])
      w.span(row.buf, b[j + 2], b[j + 3])
    }
  }
}

/** The RowKind of JsonRows (read/row.js). */
const rows = { name: 'json', Row: JsonRow, word, star: () => starOfRows }

/** Scans lines into JsonRows, sharing bounds tables between them. */
class FlatScanner {
  constructor () {
    this.b = new Int32Array(BOUNDS)
    this.bi = 0
  }

  /** buf[start, end) as a JsonRow, or null when JSON.parse must read it. */
  scan (buf, start, end) {
    let p = skipSpace(buf, start, end)
    if (buf[p] !== 0x7b) return null // {
    p = skipSpace(buf, p + 1, end)
    let b = this.b
    let bi0 = this.bi
    let bi = bi0
    if (buf[p] === 0x7d) { // {}
      p = skipSpace(buf, p + 1, end)
      return p === end ? this.row(buf, bi0, bi0) : null
    }
    for (;;) {
      if (bi + 4 > b.length) {
        b = this.grow(bi0, bi)
        bi -= bi0
        bi0 = 0
      }
      if (buf[p] !== QUOTE) return null
      const ks = p + 1
      const ke = stringEnd(buf, ks, end)
      if (ke === -1) return null
      p = skipSpace(buf, ke + 1, end)
      if (buf[p] !== 0x3a) return null // :
      p = skipSpace(buf, p + 1, end)
      let vs = p
      let ve
      const c = buf[p]
      if (c === QUOTE) {
        vs = p + 1
        ve = stringEnd(buf, vs, end)
        if (ve === -1) return null
        p = ve + 1
      } else if (c === 0x6e) { // null
        if (!literal(buf, p, end, NULL)) return null
        vs = -1
        ve = -1
        p += 4
      } else if (c === 0x74) {
        if (!literal(buf, p, end, TRUE)) return null
        ve = p += 4
      } else if (c === 0x66) {
        if (!literal(buf, p, end, FALSE)) return null
        ve = p += 5
      } else {
        ve = numberEnd(buf, p, end)
        if (ve === -1) return null
        p = ve
      }
      b[bi++] = ks
      b[bi++] = ke
      b[bi++] = vs
      b[bi++] = ve
      p = skipSpace(buf, p, end)
      if (buf[p] === 0x2c) { // ,
        p = skipSpace(buf, p + 1, end)
        continue
      }
      if (buf[p] !== 0x7d || p >= end) return null // }
      p = skipSpace(buf, p + 1, end)
      // A repeated key: JSON.parse keeps the last value (maybe null) at the first one's place.
      return p === end && !repeatsKey(buf, b, bi0, bi) ? this.row(buf, bi0, bi) : null
    }
  }

  row (buf, bi0, bi) {
    this.bi = bi
    return new JsonRow(buf, this.b, bi0, (bi - bi0) >> 2)
  }

  grow (bi0, bi) {
    const b = new Int32Array(Math.max(BOUNDS, 2 * (bi - bi0) + 4))
    b.set(this.b.subarray(bi0, bi))
    this.b = b
    this.bi = 0
    return b
  }
}

const NULL = Buffer.from('null')
const TRUE = Buffer.from('true')
const FALSE = Buffer.from('false')

// Up to this many pairs, comparing each key with those before it is cheaper than a Set; past
// it, a Set keeps the check linear (a line of 200k keys took 87 s with the comparisons alone).
const FEW_PAIRS = 16

/** Does any key of the pairs in b[bi0, bi) appear twice? */
function repeatsKey (buf, b, bi0, bi) {
  if (bi - bi0 > 4 * FEW_PAIRS) return repeatsKeyMany(buf, b, bi0, bi)
  for (let j = bi0 + 4; j < bi; j += 4) {
    const s = b[j]
    const len = b[j + 1] - s
    for (let i = bi0; i < j; i += 4) {
      const t = b[i]
      if (b[i + 1] - t !== len || (len !== 0 && buf[t] !== buf[s])) continue
      let x = 1
      while (x < len && buf[t + x] === buf[s + x]) x++
      if (x >= len) return true
    }
  }
  return false
}

/** repeatsKey for many pairs: each key's bytes as a latin1 string (one char a byte) in a Set. */
function repeatsKeyMany (buf, b, bi0, bi) {
  const seen = new Set()
  for (let j = bi0; j < bi; j += 4) {
    const key = buf.latin1Slice(b[j], b[j + 1])
    if (seen.has(key)) return true
    seen.add(key)
  }
  return false
}

function skipSpace (buf, p, end) {
  while (p < end && (buf[p] === SPACE || buf[p] === TAB)) p++
  return p
}

/** The closing quote of a string without escapes or control characters, or -1. */
function stringEnd (buf, p, end) {
  for (; p < end; p++) {
    const c = buf[p]
    if (c === QUOTE) return p
    if (c === BACKSLASH || c < SPACE) return -1
  }
  return -1
}

function literal (buf, p, end, word) {
  if (p + word.length > end) return false
  for (let i = 0; i < word.length; i++) if (buf[p + i] !== word[i]) return false
  return true
}

/**
 * The end of a number whose text String(JSON.parse(text)) gives back unchanged, or -1:
 * -?(0|[1-9][0-9]*)(.[0-9]*[1-9])?, at most 15 digits, no exponent, not -0, and not
 * below 1e-6 (which JS prints with an exponent).
 */
function numberEnd (buf, p, end) {
  const s = p
  if (buf[p] === 0x2d) p++ // -
  const intStart = p
  if (buf[p] === 0x30) {
    p++
  } else {
    while (p < end && buf[p] >= 0x30 && buf[p] <= 0x39) p++
  }
  if (p === intStart) return -1
  let digits = p - intStart
  if (buf[p] === 0x2e) { // .
    const fs = ++p
    while (p < end && buf[p] >= 0x30 && buf[p] <= 0x39) p++
    if (p === fs || buf[p - 1] === 0x30) return -1 // no digits, or a trailing zero
    digits += p - fs
    if (buf[intStart] === 0x30 && p - fs >= 6 && isZeros(buf, fs, fs + 6)) return -1 // < 1e-6
  } else if (buf[intStart] === 0x30 && buf[s] === 0x2d) {
    return -1 // -0
  }
  if (digits > MAX_DIGITS) return -1
  const c = buf[p]
  if (c === 0x65 || c === 0x45 || (c >= 0x30 && c <= 0x39)) return -1 // exponent, or 01
  return p
}

function isZeros (buf, s, e) {
  for (let i = s; i < e; i++) if (buf[i] !== 0x30) return false
  return true
}

module.exports = { JsonRow, FlatScanner, rows }
