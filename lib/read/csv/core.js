'use strict'

const { Parser } = require('csv-parse')
const { PipeloadError, where } = require('../../errors')
const { BadOffsets, invalidUtf8Hint } = require('../utf8')
const { textOf, isStringTooLong, stringTooLong } = require('../text')

const noop = () => {}

/**
 * CSV/TSV parsing on top of csv-parse's pure core (`Parser#api`: the same
 * `parse(buf, end, push, close)` its Transform calls), fed chunk by chunk, without a
 * stream and one push per record in between.
 *
 * Positions: csv-parse reports, when a record is pushed, the byte offset just past its
 * record delimiter (`info.bytes`) and how many empty lines it skipped (`info.empty_lines`),
 * so a record starts at the previous record's end plus the skipped empty lines. Its
 * `info.lines` counts a CRLF inside a quoted field twice, so lines are counted here
 * instead: line breaks between consecutive record starts, found with Buffer#indexOf
 * on the chunks still covering the current record (about one native call per line).
 *
 * Line ends: LF and CRLF, mixed freely in one file (`record_delimiter: ['\n', '\r\n']`,
 * not csv-parse's discovery, which fixes one kind from the first line and reads the other
 * as data: `1,a\r` in an LF file). A lone CR outside quotes is then data to csv-parse; it is
 * refused here as bad input (loneCr), and so are classic Mac files, whose every line ends so.
 * Field counts are checked here too (not by csv-parse), so a lone CR that also shifts the
 * fields is reported as what it is.
 */
const LF = 10
const CR = 13
const QUOTE = 0x22
const RECORD_DELIMITERS = ['\n', '\r\n']

// csv-parse errors after which skip mode can go on: the bad record ends at the first line
// break after the error, and parsing restarts there. A quote left open at the end of the
// input, or a record over maxRecordSize, leaves no place to restart: fatal in every mode.
const SKIPPABLE = new Set(['INVALID_OPENING_QUOTE', 'CSV_INVALID_CLOSING_QUOTE'])

class CsvCore {
  /**
   * `resume` ({ columns, line, expected }): start mid-file, in the state
   * the fast path (fast.js) reached when it handed over. `once`: read one record (or
   * the header) and stop, `done` then true; `rest()` gives back what came after it.
   */
  constructor ({ file, delimiter, header, fields = null, maxRecordSize, base, skip = false, raw = false, bad = null, resume = null, once = false, relaxQuotes = false }) {
    this.file = file
    this.header = header
    this.columns = resume ? resume.columns : null
    this.base = base // absolute offset of the first byte this parser sees (after a BOM)
    this.delimiter = delimiter
    this.max = maxRecordSize
    this.skip = skip // skip mode: a malformed record is rejected (sink.reject) and parsing goes on
    this.raw = raw // hand each record's input text to the sink
    this.relax = relaxQuotes // csv-parse's relax_quotes: a quote not opening a field is data
    this.bad = bad || new BadOffsets() // invalid UTF-8 found by the reader
    this.fields = fields // fields per record named by --columns (no header)
    this.expected = resume && resume.expected > 0 ? resume.expected : fields || -1 // fields per record (checked in lengthError)
    this.skipping = null // { start, line, err } while looking for the end of a bad record
    this.sink = null
    this.once = once
    this.done = false // `once`: the record is read, accepted or rejected
    this.newParser(0)

    // Positions, relative to the first byte given to csv-parse.
    this.prevEnd = 0 // where the last record (header included) ended
    this.prevEmpty = 0 // info.empty_lines when it ended
    // The first CR at or after crFrom (-1: none up to crTo), so each byte is searched once.
    this.cr = -1
    this.crFrom = 0
    this.crTo = 0

    // Line counting: chunks from `cur` onwards, `line` is the line at `cur`.
    this.chunks = []
    this.ci = 0
    this.received = 0
    this.cur = 0
    this.line = resume ? resume.line : 1
    this.nl = -1 // position of the next line break at or after `cur` in chunks[ci]

    this.push = (record) => this.onRecord(record)
  }

  /** A fresh csv-parse parser whose byte 0 is our relative position `at` (after a skipped record). */
  newParser (at) {
    this.api = new Parser({
      delimiter: this.delimiter,
      skip_empty_lines: true,
      max_record_size: this.max,
      relax_column_count: true, // lengthError checks, after loneCr
      relax_quotes: this.relax,
      record_delimiter: RECORD_DELIMITERS,
      // `once`: csv-parse stops after the record. Not only to hand back early: it takes its
      // first record's field count as the expected one and builds an error object (message,
      // options copied) for every record of another length, even relaxed; started at a
      // ragged row, that cost ~40 µs for each good record after it (1M rows: 1.3 → 43 s).
      to: this.once ? 1 : undefined
    }).api
    this.info = this.api.info
    this.apiBase = at
  }

  write (chunk, sink) {
    this.chunks.push({ buf: chunk, start: this.received })
    this.received += chunk.length
    this.sink = sink
    let buf = chunk
    if (this.skipping !== null) buf = this.continueSkip(chunk.length)
    while (buf !== null && !this.done) {
      const err = this.parse(buf, false)
      if (err === undefined) break
      buf = this.failed(err)
    }
    if (this.ci !== 0) {
      this.chunks.splice(0, this.ci)
      this.ci = 0
    }
  }

  end (sink) {
    this.sink = sink
    let buf = null // bytes after a bad record, still to parse
    while (!this.done) {
      if (this.skipping !== null) {
        this.endSkip(this.received, this.received) // the bad record runs to the end
        return
      }
      const err = this.parse(buf ?? undefined, buf === null)
      if (err !== undefined) buf = this.failed(err)
      else if (buf !== null) buf = null
      else return
    }
  }

  /**
   * csv-parse on more bytes. A field longer than a string can be makes it throw V8's
   * ERR_STRING_TOO_LONG from inside: the record's failure, fatal in every mode (as a record
   * over maxRecordSize is), since csv-parse cannot say where that record ends.
   */
  parse (buf, end) {
    try {
      return this.api.parse(buf, end, this.push, noop)
    } catch (err) {
      if (!isStringTooLong(err)) throw err
      const start = this.recordStart()
      this.advance(start)
      throw stringTooLong({ file: this.file, line: this.line, offset: this.base + start }, 'a field of this record')
    }
  }

  /** Start of the record being parsed: after the last one and any skipped empty lines (each an LF or a CRLF). */
  recordStart () {
    let p = this.prevEnd
    for (let k = this.info.empty_lines - this.prevEmpty; k > 0; k--) p += this.byteAt(p) === CR ? 2 : 1
    return p
  }

  /** Fields per record once known (the header's, --columns' or the first record's), else null. */
  fieldsPerRecord () {
    return this.expected > 0 ? this.expected : null
  }

  /** A csv-parse error: thrown, or in skip mode the record is rejected and parsing resumes. */
  failed (err) {
    if (!this.skip || !SKIPPABLE.has(err.code) || (this.header && this.columns === null)) throw this.toError(err)
    const error = this.toError(err)
    const start = error.offset - this.base
    const at = this.errorPosition(start)
    const nl = this.indexOf(LF, at)
    this.skipping = { start, error }
    this.checkSkipSize(nl === -1 ? this.received : nl)
    if (nl === -1) return null
    return this.endSkip(nl, nl + 1)
  }

  /** More bytes while skipping: the rest of the chunk after the bad record's line break, or null. */
  continueSkip (length) {
    // Only the new chunk: earlier ones were searched (a long line in small chunks stays linear).
    const c = this.chunks[this.chunks.length - 1]
    const i = c.buf.indexOf(LF, c.buf.length - length)
    const nl = i === -1 ? -1 : c.start + i
    this.checkSkipSize(nl === -1 ? this.received : nl)
    if (nl === -1) return null
    return this.endSkip(nl, nl + 1)
  }

  /** A bad record is kept in memory until its end: over maxRecordSize, that is fatal too. */
  checkSkipSize (end) {
    if (end - this.skipping.start > this.max) {
      const e = this.skipping.error
      throw new PipeloadError('PIPELOAD_RECORD_TOO_LARGE',
        `${where(this.file, e.line)}: malformed record longer than maxRecordSize (${this.max} bytes): ${e.message.slice(e.message.indexOf(': ') + 2)}`,
        { file: this.file, line: e.line, offset: e.offset })
    }
  }

  /**
   * The bad record ends at `end` (its line break), parsing restarts at `next`: reject it,
   * then a fresh parser gets the bytes from `next` on (returned; null when none).
   */
  endSkip (end, next) {
    const { start, error } = this.skipping
    this.skipping = null
    error.raw = this.text(start, end)
    this.sink.reject(error)
    this.prevEnd = next
    this.prevEmpty = 0
    if (this.once) {
      this.done = true
      return null
    }
    this.newParser(next)
    return next < this.received ? this.bytes(next, this.received) : null
  }

  /**
   * `once`, when done: the bytes received after the record, where they start in the input
   * and their first line; a reader goes on from there.
   */
  rest () {
    this.advance(this.prevEnd)
    return { buf: this.bytes(this.prevEnd, this.received), base: this.base + this.prevEnd, line: this.line }
  }

  /**
   * Where in the record starting at `start` csv-parse found a quote error (csv-parse does not
   * say): the record is walked the way csv-parse reads it. `start` when not found.
   */
  errorPosition (start) {
    const b = this.bytes(start, this.received)
    const d = Buffer.from(this.delimiter)
    const isDelim = i => b[i] === d[0] && (d.length === 1 || b.subarray(i, i + d.length).equals(d))
    const isLineEnd = i => b[i] === LF || (b[i] === CR && b[i + 1] === LF)
    let i = 0
    let fieldStart = true
    while (i < b.length) {
      const c = b[i]
      if (fieldStart && c === QUOTE) {
        i++
        while (i < b.length && !(b[i] === QUOTE && b[i + 1] !== QUOTE)) i += b[i] === QUOTE ? 2 : 1
        i++ // past the closing quote
        if (i >= b.length) break
        if (isDelim(i)) { i += d.length; continue }
        if (isLineEnd(i)) break
        return start + i // a closing quote followed by other text (a lone CR too)
      }
      if (c === QUOTE) return start + i // a quote inside an unquoted field
      if (isDelim(i)) { i += d.length; fieldStart = true; continue }
      if (isLineEnd(i)) break
      fieldStart = false
      i++
    }
    return start
  }

  /** Relative position of the first `byte` at or after `from` in the bytes received, or -1. */
  indexOf (byte, from) {
    for (let k = this.ci; k < this.chunks.length; k++) {
      const c = this.chunks[k]
      if (c.start + c.buf.length <= from) continue
      const i = c.buf.indexOf(byte, Math.max(0, from - c.start))
      if (i !== -1) return c.start + i
    }
    return -1
  }

  /** The bytes received in [from, to) (relative positions still held in `chunks`). */
  bytes (from, to) {
    const parts = []
    for (let k = this.ci; k < this.chunks.length; k++) {
      const c = this.chunks[k]
      const s = Math.max(from, c.start)
      const e = Math.min(to, c.start + c.buf.length)
      if (s < e) parts.push(c.buf.subarray(s - c.start, e - c.start))
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts)
  }

  /** A record's input text without its line break (null: longer than a string can be). */
  text (from, to) {
    const b = this.bytes(from, to)
    let n = b.length
    if (n > 0 && b[n - 1] === 10) n--
    if (n > 0 && b[n - 1] === 13) n--
    return textOf(b, 0, n)
  }

  onRecord (record) {
    const start = this.recordStart()
    this.advance(start)
    const end = this.prevEnd = this.apiBase + this.info.bytes
    this.prevEmpty = this.info.empty_lines
    this.done = this.once
    const bad = this.bad.take(this.base + start, this.base + end)
    if (this.columns === null && this.header) {
      const err = bad !== -1 ? this.invalidUtf8(bad, start, end) : this.loneCr(start, end)
      if (err !== null) throw err
      this.columns = record
      return
    }
    const err = bad !== -1 ? this.invalidUtf8(bad, start, end) : this.loneCr(start, end) || this.lengthError(record, start, end)
    if (err !== null) return this.reject(err)
    this.sink.add(record, this.line, this.base + start, this.raw ? this.text(start, end) : undefined)
  }

  /** A record with more or fewer fields than the header (or than the first record, without one), or null. */
  lengthError (record, start, end) {
    if (this.expected === -1) this.expected = this.columns !== null ? this.columns.length : record.length
    if (record.length === this.expected) return null
    const what = this.columns !== null ? `the header has ${this.expected} fields`
      : this.fields ? `--columns names ${this.expected} fields` : `expect ${this.expected}`
    return this.inputError(`Invalid Record Length: ${what}, got ${record.length}`, start, end)
  }

  /**
   * A lone CR outside quotes in the record [start, end), as an error, or null. Nearly every
   * record has no CR before its own line end, which one cached search tells; only then is
   * the record walked the way csv-parse read it.
   */
  loneCr (start, end) {
    const cr = this.nextCr(start)
    if (cr === -1 || cr >= end || (cr === end - 2 && this.byteAt(end - 1) === LF)) return null
    const b = this.bytes(start, end)
    const d = Buffer.from(this.delimiter)
    let field = 0
    let quoted = false
    let fieldStart = true
    // csv-parse accepted the record: a quote opens a field at its start and the next lone one
    // closes it (with relaxQuotes, text may follow it as data); any other quote is data.
    for (let i = 0; i < b.length; i++) {
      const c = b[i]
      if (quoted) {
        if (c === QUOTE) {
          if (b[i + 1] === QUOTE) i++
          else quoted = false
        }
      } else if (c === QUOTE && fieldStart) {
        quoted = true
        fieldStart = false
      } else if (c === CR && b[i + 1] !== LF) {
        return this.inputError(loneCrText(this.fieldName(field)), start, end)
      } else if (c === d[0] && (d.length === 1 || b.subarray(i, i + d.length).equals(d))) {
        field++
        i += d.length - 1
        fieldStart = true
      } else {
        fieldStart = false
      }
    }
    return null
  }

  /** Relative position of the first CR at or after `from` in the bytes received, or -1. */
  nextCr (from) {
    if (this.crFrom <= from && (this.cr >= from || (this.cr === -1 && this.crTo === this.received))) return this.cr
    // Nothing up to crTo: only the bytes received since then are new.
    const at = this.cr === -1 && this.crFrom <= from ? Math.max(from, this.crTo) : from
    this.cr = this.indexOf(CR, at)
    this.crFrom = from
    this.crTo = this.received
    return this.cr
  }

  /** The byte at relative position `pos` (still held in `chunks`), or -1. */
  byteAt (pos) {
    for (let k = this.ci; k < this.chunks.length; k++) {
      const c = this.chunks[k]
      if (pos < c.start + c.buf.length) return pos >= c.start ? c.buf[pos - c.start] : -1
    }
    return -1
  }

  /** `field 2 "name"`: a field by its number, and its column name when there is a header. */
  fieldName (k) {
    const name = this.columns !== null && this.columns[k] !== undefined ? ` ${JSON.stringify(this.columns[k])}` : ''
    return `field ${k + 1}${name}`
  }

  /** Bad input in the record [start, end) at the current line. */
  inputError (reason, start, end) {
    return new PipeloadError('PIPELOAD_INPUT_INVALID', `${where(this.file, this.line)}: ${reason}`,
      { file: this.file, line: this.line, offset: this.base + start, raw: this.text(start, end) })
  }

  invalidUtf8 (at, start, end) {
    const format = this.delimiter === '\t' ? 'tsv' : 'csv'
    const err = this.inputError(`invalid UTF-8 at byte ${at} (column ${at - this.base - start + 1} of the record)${invalidUtf8Hint(this.file, format)}`, start, end)
    err.invalidAt = at
    return err
  }

  /** Skip mode: reject a record; abort mode: throw. */
  reject (err) {
    if (!this.skip) throw err
    this.sink.reject(err)
  }

  /** Moves the line cursor to `to`, counting line breaks on the way. */
  advance (to) {
    const chunks = this.chunks
    while (this.cur < to) {
      const c = chunks[this.ci]
      const cEnd = c.start + c.buf.length
      if (this.nl < this.cur) {
        const i = c.buf.indexOf(LF, this.cur - c.start)
        this.nl = i === -1 ? cEnd : c.start + i
      }
      const stop = to < cEnd ? to : cEnd
      while (this.nl < stop) {
        this.line++
        const i = c.buf.indexOf(LF, this.nl + 1 - c.start)
        this.nl = i === -1 ? cEnd : c.start + i
      }
      this.cur = stop
      if (stop === cEnd) {
        this.ci++
        this.nl = -1
      }
    }
  }

  toError (err) {
    const start = this.recordStart()
    this.advance(start)
    const line = this.line
    const offset = this.base + start
    const code = err.code === 'CSV_MAX_RECORD_SIZE' ? 'PIPELOAD_RECORD_TOO_LARGE' : 'PIPELOAD_INPUT_INVALID'
    const e = new PipeloadError(code, `${where(this.file, line)}: ${this.describe(err)}`,
      { file: this.file, line, offset, cause: err })
    if (SKIPPABLE.has(err.code)) e.raw = this.lineText(this.errorPosition(start), start)
    return e
  }

  /** The text from `from` to the end of the line holding `at`, as far as received (for a rejects file). */
  lineText (at, from) {
    const nl = this.indexOf(LF, at)
    return this.text(from, nl === -1 ? this.received : nl)
  }

  /**
   * csv-parse's message without its own (raw) line number, the field at fault numbered as
   * everywhere else (from 1, with its column name), and for a quote error the way to read it.
   */
  describe (err) {
    let text = String(err.message).replace(/ (at|on) line \d+/, '')
    if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
      text = 'Quote Not Closed: a quoted field opened in this record runs to the end of the input'
    }
    const column = typeof err.column === 'number' ? this.fieldName(err.column) : null
    // A CR after a closing quote, not followed by LF: csv-parse's message would print the raw CR.
    if (err.code === 'CSV_INVALID_CLOSING_QUOTE' && text.includes('got "\r"')) return loneCrText(column || 'a field')
    if (err.code === 'INVALID_OPENING_QUOTE' && column !== null) {
      // csv-parse numbers the field from 0 ("on field 1" is the second): say it once, our way.
      return text.replace(/a quote is found on field \d+/, `a quote is found in ${column}, not at its start`) +
        '; to read such quotes as data (5\'10", 37°36\'37.8"N), use --relax-quotes (relaxQuotes)'
    }
    if (err.code === 'CSV_INVALID_CLOSING_QUOTE' && column !== null) {
      return `${text} (${column}); --relax-quotes (relaxQuotes) keeps such a field as written, quotes included`
    }
    if (/QUOTE/.test(err.code) && column !== null) text += ` (${column})`
    return text
  }
}

function loneCrText (field) {
  return `Lone CR in ${field}: a carriage return not followed by a line feed, outside quotes (lines end with LF or CRLF)`
}

module.exports = { CsvCore }
