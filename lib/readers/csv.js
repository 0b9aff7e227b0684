'use strict'

const { Parser } = require('csv-parse')
const { PipeloadError, where } = require('../errors')

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
 */
class CsvCore {
  constructor ({ file, delimiter, header, maxRecordSize, base }) {
    this.file = file
    this.header = header
    this.columns = null
    this.base = base // absolute offset of the first byte this parser sees (after a BOM)
    this.api = new Parser({
      delimiter,
      skip_empty_lines: true,
      max_record_size: maxRecordSize
    }).api
    this.info = this.api.info
    this.sink = null

    // Positions, relative to the first byte given to csv-parse.
    this.prevEnd = 0 // where the last record (header included) ended
    this.prevEmpty = 0 // info.empty_lines when it ended
    this.delimiterLength = 0 // of the record delimiter, once csv-parse has found it
    this.lineByte = 10

    // Line counting: chunks from `cur` onwards, `line` is the line at `cur`.
    this.chunks = []
    this.ci = 0
    this.received = 0
    this.cur = 0
    this.line = 1
    this.nl = -1 // position of the next line break at or after `cur` in chunks[ci]

    this.push = (record) => this.onRecord(record)
  }

  write (chunk, sink) {
    this.chunks.push({ buf: chunk, start: this.received })
    this.received += chunk.length
    this.sink = sink
    const err = this.api.parse(chunk, false, this.push, noop)
    if (err !== undefined) throw this.toError(err)
    if (this.ci !== 0) {
      this.chunks.splice(0, this.ci)
      this.ci = 0
    }
  }

  end (sink) {
    this.sink = sink
    const err = this.api.parse(undefined, true, this.push, noop)
    if (err !== undefined) throw this.toError(err)
  }

  /** Start of the record being parsed: after the last one and any skipped empty lines. */
  recordStart () {
    if (this.delimiterLength === 0) this.findDelimiter()
    return this.prevEnd + (this.info.empty_lines - this.prevEmpty) * this.delimiterLength
  }

  findDelimiter () {
    const rd = this.api.options.record_delimiter[0]
    if (rd === undefined) return
    this.delimiterLength = rd.length
    // Classic Mac files end lines with a lone CR.
    this.lineByte = rd.length === 1 && rd[0] === 13 ? 13 : 10
  }

  onRecord (record) {
    const start = this.recordStart()
    this.advance(start)
    this.prevEnd = this.info.bytes
    this.prevEmpty = this.info.empty_lines
    if (this.columns === null && this.header) {
      this.columns = record
      return
    }
    this.sink.add(record, this.line, this.base + start)
  }

  /** Moves the line cursor to `to`, counting line breaks on the way. */
  advance (to) {
    const chunks = this.chunks
    const lineByte = this.lineByte
    while (this.cur < to) {
      const c = chunks[this.ci]
      const cEnd = c.start + c.buf.length
      if (this.nl < this.cur) {
        const i = c.buf.indexOf(lineByte, this.cur - c.start)
        this.nl = i === -1 ? cEnd : c.start + i
      }
      const stop = to < cEnd ? to : cEnd
      while (this.nl < stop) {
        this.line++
        const i = c.buf.indexOf(lineByte, this.nl + 1 - c.start)
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
    return new PipeloadError(code, `${where(this.file, line)}: ${this.describe(err)}`,
      { file: this.file, line, offset, cause: err })
  }

  /** csv-parse's message without its own (raw) line number, plus the field at fault. */
  describe (err) {
    let text = String(err.message).replace(/ (at|on) line \d+/, '')
    if (err.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' && this.header && this.columns !== null) {
      text = text.replace('Invalid Record Length: expect', 'Invalid Record Length: the header has')
        .replace(/(\d+),/, '$1 fields,')
    }
    if (/QUOTE/.test(err.code) && typeof err.column === 'number') {
      const name = this.columns !== null && this.columns[err.column] !== undefined
        ? ` ${JSON.stringify(this.columns[err.column])}` : ''
      text += ` (field ${err.column + 1}${name})`
    }
    return text
  }
}

module.exports = { CsvCore }
