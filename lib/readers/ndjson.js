'use strict'

const { PipeloadError, where } = require('../errors')

/**
 * NDJSON / JSON Lines: one JSON value per line, LF or CRLF. Blank (whitespace-only) lines
 * are skipped. Works on bytes: lines are found with Buffer#indexOf, so a multi-byte
 * character split between chunks is decoded only once its line is complete.
 */
class NdjsonCore {
  constructor ({ file, maxRecordSize, base }) {
    this.file = file
    this.max = maxRecordSize
    this.offset = base // absolute offset of the start of the current (partial) line
    this.line = 1
    this.parts = [] // pieces of a line spanning chunks
    this.partsLength = 0
  }

  write (buf, sink) {
    let start = 0
    let nl = buf.indexOf(10)
    if (nl !== -1 && this.parts.length !== 0) {
      this.parts.push(buf.subarray(0, nl))
      const whole = Buffer.concat(this.parts, this.partsLength + nl)
      this.parts = []
      this.partsLength = 0
      this.emit(whole, 0, whole.length, sink)
      start = nl + 1
      nl = buf.indexOf(10, start)
    }
    while (nl !== -1) {
      this.emit(buf, start, nl, sink)
      start = nl + 1
      nl = buf.indexOf(10, start)
    }
    if (start < buf.length) {
      this.parts.push(start === 0 ? buf : buf.subarray(start))
      this.partsLength += buf.length - start
      if (this.partsLength > this.max) throw this.tooLarge()
    }
  }

  end (sink) {
    if (this.parts.length !== 0) {
      const whole = Buffer.concat(this.parts, this.partsLength)
      this.parts = []
      this.partsLength = 0
      this.emit(whole, 0, whole.length, sink, true)
    }
  }

  /** One line, buf[start, end) without its LF; moves the position past the LF. */
  emit (buf, start, end, sink, last) {
    const length = end - start
    if (length > this.max) throw this.tooLarge()
    const text = buf.toString('utf8', start, buf[end - 1] === 13 ? end - 1 : end)
    if (text.length !== 0) {
      let value
      try {
        value = JSON.parse(text)
      } catch (err) {
        if (text.trim() !== '') {
          throw new PipeloadError('PIPELOAD_INPUT_INVALID',
            `${where(this.file, this.line)}: not valid JSON: ${err.message}`,
            { file: this.file, line: this.line, offset: this.offset, cause: err })
        }
      }
      if (value !== undefined) sink.add(value, this.line, this.offset)
    }
    this.line++
    this.offset += length + (last ? 0 : 1)
  }

  tooLarge () {
    return new PipeloadError('PIPELOAD_RECORD_TOO_LARGE',
      `${where(this.file, this.line)}: line is longer than maxRecordSize (${this.max} bytes)`,
      { file: this.file, line: this.line, offset: this.offset })
  }
}

module.exports = { NdjsonCore }
