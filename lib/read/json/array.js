'use strict'

const { PipeloadError, where } = require('../../errors')
const { BadOffsets, invalidUtf8Hint } = require('../utf8')
const { textOf, stringTooLong } = require('../text')
const { parseRecord } = require('./value')
const { MAX_DEPTH, MEMBER_KEY, ELEMENT } = require('../row')
const { FirstBytes } = require('./hints')
const { show, notArray, notObject, notFound, arrayMember } = require('./path-errors')

/*
 * Streaming reader for a JSON array (the whole document, or the array at `jsonPath`), or
 * for an object keyed by id there ({"AD": {…}, "AE": {…}}): each member's value is a record,
 * its key kept under MEMBER_KEY ({$key} in templates).
 *
 * A byte scanner finds where each array element starts and ends (tracking nesting depth,
 * strings and escapes); each element's bytes are then handed to JSON.parse, which does the
 * real validation. Scanning bytes rather than decoded text is safe because every
 * structural character is ASCII and UTF-8 continuation bytes are all >= 0x80; it also gives
 * exact byte offsets, and a multi-byte character split between chunks is only decoded
 * once its element is complete. Nothing but the current element (and the key being read
 * while walking `jsonPath`) is kept between chunks.
 */

const NAV = 0 // expecting the value at path level `level` (an object, or the array at the end)
const KEY_FIRST = 1 // in an object on the path, expecting a key or '}'
const KEY = 2 // after ',', expecting a key
const KEY_STR = 3 // inside a key
const COLON = 4 // after a key, expecting ':'
const SKIP_START = 5 // expecting a value we do not want
const SKIP = 6 // inside a container or string we do not want
const SKIP_SCALAR = 7 // inside a number / literal we do not want
const AFTER_MEMBER = 8 // after a skipped value, expecting ',' or '}'
const ELEMS_FIRST = 9 // just after '[', expecting an element or ']'
const ELEMS = 10 // after ',', expecting an element
const ELEM = 11 // inside a container or string element
const ELEM_SCALAR = 12 // inside a number / literal element
const AFTER_ELEM = 13 // expecting ',' or ']'
const TAIL_SKIP = 14 // after the array, inside the objects that held it
const TAIL = 15 // after the document's top-level value: whitespace only

// Deeper elements than MAX_DEPTH (value.js) are refused: the scanner counts the depth
// already, so parseRecord's own depth scan never finds one here.

const QUOTE = 0x22
const BACKSLASH = 0x5c
const LF = 0x0a

function isSpace (b) {
  return b === 0x20 || b === LF || b === 0x0d || b === 0x09
}

// Bytes that end a number or literal.
function endsScalar (b) {
  return b === 0x2c || b === 0x5d || b === 0x7d || isSpace(b)
}

const EMPTY = Buffer.alloc(0)
const MAX_HELD = 100
const HOLD_BYTES = 1024 * 1024


class JsonArrayCore {
  constructor ({ file, jsonPath, jsonPathText, maxRecordSize, base, skip = false, raw = false, bad = null }) {
    this.file = file
    this.skip = skip // reject an element JSON.parse refuses and go on (the scanner found its end)
    this.raw = raw
    this.bad = bad || new BadOffsets()
    this.deep = false // the element in progress nests deeper than MAX_DEPTH
    this.jsonPath = jsonPath || null
    this.jsonPathText = jsonPathText || this.jsonPath // as the user wrote it, for messages
    this.path = jsonPath ? jsonPath.split('.') : []
    this.keyed = false // the records are the members of an object, not the elements of an array
    this.memberKey = null // the key of the member being read
    this.index = 0 // the element (or member) number of the next record, from 0
    this.prevEndLine = 0 // the line where the previous record ended
    this.endLine = 0 // the line where the record being emitted ends
    this.keysSeen = [] // keys of the object on the path being walked, for a message when one is missing
    this.max = maxRecordSize
    this.chunkStart = base // absolute offset of the current chunk

    this.mode = NAV
    this.level = 0
    this.depth = 0
    this.inStr = false
    this.esc = false
    this.line = 1
    this.seen = false // any non-whitespace byte yet

    this.parts = [] // earlier chunks' bytes of the element (or key) in progress
    this.partsLength = 0
    this.markLine = 0 // line and offset where that element or key starts
    this.markOffset = 0
    this.first = new FirstBytes(file) // held until they tell the input is no NDJSON; then null
    // A top-level object's first members (records, or errors for those that are none), held
    // (up to MAX_HELD of them, HOLD_BYTES) so that an array member after them (GeoJSON's
    // "features" after "type" and "crs") is refused before any is sent; null once not held.
    this.held = null
    this.heldBytes = 0
  }

  write (buf, sink) {
    if (this.first !== null && (buf = this.firstBytes(buf, false)) === null) return
    const n = buf.length
    let mode = this.mode
    let depth = this.depth
    let inStr = this.inStr
    let esc = this.esc
    let line = this.line
    let deep = this.deep
    let mark = this.parts.length !== 0 ? 0 : -1 // start in buf of the element / key in progress
    let i = 0
    try {
      for (; i < n; i++) {
        let b = buf[i]
        if (mode === ELEM) {
          // Hot loop: the bytes of one element.
          for (;;) {
            if (inStr) {
              if (esc) esc = false
              else if (b === QUOTE) {
                inStr = false
                if (depth === 0) break
              } else if (b === BACKSLASH) esc = true
              else if (b === LF) line++
            } else if (b === QUOTE) inStr = true
            else if (b === 0x7b || b === 0x5b) {
              if (++depth > MAX_DEPTH) deep = true
            } else if (b === 0x7d || b === 0x5d) {
              if (--depth === 0) break
            } else if (b === LF) line++
            if (++i === n) break
            b = buf[i]
          }
          if (i === n) break
          this.deep = deep
          deep = false
          this.endLine = line
          this.emitElement(buf, mark, i + 1, sink)
          mark = -1
          mode = AFTER_ELEM
          continue
        }
        if (b === LF) line++
        switch (mode) {
          case ELEM_SCALAR:
            if (endsScalar(b)) {
              this.endLine = this.markLine // a scalar: on one line
              this.emitElement(buf, mark, i, sink)
              mark = -1
              mode = AFTER_ELEM
              i-- // the delimiter is read again in AFTER_ELEM
              if (b === LF) line--
            }
            break
          case AFTER_ELEM:
            if (isSpace(b)) break
            if (this.keyed) {
              if (b === 0x2c) mode = KEY
              else if (b === 0x7d) mode = this.path.length === 0 ? TAIL : TAIL_SKIP
              else throw this.invalid(line, i, `expected ',' or '}' after an object member, got ${show(b)}`)
            } else if (b === 0x2c) mode = ELEMS
            else if (b === 0x5d) mode = this.path.length === 0 ? TAIL : TAIL_SKIP
            else throw this.invalid(line, i, `expected ',' or ']' after an array element, got ${show(b)}`)
            if (mode === TAIL_SKIP) depth = this.path.length
            break
          case ELEMS_FIRST:
          case ELEMS:
            if (isSpace(b)) break
            if (this.keyed && (b === 0x5d || b === 0x7d)) throw this.invalid(line, i, `expected a value after the key ${JSON.stringify(this.memberKey)}, got ${show(b)}`)
            if (b === 0x5b && this.keyed && this.path.length === 0 && !this.memberKey.includes('.')) throw arrayMember(this, line, this.memberKey)
            if (b === 0x5d) {
              if (mode === ELEMS) throw this.invalid(line, i, "expected a value after ',', got ']'")
              mode = this.path.length === 0 ? TAIL : TAIL_SKIP
              depth = this.path.length
              break
            }
            mark = i
            this.markLine = line
            this.markOffset = this.chunkStart + i
            if (b === 0x7b || b === 0x5b) {
              depth = 1
              mode = ELEM
            } else if (b === QUOTE) {
              depth = 0
              inStr = true
              mode = ELEM
            } else {
              mode = ELEM_SCALAR
            }
            break
          case NAV:
            if (isSpace(b)) break
            this.seen = true
            if (this.level === this.path.length) {
              if (b === 0x7b) {
                this.keyed = true
                if (this.path.length === 0) this.held = []
                mode = KEY_FIRST
              } else if (b === 0x5b) mode = ELEMS_FIRST
              else throw notArray(this, line, b)
            } else {
              if (b !== 0x7b) throw notObject(this, line, b)
              mode = KEY_FIRST
            }
            break
          case KEY_FIRST:
          case KEY:
            if (isSpace(b)) break
            if (b === QUOTE) {
              mark = i
              this.markLine = line
              this.markOffset = this.chunkStart + i
              esc = false
              mode = KEY_STR
            } else if (b === 0x7d && mode === KEY_FIRST) {
              if (!this.keyed) throw notFound(this, line)
              mode = this.path.length === 0 ? TAIL : TAIL_SKIP // an empty object: no records
              depth = this.path.length
            } else {
              throw this.invalid(line, i, `expected an object key, got ${show(b)}`)
            }
            break
          case KEY_STR:
            if (esc) esc = false
            else if (b === BACKSLASH) esc = true
            else if (b === QUOTE) {
              this.key = this.decodeKey(this.text(buf, mark, i + 1), line, i)
              mark = -1
              mode = COLON
              if (this.keyed) this.memberKey = this.key
              else if (this.keysSeen.length < 20) this.keysSeen.push(this.key)
            }
            break
          case COLON:
            if (isSpace(b)) break
            if (b !== 0x3a) throw this.invalid(line, i, `expected ':' after an object key, got ${show(b)}`)
            if (this.keyed) {
              mode = ELEMS // the member's value is a record
            } else if (this.key === this.path[this.level]) {
              this.level++
              this.keysSeen = []
              mode = NAV
            } else {
              mode = SKIP_START
            }
            break
          case SKIP_START:
            if (isSpace(b)) break
            if (b === 0x7b || b === 0x5b) {
              depth = 1
              mode = SKIP
            } else if (b === QUOTE) {
              depth = 0
              inStr = true
              esc = false
              mode = SKIP
            } else {
              mode = SKIP_SCALAR
            }
            break
          case SKIP:
          case TAIL_SKIP:
            if (inStr) {
              if (esc) esc = false
              else if (b === QUOTE) {
                inStr = false
                if (depth === 0) mode = mode === SKIP ? AFTER_MEMBER : TAIL
              } else if (b === BACKSLASH) esc = true
            } else if (b === QUOTE) inStr = true
            else if (b === 0x7b || b === 0x5b) depth++
            else if (b === 0x7d || b === 0x5d) {
              if (--depth === 0) mode = mode === SKIP ? AFTER_MEMBER : TAIL
            }
            break
          case SKIP_SCALAR:
            if (endsScalar(b)) {
              mode = AFTER_MEMBER
              i--
              if (b === LF) line--
            }
            break
          case AFTER_MEMBER:
            if (isSpace(b)) break
            if (b === 0x2c) mode = KEY
            else if (b === 0x7d) throw notFound(this, line)
            else throw this.invalid(line, i, `expected ',' or '}' in an object, got ${show(b)}`)
            break
          case TAIL:
            if (!isSpace(b)) throw this.invalid(line, i, `unexpected ${show(b)} after the end of the document`)
            break
        }
      }
      // Keep the bytes of an unfinished element or key for the next chunk.
      if (mark !== -1) {
        if (mark < n) {
          this.parts.push(mark === 0 ? buf : buf.subarray(mark))
          this.partsLength += n - mark
        }
        if (this.partsLength > this.max && (mode === ELEM || mode === ELEM_SCALAR)) {
          throw this.tooLarge()
        }
      }
    } finally {
      this.mode = mode
      this.depth = depth
      this.inStr = inStr
      this.esc = esc
      this.line = line
      this.deep = deep
      this.chunkStart += n
    }
  }

  end (sink) {
    if (this.first !== null) this.write(this.firstBytes(EMPTY, true), sink)
    if (this.held !== null) this.flushHeld(sink)
    const mode = this.mode
    if (mode === ELEM_SCALAR) {
      // A number as the last bytes: the array is still not closed, but report the element.
      this.endLine = this.markLine
      this.emitElement(Buffer.alloc(0), 0, 0, sink)
      this.mode = AFTER_ELEM
    }
    if (this.mode === TAIL) return
    if (!this.seen) {
      // No line: it is the file that is wrong, not a record of it (no "0 of 1 records").
      throw new PipeloadError('PIPELOAD_INPUT_INVALID', `${where(this.file)}: the input is empty (no JSON document), expected a JSON array`,
        { file: this.file })
    }
    if (this.mode === ELEM) {
      throw new PipeloadError('PIPELOAD_INPUT_INVALID',
        `${this.at()}: unexpected end of input inside ${this.keyed ? 'an object member' : 'an array element'} (truncated JSON?)`,
        { file: this.file, line: this.markLine, offset: this.markOffset })
    }
    const what = this.keyed ? 'the object of records is not closed'
      : this.mode >= ELEMS_FIRST && this.mode <= AFTER_ELEM ? 'the array is not closed'
      : this.mode === TAIL_SKIP ? 'the objects around the array are not closed'
        : `the document ends before ${this.pathText()} is found`
    throw this.invalid(this.line, null, `unexpected end of input: ${what} (truncated JSON?)`)
  }

  /** Text of buf[start, end) preceded by the parts kept from earlier chunks (null: longer than a string can be). */
  text (buf, start, end) {
    if (this.parts.length === 0) return textOf(buf, start, end)
    this.parts.push(buf.subarray(start, end))
    const whole = Buffer.concat(this.parts, this.partsLength + end - start)
    this.parts = []
    this.partsLength = 0
    return textOf(whole)
  }

  /** The element buf[start, end) (after the parts kept from earlier chunks), ending on line `this.endLine`. */
  emitElement (buf, start, end, sink) {
    const length = this.partsLength + end - start
    if (length > this.max) throw this.tooLarge()
    const text = this.text(buf, start, end)
    try {
      const bad = this.bad.take(this.markOffset, this.markOffset + length)
      if (text === null) {
        const err = stringTooLong({ file: this.file, line: this.markLine, offset: this.markOffset }, this.keyed ? 'object member' : 'array element', length)
        if (!this.skip) throw err
        return sink.reject(err)
      }
      if (bad !== -1) return this.reject(sink, `invalid UTF-8 at byte ${bad}${invalidUtf8Hint(this.file, 'json')}`, text, { invalidAt: bad })
      if (this.deep) {
        this.deep = false
        return this.reject(sink, `${this.keyed ? 'object member' : 'array element'} nested more than ${MAX_DEPTH} levels deep`, text)
      }
      let parsed
      try {
        parsed = parseRecord(text, true)
      } catch (err) {
        return this.reject(sink, `not valid JSON: ${err.message}`, text, { cause: err })
      }
      if (parsed.refused !== undefined) return this.reject(sink, `${this.keyed ? 'object member' : 'array element'}: ${parsed.refused}`, text)
      const value = parsed.value
      if (this.keyed) {
        // {$key} rides on the record: a value that cannot carry it is no record of a keyed object.
        if (value === null || typeof value !== 'object' || Array.isArray(value)) {
          const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`
          const path = [...this.path, this.memberKey].join('.')
          const hint = Array.isArray(value) && !this.memberKey.includes('.') ? ` (for the records in it: --json-path "${path}")` : ''
          const reason = `expected an object (a record) as the value of each member of an object keyed by id, got ${got}${hint}`
          if (this.held !== null) return this.put(sink, this.recordError(reason, text), text.length)
          return this.reject(sink, reason, text)
        }
        value[MEMBER_KEY] = this.memberKey
      }
      // Not enumerable: a copy of the record (a map() function's) does not take it along.
      if (this.sharesLine() && value !== null && typeof value === 'object') Object.defineProperty(value, ELEMENT, { value: this.index })
      if (this.held !== null) return this.put(sink, { value, line: this.markLine, offset: this.markOffset, raw: this.raw ? text : undefined }, text.length)
      sink.add(value, this.markLine, this.markOffset, this.raw ? text : undefined)
    } finally {
      this.index++
      this.prevEndLine = this.endLine
    }
  }

  /**
   * `file:line` of the record being read and, where the line alone does not tell which one it
   * is (a one-line, minified document: several records on a line), the element: `[4711]`, or
   * the member's key; with its byte offset.
   */
  at () {
    const here = where(this.file, this.markLine)
    if (this.keyed) return `${here}: member ${JSON.stringify(this.memberKey)} (element [${this.index}], byte ${this.markOffset})`
    if (this.sharesLine()) return `${here}: element [${this.index}] (byte ${this.markOffset})`
    return here
  }

  /** May the record being read share its line with another (so that the line alone does not name it)? */
  sharesLine () {
    return this.markLine === 1 || this.markLine === this.prevEndLine
  }

  /** A bad element: thrown, or rejected in skip mode. */
  reject (sink, reason, text, extra) {
    const err = this.recordError(reason, text, extra)
    if (!this.skip) throw err
    sink.reject(err)
  }

  /**
   * The input failed mid-way (not its bytes: a lost connection, a read error): what is held
   * goes out as it is, the first bytes scanned as a document and the members held, so the
   * records before the failure are loaded as they were before anything was held.
   */
  inputFailed (sink) {
    try {
      if (this.first !== null) this.write(this.firstBytes(EMPTY, true), sink)
      if (this.held !== null) this.flushHeld(sink)
    } catch {
      // A record of the held bytes is bad: the input's failure is still the one reported.
    }
  }

  /** The bytes to scan from `buf` on: null while the first bytes are held (./hints.js). */
  firstBytes (buf, ended) {
    const bytes = this.first.take(buf, ended)
    if (bytes !== null) this.first = null
    return bytes
  }

  recordError (reason, text, extra) {
    return new PipeloadError('PIPELOAD_INPUT_INVALID', `${this.at()}: ${reason}`,
      { file: this.file, line: this.markLine, offset: this.markOffset, raw: text, ...extra })
  }

  /** A top-level member (a record, or the error of one that is none): held, or out with those held. */
  put (sink, item, size) {
    if (this.held.length < MAX_HELD && this.heldBytes + size <= HOLD_BYTES) {
      this.held.push(item)
      this.heldBytes += size
      return
    }
    this.flushHeld(sink)
    this.out(sink, item)
  }

  flushHeld (sink) {
    const held = this.held
    this.held = null
    for (const item of held) this.out(sink, item)
  }

  /** A record to the sink; an error thrown, or rejected in skip mode. */
  out (sink, item) {
    if (!(item instanceof PipeloadError)) return sink.add(item.value, item.line, item.offset, item.raw)
    if (!this.skip) throw item
    sink.reject(item)
  }

  decodeKey (text, line, i) {
    try {
      return JSON.parse(text)
    } catch (err) {
      throw this.invalid(line, i, `not a valid object key: ${text.slice(0, 80)}`)
    }
  }

  pathText () {
    return this.jsonPath === null ? 'the array' : `--json-path "${this.jsonPathText}"`
  }

  invalid (line, i, reason) {
    const offset = i === null ? this.chunkStart : this.chunkStart + i
    return new PipeloadError('PIPELOAD_INPUT_INVALID', `${where(this.file, line)}: ${reason}`,
      { file: this.file, line, offset })
  }

  tooLarge () {
    return new PipeloadError('PIPELOAD_RECORD_TOO_LARGE',
      `${this.at()}: ${this.keyed ? 'object member' : 'array element'} is larger than maxRecordSize (${this.max} bytes)`,
      { file: this.file, line: this.markLine, offset: this.markOffset })
  }
}

module.exports = { JsonArrayCore }
