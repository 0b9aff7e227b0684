'use strict'

// Cutting an input's decompressed bytes into chunks that end at record boundaries, so
// each chunk can be parsed on its own (the parallel parse, lib/threads/chunks.js; --shard
// for inputs that cannot be sought). Pure: bytes in, chunks out, no I/O, no workers.
//
// NDJSON: a record ends at a line break. CSV/TSV: at a line break outside quotes; a quoted
// field may hold line breaks. The scan follows quotes as csv-parse reads them: a quote
// opens a field only at its start (after a delimiter or a line break); `""` inside is an
// escaped quote; a closing quote is followed by a delimiter, a line break or a CR. Anything
// else is a fault that csv-parse reports (a stray quote in a field, text after a closing
// quote), and in skip mode its record ends at the first line break after the fault: the
// scan does the same, so one stray quote does not leave the rest of a file without a cut
// (quote parity alone would read every line after it as quoted). With relaxQuotes (csv-parse's
// relax_quotes) there is no fault: such a quote is data, and the field goes on unquoted. The scan is indexOf loops
// over quotes and line breaks: a file without quotes costs one indexOf per chunk. A cut
// may still be wrong on malformed input (a lone CR after a closing quote, a delimiter of
// several bytes); the parser of the chunk then fails, and the caller reads from that chunk
// on sequentially.

const { copyBytes } = require('./copy')

const LF = 0x0a
const CR = 0x0d
const QUOTE = 0x22
// Chunks of a --shard share by chunk number (stdin, gzip, a URL): every process reading the
// same stream must cut it the same way, so this size is fixed.
const CHUNK_SIZE = 1024 * 1024
// Chunks of the parallel parse (--chunk-size's default, lib/threads/chunks.js): a chunk in
// flight costs the chunk and its encoded batches (~4x the chunk for a 5-column HSET), kept as
// its worker's output buffers for the rest of the run. With 1 MiB chunks each parse worker
// cost ~40 MB of RSS, with 256 KiB ~15 MB, at the same speed (docs/performance.md "Memory
// with parse workers"). A batch never spans two chunks: a chunk's batches hold its records
// at most (~3,900 of a 5-column CSV of 67-byte rows).
const PARALLEL_CHUNK_SIZE = 256 * 1024
// Where the CSV scan is: outside quotes, inside a quoted field, or past a fault (quotes mean
// nothing until the next line break).
const OUT = 0
const IN = 1
const FAULT = 2

/** Index of `byte` in buf[from, to), or -1. */
function indexIn (buf, byte, from, to) {
  if (from >= to) return -1
  const i = buf.indexOf(byte, from)
  return i === -1 || i >= to ? -1 : i
}

/** LFs in buf[from, to): the lines a chunk spans (one native call per line). */
function countLines (buf, from = 0, to = buf.length) {
  let n = 0
  for (let i = indexIn(buf, LF, from, to); i !== -1; i = indexIn(buf, LF, i + 1, to)) n++
  return n
}

/**
 * Record ends in CSV/TSV bytes given part after part, quotes read as csv-parse reads them
 * (the header comment above). One per scan from a record's start.
 */
class CsvScan {
  /**
   * `delimiter`: as given (none: the format's own, as the reader takes it). `relax`:
   * csv-parse's relax_quotes, where a quote not at a field's start is data and text after
   * a closing quote goes on as the field's data: no fault, quotes outside a quoted field
   * mean nothing until the next field starts.
   */
  constructor (format, delimiter, relax = false) {
    const d = Buffer.from(delimiter ?? (format === 'tsv' ? '\t' : ','))
    this.delimFirst = d[0] // after a closing quote
    this.delimLast = d[d.length - 1] // before an opening quote
    this.single = d.length === 1
    this.fault = relax ? OUT : FAULT // what a quote fault leaves the scan in
    this.state = OUT
    this.quoteLast = false // IN: the last byte scanned is a quote, which the next byte explains
    this.prev = LF // the byte before the next one scanned (a record starts the input)
  }

  /**
   * The first record end (the index of an LF outside quotes) at or after `target` in
   * part[from…], the state updated up to it; -1 when none (the state is then that of the
   * part's end). Parts are given in order, each from where the last call stopped (past
   * the LF it returned). Two indexOf calls a quoted field, one per stretch without quotes
   * (this thread cuts every byte of the input: it is the part of a parallel load that does
   * not scale).
   */
  next (part, from, target) {
    const n = part.length
    const d = this.delimFirst
    let state = this.state
    let p = from
    if (this.quoteLast && p < n) { // the last part ended with a quote inside a quoted field
      this.quoteLast = false
      const c = part[p]
      if (c === QUOTE) p++ // `""`
      else state = c === d || c === LF || c === CR ? OUT : this.fault
    }
    let end = -1
    while (p < n) {
      if (state === IN) {
        const q = part.indexOf(QUOTE, p)
        if (q === -1) break
        if (q + 1 === n) { // an escaped quote or the closing one: the next part says
          this.quoteLast = true
          p = n
          break
        }
        const c = part[q + 1]
        if (c === QUOTE) { // `""`
          p = q + 2
        } else if (c === d && this.single && part[q + 2] === QUOTE) { // "a","b": the next field quoted too
          p = q + 3
        } else {
          state = c === d || c === LF || c === CR ? OUT : this.fault // text after a closing quote: INVALID_CLOSING_QUOTE
          p = q + 1
        }
        continue
      }
      if (state === FAULT) { // quotes mean nothing until the next LF
        const lf = part.indexOf(LF, p)
        if (lf === -1) break
        state = OUT
        if (lf >= target) { end = lf; break }
        p = lf + 1
        continue
      }
      const q = part.indexOf(QUOTE, p)
      const stretch = q === -1 ? n : q // no quote before it: any LF in it ends a record
      if (stretch > target) {
        const lf = part.indexOf(LF, p > target ? p : target)
        if (lf !== -1 && lf < stretch) { end = lf; break }
      }
      if (q === -1) break
      // A quote opens a field only at its start; within one it is INVALID_OPENING_QUOTE.
      const before = q > 0 ? part[q - 1] : this.prev
      state = before === LF || before === this.delimLast ? IN : this.fault
      p = q + 1
    }
    this.state = state
    if (end !== -1) this.prev = LF
    else if (n > from) this.prev = part[n - 1]
    return end
  }
}

/** Whether a format's records may hold quoted line breaks. */
function isQuoted (format) {
  return format === 'csv' || format === 'tsv'
}

class Cutter {
  /**
   * @param {object} o
   * @param {'csv'|'tsv'|'ndjson'} o.format
   * @param {boolean} [o.relaxQuotes] quotes read as csv-parse's relax_quotes reads them
   * @param {number} o.chunkSize a chunk ends at the first record boundary at or after this many bytes
   * @param {number} [o.maxRecordSize] no boundary within maxRecordSize + chunkSize: `overflow`
   * @param {number} [o.offset] absolute offset of the first byte pushed
   * @param {(n: number) => Buffer} [o.alloc] the chunks' memory (a SharedArrayBuffer, to share it with threads)
   */
  constructor ({ format, delimiter, relaxQuotes = false, chunkSize, maxRecordSize = Infinity, offset = 0, alloc = n => Buffer.allocUnsafeSlow(n) }) {
    this.format = format
    this.delimiter = delimiter
    this.relax = relaxQuotes
    this.csv = isQuoted(format) ? new CsvScan(format, delimiter, relaxQuotes) : null
    this.chunkSize = chunkSize
    this.limit = maxRecordSize + chunkSize
    this.offset = offset // absolute offset of the first pending byte
    this.alloc = alloc
    this.index = 0 // of the next chunk
    this.parts = [] // pending bytes, not cut yet
    this.size = 0
    this.scanned = 0 // pending bytes looked at for a boundary (the CSV scan's state is at `scanned`)
    this.overflow = false // no boundary found in `limit` bytes: stop cutting
  }

  /** Take bytes; returns the chunks they completed, in order (often none). */
  push (buf) {
    if (buf.length === 0) return []
    this.parts.push(buf)
    this.size += buf.length
    const out = []
    while (!this.overflow && this.size >= this.chunkSize) {
      const at = this.findCut()
      if (at === -1) {
        if (this.size > this.limit) this.overflow = true
        break
      }
      out.push(this.take(at))
    }
    return out
  }

  /** The input ended: the rest as the last chunk, or null when nothing is left. */
  end () {
    if (this.size === 0 || this.overflow) return null
    return this.take(this.size)
  }

  /**
   * The pending bytes up to their last record boundary as a chunk, or null when no record
   * is whole: an input that pauses (a pipe between writes, a slow download) need not wait
   * for a full chunk before its records go out. The pending bytes start at a record, so a
   * fresh scan finds their boundaries; having read them all, it is the running scan for
   * what is left (no record ends there).
   */
  flush () {
    if (this.overflow || this.size === 0) return null
    const scan = this.csv !== null ? new CsvScan(this.format, this.delimiter, this.relax) : null
    const at = this.lastBoundary(scan)
    if (at <= 0) return null
    const chunk = this.take(at)
    this.csv = scan
    this.scanned = this.size
    return chunk
  }

  /** Pending bytes up to and with the last record end in them, or -1; `scan` (CSV/TSV) reads them all. */
  lastBoundary (scan) {
    if (scan === null) {
      let start = this.size
      for (let k = this.parts.length - 1; k >= 0; k--) {
        const part = this.parts[k]
        start -= part.length
        const i = part.lastIndexOf(LF)
        if (i !== -1) return start + i + 1
      }
      return -1
    }
    let last = -1
    let start = 0
    for (const part of this.parts) {
      for (let i = scan.next(part, 0, 0); i !== -1; i = scan.next(part, i + 1, i + 1)) last = start + i + 1
      start += part.length
    }
    return last
  }

  /** The bytes not cut (after an overflow, or to read them otherwise), taken. */
  rest () {
    const parts = this.parts
    this.parts = []
    this.size = 0
    this.scanned = 0
    return parts
  }

  /** Bytes pending up to the first boundary at or after chunkSize, or -1 (scanning on from `scanned`). */
  findCut () {
    const want = this.chunkSize - 1 // the line break may be the chunk's last byte
    let start = 0
    for (const part of this.parts) {
      const end = start + part.length
      if (end > this.scanned) {
        const from = Math.max(this.scanned, start) - start
        const target = Math.max(want - start, from)
        const i = this.csv !== null ? this.csv.next(part, from, target) : (target < part.length ? part.indexOf(LF, target) : -1)
        if (i !== -1) {
          this.scanned = start + i + 1
          return this.scanned
        }
        this.scanned = end
      }
      start = end
    }
    return -1
  }

  /** The first `at` pending bytes as a chunk of its own memory. */
  take (at) {
    const buf = this.alloc(at)
    const into = { buf, pos: 0 }
    while (into.pos < at) {
      const part = this.parts[0]
      const n = Math.min(part.length, at - into.pos)
      copyBytes(part, 0, n, into)
      if (n === part.length) this.parts.shift()
      else this.parts[0] = part.subarray(n)
    }
    const chunk = { index: this.index++, buf, offset: this.offset }
    this.offset += at
    this.size -= at
    this.scanned = Math.max(0, this.scanned - at)
    return chunk
  }
}

/** The chunks of an async iterable of Buffers (`size`: the chunk size, default 1 MiB). */
async function * cutChunks (bytes, { format, delimiter, relaxQuotes, size = CHUNK_SIZE }) {
  const cutter = new Cutter({ format, delimiter, relaxQuotes, chunkSize: size })
  for await (const buf of bytes) yield * cutter.push(buf)
  const last = cutter.end()
  if (last) yield last
}

module.exports = { Cutter, CsvScan, cutChunks, countLines, isQuoted, CHUNK_SIZE, PARALLEL_CHUNK_SIZE }
