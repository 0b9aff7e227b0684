'use strict'

const { CsvCore } = require('./core')
const { CsvRow } = require('./row')
const { BadOffsets } = require('../utf8')
const { textOf } = require('../text')

// The CSV fast path. csv-parse turns every field into a JS string, which the encoder
// then turns back into bytes: on a 5-column file that round trip costs as much as the
// parse itself, and csv-parse offers no way to get a field's byte range instead. This
// tokenizer reads the well-formed subset of CSV that nearly every file is made of
// (a one-byte delimiter, `"` quotes with `""` inside, LF or CRLF line ends, mixed freely
// as CsvCore accepts them; with relaxQuotes, quotes inside unquoted fields kept as data) and hands out records as byte ranges (CsvRow), which the
// mapper copies straight into RESP.
//
// It never decides a hard case. A record it is not sure of (a stray or unclosed quote,
// text after a closing quote, a lone CR, a ragged row, invalid UTF-8, a record near
// maxRecordSize) is handed to CsvCore (csv-parse) in the state the fast path reached:
// header, line, field count. csv-parse reads that one record and reports or skips it
// exactly as it would have on its own; the fast path then goes on after it, so one bad
// row does not leave the rest of a file to the slower parser. The differential test
// (test/csv-fast.test.js) holds the two to the same output.

const QUOTE = 0x22
const LF = 10
const CR = 13
const INCOMPLETE = -1
const FALLBACK = -2
const BOUNDS = 16384

/** Can the fast path read this dialect? A one-byte ASCII delimiter. */
function fastDelimiter (delimiter) {
  if (typeof delimiter !== 'string' || delimiter.length !== 1) return -1
  const c = delimiter.charCodeAt(0)
  return c < 128 && c !== QUOTE && c !== LF && c !== CR ? c : -1
}

class FastCsvCore {
  constructor (o) {
    this.o = o // CsvCore's options, for the fallback
    this.header = o.header
    this.delim = fastDelimiter(o.delimiter)
    this.max = o.maxRecordSize
    this.raw = o.raw
    this.relax = Boolean(o.relaxQuotes) // a quote inside an unquoted field is data (csv-parse's relax_quotes)
    this.bad = o.bad || new BadOffsets()
    const resume = o.resume // reading from the middle of the input (reader.js `start`)
    this.cols = resume ? resume.columns : null
    this.expected = resume && resume.expected > 0 ? resume.expected : o.fields || -1 // fields per record: the header's, --columns' or the first record's
    this.tail = null // bytes of a record not complete yet
    this.parts = [] // chunks received after the tail, not scanned yet
    this.pending = 0 // bytes in tail and parts
    this.nextScan = 0 // scan again once `pending` reaches this
    this.base = o.base // absolute offset of tail[0] (or of the next chunk)
    this.line = resume ? resume.line : 1 // line of the next record's first byte
    this.b = new Int32Array(BOUNDS)
    this.bi = 0
    this.fallback = null // the CsvCore reading a record handed over, until it is done
  }

  get columns () {
    return this.fallback !== null ? this.fallback.columns : this.cols
  }

  /**
   * A record cut by the end of a chunk is scanned again from its start once more bytes
   * come. A long one (a multi-MB field) is scanned again only each time its bytes have
   * doubled, so it costs linear time, not quadratic.
   */
  write (chunk, sink) {
    if (this.fallback !== null) {
      const rest = this.feed(chunk, false, sink)
      if (rest !== null) this.scan(rest, false, sink)
      return
    }
    if (this.tail === null) return this.scan(chunk, false, sink)
    this.parts.push(chunk)
    this.pending += chunk.length
    if (this.pending < this.nextScan && this.pending <= this.max) return
    this.scan(this.takePending(), false, sink)
  }

  end (sink) {
    if (this.fallback !== null) {
      const rest = this.feed(null, true, sink)
      if (rest !== null) this.scan(rest, true, sink)
    } else if (this.tail !== null) this.scan(this.takePending(), true, sink)
  }

  takePending () {
    const buf = Buffer.concat([this.tail, ...this.parts], this.pending)
    this.tail = null
    this.parts = []
    this.pending = 0
    return buf
  }

  /**
   * Emit every complete record of `buf`; keep the rest as the tail. A record csv-parse must
   * read is handed over with the bytes after it; once it is read, the scan goes on after it
   * (a loop, not a call deeper: a chunk may hold thousands of bad rows).
   */
  scan (buf, final, sink) {
    let n = buf.length
    let p = 0
    for (;;) {
      let next = 0
      while (p < n) {
        next = this.record(buf, p, final, sink)
        if (next < 0) break
        p = next
      }
      if (next !== FALLBACK && !(p < n && n - p > this.max)) break
      this.base += p
      const rest = this.handOver(buf.subarray(p), final, sink)
      if (rest === null) return // csv-parse still reads the record: later bytes go to it
      buf = rest
      n = buf.length
      p = 0
    }
    if (p < n) {
      this.tail = buf.subarray(p)
      this.pending = n - p
      this.nextScan = 2 * this.pending
    }
    this.base += p
  }

  /** Fields per record once known. */
  fieldsPerRecord () {
    const expected = this.fallback ? this.fallback.expected : this.expected
    return expected > 0 ? expected : null
  }

  /**
   * Hand `bytes` (the record at this.base, and what follows) to csv-parse, with the state
   * reached so far; what came after the record, or null while it is not read to its end.
   */
  handOver (bytes, final, sink) {
    this.fallback = new CsvCore({
      ...this.o,
      base: this.base,
      bad: this.bad,
      resume: { columns: this.cols, line: this.line, expected: this.expected },
      once: true
    })
    return this.feed(bytes, final, sink)
  }

  /**
   * More bytes (null: none) for the record csv-parse reads. Once it is read, the fast path
   * takes the state csv-parse reached and the bytes after the record (returned), else null.
   */
  feed (chunk, final, sink) {
    const f = this.fallback
    if (chunk !== null) f.write(chunk, sink)
    if (final && !f.done) f.end(sink)
    if (!f.done) return null
    this.fallback = null
    const rest = f.rest()
    this.cols = f.columns
    this.expected = f.expected
    this.line = rest.line
    this.base = rest.base
    return rest.buf
  }

  /**
   * One record (or empty line) starting at `s`: returns where the next one starts,
   * INCOMPLETE if `buf` ends inside it, or FALLBACK if csv-parse must read it.
   */
  record (buf, s, final, sink) {
    const n = buf.length
    const d = this.delim
    const relax = this.relax
    let p = s
    let lines = 0 // line breaks inside quoted fields
    let c = buf[p]
    if (c === LF || c === CR) return this.emptyLine(buf, p, final)
    let b = this.b
    let bi0 = this.bi
    let bi = bi0
    for (;;) {
      if (bi + 2 > b.length) {
        b = this.grow(bi0, bi)
        bi -= bi0
        bi0 = this.bi = 0
      }
      if (c === QUOTE) {
        const fs = ++p
        let escaped = false
        for (;;) {
          if (p >= n) return final ? FALLBACK : INCOMPLETE
          c = buf[p]
          if (c === QUOTE) {
            if (p + 1 >= n && !final) return INCOMPLETE
            if (buf[p + 1] !== QUOTE) break
            escaped = true
            p += 2
            continue
          }
          if (c === LF) lines++
          p++
        }
        b[bi++] = escaped ? -fs - 1 : fs
        b[bi++] = p
        p++ // past the closing quote
        if (p >= n) {
          if (!final) return INCOMPLETE
          break
        }
        c = buf[p]
        if (c === d) { c = buf[++p]; continue }
        if (c === LF || c === CR) break
        return FALLBACK // text after a closing quote
      }
      const fs = p
      while (p < n) {
        c = buf[p]
        if (c === d || c === LF || c === CR) break
        if (c === QUOTE && !relax) return FALLBACK // a quote inside an unquoted field
        p++
      }
      b[bi++] = fs
      b[bi++] = p
      if (p >= n) {
        if (!final) return INCOMPLETE
        break
      }
      if (c !== d) break
      c = buf[++p]
    }
    // p: at the line end, or at n with `final`.
    let end = p // the record's text without its line end
    if (p < n) {
      const next = this.lineEnd(buf, p, final)
      if (next < 0) return next
      p = next
    }
    const nf = (bi - bi0) >> 1
    if (p - s > this.max) return FALLBACK
    if (this.bad.peek() < this.base + p) return FALLBACK // invalid UTF-8 inside
    if (this.cols === null && this.header) {
      this.cols = new CsvRow(buf, b, bi0, nf).toArray()
      this.expected = nf
    } else {
      if (this.expected === -1) this.expected = nf
      else if (nf !== this.expected) return FALLBACK
      this.bi = bi
      sink.add(new CsvRow(buf, b, bi0, nf), this.line, this.base + s, this.raw ? textOf(buf, s, end) : undefined) // null: too long for a string
    }
    this.line += lines + 1
    return p
  }

  /** An empty line (skipped, as csv-parse does): where the next record starts. */
  emptyLine (buf, p, final) {
    const next = this.lineEnd(buf, p, final)
    if (next >= 0) this.line++
    return next
  }

  /**
   * Past the line end at `p`, LF or CRLF (each line may end either way), or INCOMPLETE when
   * a CR is the last byte so far. A lone CR is csv-parse's to report (FALLBACK): at the end
   * of the input too, where it is not a line end either.
   */
  lineEnd (buf, p, final) {
    if (buf[p] === LF) return p + 1
    if (p + 1 >= buf.length) return final ? FALLBACK : INCOMPLETE
    return buf[p + 1] === LF ? p + 2 : FALLBACK
  }

  /** A fresh bounds table, with the record started at `bi0` moved to its front. */
  grow (bi0, bi) {
    const b = new Int32Array(Math.max(BOUNDS, 2 * (bi - bi0) + 2))
    b.set(this.b.subarray(bi0, bi))
    this.b = b
    return b
  }
}

module.exports = { FastCsvCore, fastDelimiter }
