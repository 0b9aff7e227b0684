'use strict'

// Cutting a byte stream into chunks at record boundaries, for whoever wants to hand whole
// records to separate parsers (--shard's chunk numbers; the parallel parse). Pure: bytes in,
// chunks { index, buf, offset } out, no I/O.
//
// A record ends at an LF outside quotes (CRLF: the CR is the record's, the LF ends it). For
// CSV/TSV, whether an LF is inside a quoted field is known only from the quotes before it:
// each `"` toggles the state, an escaped `""` toggles it twice. That holds for every input
// csv-parse accepts (a quote in the middle of an unquoted field is an error there), and costs
// one native indexOf per quote, so it is cheap where quotes are few. NDJSON cannot hold a raw
// LF inside a string: every LF ends a line.
//
// Each chunk ends at the first record end at or after `size` bytes from its start: the cuts
// depend on the bytes only, not on how the input arrives in pieces, so every process reading
// the same input cuts it the same way.

const LF = 0x0a
const QUOTE = 0x22
const CHUNK_SIZE = 1024 * 1024

/** Index of `byte` in buf[from, to), or -1. */
function indexIn (buf, byte, from, to) {
  if (from >= to) return -1
  const i = buf.indexOf(byte, from)
  return i === -1 || i >= to ? -1 : i
}

/** The quote state after buf[from, to), starting `inQuote`. */
function quoteState (buf, from, to, inQuote) {
  let i = indexIn(buf, QUOTE, from, to)
  while (i !== -1) {
    inQuote = !inQuote
    i = indexIn(buf, QUOTE, i + 1, to)
  }
  return inQuote
}

/**
 * The first record end in buf[from, to) (the offset just past an LF outside quotes) and the
 * quote state there; `end` -1 when there is none, `inQuote` then the state at `to`.
 */
function recordEnd (buf, from, to, inQuote, quoted) {
  let i = from
  while (i < to) {
    if (inQuote) {
      const q = indexIn(buf, QUOTE, i, to)
      if (q === -1) return { end: -1, inQuote: true }
      inQuote = false
      i = q + 1
      continue
    }
    const lf = indexIn(buf, LF, i, to)
    const q = quoted ? indexIn(buf, QUOTE, i, lf === -1 ? to : lf) : -1
    if (q === -1) return { end: lf === -1 ? -1 : lf + 1, inQuote: false }
    inQuote = true
    i = q + 1
  }
  return { end: -1, inQuote }
}

/** LFs in buf[from, to): the lines a chunk spans (one native call per line). */
function countLines (buf, from = 0, to = buf.length) {
  let n = 0
  for (let i = indexIn(buf, LF, from, to); i !== -1; i = indexIn(buf, LF, i + 1, to)) n++
  return n
}

/** Whether a format's records may hold quoted line breaks. */
function isQuoted (format) {
  return format === 'csv' || format === 'tsv'
}

/**
 * Feed it bytes in order with push(); it returns the chunks completed so far, and end() the
 * rest. `offset`: the chunk's first byte, counted from the first byte pushed.
 */
class Cutter {
  constructor ({ format, size = CHUNK_SIZE }) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer, got ${size}`)
    this.quoted = isQuoted(format)
    this.size = size
    this.inQuote = false
    this.pieces = [] // the current chunk's bytes so far
    this.have = 0 // their length
    this.index = 0
    this.offset = 0
  }

  push (buf) {
    const out = []
    let start = 0 // the current chunk's first byte in buf
    let pos = 0 // bytes before pos are scanned
    while (pos < buf.length) {
      // Before the chunk's last `size` byte no LF ends it: only the quote state matters there.
      const target = pos + Math.max(0, this.size - 1 - this.have)
      if (target >= buf.length) {
        if (this.quoted) this.inQuote = quoteState(buf, pos, buf.length, this.inQuote)
        this.have += buf.length - pos
        break
      }
      if (this.quoted) this.inQuote = quoteState(buf, pos, target, this.inQuote)
      const r = recordEnd(buf, target, buf.length, this.inQuote, this.quoted)
      if (r.end === -1) {
        this.inQuote = r.inQuote
        this.have += buf.length - pos
        break
      }
      this.pieces.push(buf.subarray(start, r.end))
      out.push(this.emit())
      this.inQuote = false
      start = pos = r.end
    }
    if (start < buf.length) this.pieces.push(buf.subarray(start))
    return out
  }

  /** The last chunk (the input's tail, which need not end with a line break), if any. */
  end () {
    return this.pieces.length ? [this.emit()] : []
  }

  emit () {
    const buf = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces)
    const chunk = { index: this.index++, buf, offset: this.offset }
    this.offset += buf.length
    this.pieces = []
    this.have = 0
    return chunk
  }
}

/** The chunks of an async iterable of Buffers. */
async function * cutChunks (bytes, options) {
  const cutter = new Cutter(options)
  for await (const buf of bytes) yield * cutter.push(buf)
  yield * cutter.end()
}

module.exports = { Cutter, cutChunks, recordEnd, quoteState, countLines, isQuoted, CHUNK_SIZE }
