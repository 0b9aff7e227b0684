'use strict'

const { PipeloadError, where } = require('../../errors')
const { BadOffsets, invalidUtf8Hint } = require('../utf8')
const { textOf, stringTooLong } = require('../text')
const { FlatScanner } = require('./row')
const { parseRecord } = require('./value')

/**
 * NDJSON / JSON Lines: one JSON value per line, LF or CRLF. Blank (whitespace-only) lines
 * are skipped. Works on bytes: lines are found with Buffer#indexOf, so a multi-byte
 * character split between chunks is decoded only once its line is complete.
 * In skip mode a bad line (not JSON, invalid UTF-8, over maxRecordSize, nested deeper than
 * MAX_DEPTH, a lone surrogate escape: see value.js) is rejected
 * (sink.reject) and reading goes on at the next line; otherwise it throws.
 */
class NdjsonCore {
  /** `rows`: flat objects may come out as JsonRows (row.js) instead of parsed objects. */
  constructor ({ file, maxRecordSize, base, skip = false, raw = false, bad = null, rows = false, line = 1 }) {
    this.file = file
    this.flat = rows ? new FlatScanner() : null
    this.max = maxRecordSize
    this.skip = skip
    this.raw = raw
    this.bad = bad || new BadOffsets()
    this.offset = base // absolute offset of the start of the current (partial) line
    this.line = line
    this.parts = [] // pieces of a line spanning chunks
    this.partsLength = 0
    this.discarding = -1 // skip mode: length so far of an oversized line being dropped
  }

  write (buf, sink) {
    let start = 0
    let nl = buf.indexOf(10)
    if (nl !== -1 && this.discarding !== -1) {
      this.dropped(nl, sink)
      start = nl + 1
      nl = buf.indexOf(10, start)
    } else if (nl !== -1 && this.parts.length !== 0) {
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
      if (this.discarding !== -1) {
        this.discarding += buf.length - start
        return
      }
      this.parts.push(start === 0 ? buf : buf.subarray(start))
      this.partsLength += buf.length - start
      if (this.partsLength > this.max) {
        if (!this.skip) throw this.tooLarge()
        this.discarding = this.partsLength
        this.parts = []
        this.partsLength = 0
      }
    }
  }

  end (sink) {
    if (this.discarding !== -1) return this.dropped(0, sink, true)
    if (this.parts.length !== 0) {
      const whole = Buffer.concat(this.parts, this.partsLength)
      this.parts = []
      this.partsLength = 0
      this.record(whole, 0, whole.length, sink)
      this.next(whole.length) // the last line: no LF after it
    }
  }

  /** The end of an oversized line being dropped: `more` bytes of it in this chunk. */
  dropped (more, sink, last) {
    const length = this.discarding + more
    this.discarding = -1
    sink.reject(this.tooLarge())
    this.bad.take(this.offset, this.offset + length)
    this.next(length + (last ? 0 : 1))
  }

  /** One line, buf[start, end) without its LF; moves the position past the LF. */
  emit (buf, start, end, sink) {
    this.record(buf, start, end, sink)
    this.next(end - start + 1)
  }

  /** The next line starts `length` bytes on. */
  next (length) {
    this.line++
    this.offset += length
  }

  /** One line, buf[start, end) without its LF, as a record (or a rejection, or nothing: a blank line); the position is the line's. */
  record (buf, start, end, sink) {
    const length = end - start
    if (length > this.max) {
      if (!this.skip) throw this.tooLarge()
      sink.reject(this.tooLarge())
    } else if (!this.addFlat(buf, start, end, sink)) {
      const text = textOf(buf, start, buf[end - 1] === 13 ? end - 1 : end)
      const bad = this.bad.take(this.offset, this.offset + length)
      if (text === null) {
        this.reject(sink, stringTooLong(this, 'line', length))
      } else if (bad !== -1) {
        const err = this.invalid(`invalid UTF-8 at byte ${bad} (column ${bad - this.offset + 1})${invalidUtf8Hint(this.file, 'ndjson')}`, text)
        err.invalidAt = bad
        this.reject(sink, err)
      } else if (text.length !== 0) {
        let parsed
        try {
          parsed = parseRecord(text)
        } catch (err) {
          if (text.trim() !== '') {
            const invalid = this.invalid(`not valid JSON: ${err.message}`, text)
            invalid.cause = err
            this.reject(sink, invalid)
          }
        }
        if (parsed === undefined) {
          // a blank line, or one rejected in skip mode
        } else if (parsed.refused !== undefined) {
          this.reject(sink, this.invalid(parsed.refused, text))
        } else {
          sink.add(parsed.value, this.line, this.offset, this.raw ? text : undefined)
        }
      }
    }
  }

  /** The line as a JsonRow, if it is valid UTF-8 and a flat object the fast path reads; false if not. */
  addFlat (buf, start, end, sink) {
    if (this.flat === null || this.bad.peek() < this.offset + end - start) return false
    const stop = buf[end - 1] === 13 ? end - 1 : end
    const row = this.flat.scan(buf, start, stop)
    if (row === null) return false
    sink.add(row, this.line, this.offset, this.raw ? textOf(buf, start, stop) : undefined) // null: too long for a string
    return true
  }

  /** The failure of the current line, `text`: `reason`. */
  invalid (reason, text) {
    return new PipeloadError('PIPELOAD_INPUT_INVALID', `${where(this.file, this.line)}: ${reason}`,
      { file: this.file, line: this.line, offset: this.offset, raw: text })
  }

  /** A line's failure: thrown, or in skip mode the sink's. */
  reject (sink, err) {
    if (!this.skip) throw err
    sink.reject(err)
  }

  tooLarge () {
    return new PipeloadError('PIPELOAD_RECORD_TOO_LARGE',
      `${where(this.file, this.line)}: line is longer than maxRecordSize (${this.max} bytes)`,
      { file: this.file, line: this.line, offset: this.offset })
  }
}

module.exports = { NdjsonCore }
