'use strict'

const { isUtf8 } = require('node:buffer')

// Invalid UTF-8 would reach Redis as U+FFFD, silently: the readers find it instead.
// Each chunk is checked with buffer.isUtf8 (native, fast); only a chunk that fails is
// walked byte by byte to find where. A multi-byte character split between chunks is
// carried over: the few trailing bytes of an incomplete sequence are checked together
// with the start of the next chunk.

const MAX_REPORTED = 10000 // offsets kept per chunk: past that the input is not UTF-8 at all

/** Length of the sequence a lead byte starts (0: not a valid lead byte). */
function seqLength (b) {
  if (b < 0x80) return 1
  if (b >= 0xc2 && b <= 0xdf) return 2
  if (b >= 0xe0 && b <= 0xef) return 3
  if (b >= 0xf0 && b <= 0xf4) return 4
  return 0
}

/** Is buf[i, i+n) one valid encoded character (overlongs and surrogates excluded)? */
function validSeq (buf, i, n) {
  const b0 = buf[i]
  for (let k = 1; k < n; k++) if ((buf[i + k] & 0xc0) !== 0x80) return false
  if (n === 3) {
    const b1 = buf[i + 1]
    if (b0 === 0xe0 && b1 < 0xa0) return false
    if (b0 === 0xed && b1 > 0x9f) return false
  } else if (n === 4) {
    const b1 = buf[i + 1]
    if (b0 === 0xf0 && b1 < 0x90) return false
    if (b0 === 0xf4 && b1 > 0x8f) return false
  }
  return true
}

/** Offsets (relative to buf) where an invalid sequence starts, in buf[0, end). */
function invalidAt (buf, end) {
  const out = []
  let i = 0
  while (i < end && out.length < MAX_REPORTED) {
    const n = seqLength(buf[i])
    if (n === 1) { i++; continue }
    if (n !== 0 && i + n <= end && validSeq(buf, i, n)) { i += n; continue }
    out.push(i)
    i++
  }
  return out
}

/** How many trailing bytes of buf are an incomplete (so far valid) sequence: 0 to 3. */
function incompleteTail (buf) {
  const n = buf.length
  for (let k = 1; k <= 3 && k <= n; k++) {
    const b = buf[n - k]
    if ((b & 0xc0) === 0x80) continue // a continuation byte: look further back
    const len = seqLength(b)
    return len > k ? k : 0
  }
  return 0
}

class Utf8Check {
  constructor () {
    this.tail = null // incomplete sequence at the end of the last chunk
    this.tailAt = 0
  }

  /**
   * Checks one chunk starting at absolute offset `at`; returns the absolute offsets of
   * invalid sequences (usually an empty array).
   */
  check (chunk, at) {
    let buf = chunk
    let start = at
    if (this.tail !== null) {
      buf = Buffer.concat([this.tail, chunk])
      start = this.tailAt
      this.tail = null
    }
    if (isUtf8(buf)) return []
    const keep = incompleteTail(buf)
    const end = buf.length - keep
    if (keep !== 0) {
      this.tail = Buffer.from(buf.subarray(end))
      this.tailAt = start + end
      if (isUtf8(buf.subarray(0, end))) return []
    }
    return invalidAt(buf, end).map(i => start + i)
  }

  /** At the end of input: an incomplete sequence left over is invalid. */
  end () {
    if (this.tail === null) return []
    this.tail = null
    return [this.tailAt]
  }
}

/** `a lone UTF-16 surrogate \ud800` for the first one in a string that is not well formed. */
function describeLoneSurrogate (s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0xd800 || c > 0xdfff) continue
    const next = s.charCodeAt(i + 1)
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) { i++; continue }
    return `a lone UTF-16 surrogate \\u${c.toString(16)}`
  }
  return 'a lone UTF-16 surrogate'
}

module.exports = { describeLoneSurrogate, Utf8Check, invalidAt }

/**
 * The invalid offsets found so far, oldest first, consumed by a reader core as it emits
 * records: take(start, end) says whether a record's bytes [start, end) hold one.
 */
class BadOffsets {
  constructor () {
    this.list = []
    this.i = 0
  }

  add (offsets) {
    if (offsets.length === 0) return
    if (this.i === this.list.length) { this.list = offsets; this.i = 0 } else this.list.push(...offsets)
  }

  /** The next invalid offset not taken yet, or Infinity. */
  peek () {
    return this.i < this.list.length ? this.list[this.i] : Infinity
  }

  /** The first invalid offset in [start, end), or -1; offsets before `end` are dropped. */
  take (start, end) {
    if (this.i === this.list.length) return -1
    let found = -1
    while (this.i < this.list.length && this.list[this.i] < end) {
      const at = this.list[this.i++]
      if (found === -1 && at >= start) found = at
    }
    return found
  }
}

/**
 * What an invalid-UTF-8 message ends with: the input is in another encoding (an export in
 * Latin-1 or Windows-1252, most often), and a command line that converts it on the way in,
 * for the input as named (`file`: a path, a URL, `<stdin>`). Converting outside, rather than
 * an --encoding option, keeps every byte offset pipeload reports (checkpoints, --shard
 * ranges, rejects) an offset of the bytes it read, and guesses no encoding for anyone.
 */
function invalidUtf8Hint (file, format) {
  const convert = 'iconv -f latin1 -t utf-8'
  const into = `pipeload import - --format ${format} …`
  const name = String(file || '')
  let source
  if (/^https?:\/\//i.test(name)) source = `curl -sL ${shellQuote(name)} | ${convert}`
  else if (name === '' || /^<.*>$/.test(name)) source = `… | ${convert}`
  else if (/\.gz$/i.test(name)) source = `gunzip -c ${shellQuote(name)} | ${convert}`
  else source = `${convert} ${shellQuote(name)}`
  return `; the input is not UTF-8: convert it first, e.g. ${source} | ${into} (-f cp1252 for a Windows export)`
}

function shellQuote (s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`
}

module.exports.BadOffsets = BadOffsets
module.exports.invalidUtf8Hint = invalidUtf8Hint
module.exports.shellQuote = shellQuote
