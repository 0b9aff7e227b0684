'use strict'

// RESP written straight into a Buffer. Building RESP as JS strings costs a rope of small
// strings per argument plus a UTF-8 pass over the whole batch at write() time; this writes
// each byte once. Values are copied with a charCodeAt loop on the optimistic guess that
// they are ASCII (the length in bytes is then the length in chars, known up front); the
// first non-ASCII char rolls the argument back and re-writes it through utf8Write.

const { bulk } = require('./resp')
const { fieldLength, countQuotePairs } = require('./readers/csv-row')

const CR = 13
const LF = 10
const DOLLAR = 36
const STAR = 42
const QUOTE = 34
const MAX_FREE = 8

class ByteWriter {
  constructor (capacity = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(capacity) // owns its ArrayBuffer: batches cross threads
    this.pos = 0
    this.free = []
  }

  ensure (n) {
    if (this.pos + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.pos + n) size *= 2
    const next = Buffer.allocUnsafeSlow(size)
    this.buf.copy(next, 0, 0, this.pos)
    this.buf = next
  }

  /** Pre-encoded bytes (a command's constant head, a column name's bulk string). */
  bytes (b) {
    this.ensure(b.length)
    const buf = this.buf
    let p = this.pos
    if (b.length < 32) {
      for (let i = 0; i < b.length; i++) buf[p++] = b[i]
    } else {
      buf.set(b, p)
      p += b.length
    }
    this.pos = p
  }

  /** A UTF-8 string as is (dry-run text). */
  string (s) {
    this.ensure(s.length * 3)
    this.pos += this.buf.utf8Write(s, this.pos)
  }

  /** `*<n>\r\n` */
  arrayHeader (n) {
    this.ensure(24)
    this.buf[this.pos++] = STAR
    this.digits(n)
  }

  /** `<n>\r\n`, without making a string of n. */
  digits (n) {
    const buf = this.buf
    let p = this.pos
    if (n < 10) {
      buf[p++] = 48 + n
    } else if (n < 100) {
      buf[p++] = 48 + ((n / 10) | 0)
      buf[p++] = 48 + (n % 10)
    } else if (n < 1000) {
      buf[p++] = 48 + ((n / 100) | 0)
      buf[p++] = 48 + (((n / 10) | 0) % 10)
      buf[p++] = 48 + (n % 10)
    } else {
      const s = String(n)
      for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i)
    }
    buf[p++] = CR
    buf[p++] = LF
    this.pos = p
  }

  /** One bulk string. */
  bulk (s) {
    const len = s.length
    this.ensure(len + 24)
    const start = this.pos
    const buf = this.buf
    buf[this.pos++] = DOLLAR
    this.digits(len)
    let p = this.pos
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i)
      if (c > 127) return this.bulkUtf8(s, start)
      buf[p++] = c
    }
    buf[p++] = CR
    buf[p++] = LF
    this.pos = p
  }

  /** A non-negative safe integer as a bulk string, digits written without a string. */
  bulkInt (n) {
    let len = 1
    for (let t = n; t >= 10; t = Math.floor(t / 10)) len++
    this.ensure(len + 24)
    this.buf[this.pos++] = DOLLAR
    this.digits(len)
    const buf = this.buf
    let p = this.pos + len - 1
    let v = n
    do {
      buf[p--] = 48 + (v % 10)
      v = Math.floor(v / 10)
    } while (v > 0)
    p = this.pos + len
    buf[p++] = CR
    buf[p++] = LF
    this.pos = p
  }

  bulkUtf8 (s, start) {
    this.pos = start
    const n = Buffer.byteLength(s, 'utf8')
    this.ensure(n + 24)
    this.buf[this.pos++] = DOLLAR
    this.digits(n)
    this.pos += this.buf.utf8Write(s, this.pos)
    this.buf[this.pos++] = CR
    this.buf[this.pos++] = LF
  }

  /** One bulk string made of several parts (`user:` + id), without joining them first. */
  bulkParts (parts, count) {
    let len = 0
    for (let i = 0; i < count; i++) len += parts[i].length
    this.ensure(len + 24)
    const start = this.pos
    const buf = this.buf
    buf[this.pos++] = DOLLAR
    this.digits(len)
    let p = this.pos
    for (let k = 0; k < count; k++) {
      const s = parts[k]
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i)
        if (c > 127) return this.bulkUtf8(parts.slice(0, count).join(''), start)
        buf[p++] = c
      }
    }
    buf[p++] = CR
    buf[p++] = LF
    this.pos = p
  }

  /** Field k of a CsvRow as a bulk string, copied from the input bytes. */
  field (row, k) {
    const j = row.i + 2 * k
    const s = row.b[j]
    const e = row.b[j + 1]
    if (s < 0) return this.bulkRange(row.buf, -s - 1, e, true)
    this.bulkRange(row.buf, s, e, false)
  }

  /** Bytes [s, e) of `src` as a bulk string; `escaped`: each `""` in them is one `"`. */
  bulkRange (src, s, e, escaped) {
    const len = escaped ? e - s - countQuotePairs(src, s, e) : e - s
    this.ensure(len + 24)
    this.buf[this.pos++] = DOLLAR
    this.digits(len)
    this.copy(src, s, e, escaped)
    this.buf[this.pos++] = CR
    this.buf[this.pos++] = LF
  }

  /**
   * One bulk string of constant parts (Buffers) and CsvRow fields (numbers: field index),
   * like `user:{id}`, copied without strings.
   */
  rowParts (parts, row) {
    let len = 0
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]
      len += typeof part === 'number' ? fieldLength(row, part) : part.length
    }
    this.ensure(len + 24)
    this.buf[this.pos++] = DOLLAR
    this.digits(len)
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]
      if (typeof part !== 'number') {
        this.copy(part, 0, part.length, false)
        continue
      }
      const j = row.i + 2 * part
      const s = row.b[j]
      if (s < 0) this.copy(row.buf, -s - 1, row.b[j + 1], true)
      else this.copy(row.buf, s, row.b[j + 1], false)
    }
    this.buf[this.pos++] = CR
    this.buf[this.pos++] = LF
  }

  /**
   * One bulk string of constant parts (Buffers) and byte ranges of `src` (each null part
   * takes the next [start, end) pair of `spans`), like `user:{id}` from a JsonRow.
   */
  spanParts (parts, src, spans) {
    let len = 0
    for (let i = 0, k = 0; i < parts.length; i++) {
      const part = parts[i]
      if (part === null) {
        len += spans[k + 1] - spans[k]
        k += 2
      } else {
        len += part.length
      }
    }
    this.ensure(len + 24)
    this.buf[this.pos++] = DOLLAR
    this.digits(len)
    for (let i = 0, k = 0; i < parts.length; i++) {
      const part = parts[i]
      if (part === null) {
        this.copy(src, spans[k], spans[k + 1], false)
        k += 2
      } else {
        this.copy(part, 0, part.length, false)
      }
    }
    this.buf[this.pos++] = CR
    this.buf[this.pos++] = LF
  }

  /** Copy src[s, e) here (room already ensured), `""` as `"` when escaped. */
  copy (src, s, e, escaped) {
    const buf = this.buf
    let p = this.pos
    if (escaped) {
      for (let i = s; i < e; i++) {
        const c = src[i]
        buf[p++] = c
        if (c === QUOTE) i++
      }
    } else if (e - s < 32) {
      for (let i = s; i < e; i++) buf[p++] = src[i]
    } else {
      src.copy(buf, p, s, e)
      p += e - s
    }
    this.pos = p
  }

  /** Everything written so far, and a buffer for what comes next (a recycled one if any). */
  take () {
    const out = this.buf.subarray(0, this.pos)
    this.buf = this.free.pop() || Buffer.allocUnsafeSlow(Math.max(64 * 1024, Math.min(this.buf.length, this.pos + (this.pos >> 3))))
    this.pos = 0
    return out
  }

  /**
   * Give back a buffer from take() once nothing reads it any more (its batch is
   * acknowledged). Reusing a few buffers keeps RSS flat: a fresh ~300 KB allocation per
   * batch, freed later, fragments the malloc heap and RSS creeps up with the input size.
   */
  recycle (out) {
    if (this.free.length < MAX_FREE) this.free.push(Buffer.from(out.buffer, 0, out.buffer.byteLength))
  }
}

/** A string as the bytes of one RESP bulk string, for constants. */
function bulkBytes (s) {
  return Buffer.from(bulk(s))
}

module.exports = { ByteWriter, bulkBytes }
