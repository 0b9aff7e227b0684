'use strict'

const { JsonNumber } = require('../json-number')
const { STRING, NUMBER, JSON_NUMBER, BYTES, BOOLEAN } = require('./row')

// Where Parquet text rows (text.js) keep their values: a batch's arena of bytes per
// column, and the ColumnBatch that says where each row's value is in it.
//
// Each value is kept as the RESP bulk string the mapper sends for it, `$<len>\r\n<text>\r\n`:
// a field that is a whole argument (`*`'s values, `{delay}`) is copied as it is, its length
// written once per value here (once per entry for a dictionary); a field inside a word
// (`flight:{id}`) takes the text between. Where the templates use `*`, the column's name (its
// bulk string, the `prefix`) goes before each value too: `*` then copies one span per column,
// and a dictionary's entries carry it once for all their rows.

const HEAD_ROOM = 13 // `$`, 10 digits, CRLF: the most a head takes
const CR = 13
const LF = 10
const DOLLAR = 36

/**
 * A column batch's bytes; a new one per batch (its rows keep it). `prefix`: the name before
 * each value, or an empty Buffer. `batch`: the batch's number (text.js DictionaryPage stamps
 * the dictionary entries it has copied into this arena with it), -1 for none.
 */
class Arena {
  constructor (size, prefix, batch = -1) {
    this.buf = Buffer.allocUnsafe(size)
    this.pos = 0
    this.prefix = prefix
    this.batch = batch
  }

  room (n) {
    if (this.pos + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n))
      this.buf.copy(next, 0, 0, this.pos)
      this.buf = next
    }
  }

  /** Starts a value: its text goes after room for the prefix and its head. Returns where the text starts. */
  open () {
    const n = HEAD_ROOM + this.prefix.length
    this.room(n)
    this.pos += n
    return this.pos
  }

  /** Ends the value whose text started at `start`: its head before it, CRLF after; its place into out[o]. */
  close (start, out, o) {
    this.room(2)
    const buf = this.buf
    const end = this.pos
    let h = start - 2
    buf[h] = CR
    buf[h + 1] = LF
    let n = end - start
    do {
      const d = (n / 10) | 0
      buf[--h] = 48 + n - d * 10
      n = d
    } while (n > 0)
    buf[--h] = DOLLAR
    const prefix = this.prefix
    for (let i = 0, q = h - prefix.length; i < prefix.length; i++) buf[q++] = prefix[i]
    buf[end] = CR
    buf[end + 1] = LF
    this.pos = end + 2
    out.spans[2 * o] = start
    out.spans[2 * o + 1] = end
  }

  copy (src, s, e) {
    this.room(e - s)
    const buf = this.buf
    let p = this.pos
    if (e - s < 32) for (let i = s; i < e; i++) buf[p++] = src[i]
    else p += src.copy(buf, p, s, e)
    this.pos = p
  }

  latin1 (s) {
    this.room(s.length)
    const buf = this.buf
    let p = this.pos
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i)
    this.pos = p
  }

  utf8 (s) {
    this.room(s.length * 3)
    this.pos += this.buf.utf8Write(s, this.pos)
  }

  /** A safe integer as its bulk string, written at once (its length is known first); its place into out[o]. */
  bulkInt (n, out, o) {
    const prefix = this.prefix
    this.room(28 + prefix.length)
    const buf = this.buf
    let p = this.pos
    for (let i = 0; i < prefix.length; i++) buf[p++] = prefix[i]
    const sign = n < 0 ? 1 : 0
    if (sign) n = -n
    const small = n < 0x80000000
    const digits = small ? digitsOf(n | 0) : String(n).length
    const len = digits + sign // at most 17
    buf[p++] = DOLLAR
    if (len >= 10) buf[p++] = 49 // 1
    buf[p++] = 48 + (len % 10)
    buf[p++] = CR
    buf[p++] = LF
    const start = p
    if (sign) buf[p++] = 0x2d // -
    p += digits
    if (small) writeInt32(buf, p - 1, n | 0)
    else writeDigits(buf, p - 1, n)
    out.spans[2 * o] = start
    out.spans[2 * o + 1] = p
    buf[p++] = CR
    buf[p++] = LF
    this.pos = p
  }

  /** A safe integer's digits. */
  int (n) {
    this.room(17)
    const buf = this.buf
    let p = this.pos
    if (n < 0) {
      buf[p++] = 0x2d // -
      n = -n
    }
    if (n < 0x80000000) { // int32 arithmetic
      p += digitsOf(n | 0)
      writeInt32(buf, p - 1, n | 0)
    } else {
      p += String(n).length
      writeDigits(buf, p - 1, n)
    }
    this.pos = p
  }
}

/** The digits of a non-negative int32. */
function digitsOf (n) {
  let d = 1
  while (n >= 10) {
    n = (n / 10) | 0
    d++
  }
  return d
}

/** A non-negative int32's digits, ending at buf[q]. */
function writeInt32 (buf, q, n) {
  do {
    const d = (n / 10) | 0
    buf[q--] = 48 + n - d * 10
    n = d
  } while (n > 0)
}

/** A non-negative safe integer's digits, ending at buf[q]. */
function writeDigits (buf, q, n) {
  do {
    const d = Math.floor(n / 10)
    buf[q--] = 48 + (n - d * 10) // not (48 + n) - …: past 2^53 - 48 that sum is rounded
    n = d
  } while (n > 0)
}

/** A record value's text into the arena at out[o]: its bytes, as the mapper's toArg writes them, and kind. */
function putValue (arena, v, out, o) {
  const start = arena.open()
  out.tags[o] = textOf(arena, v)
  arena.close(start, out, o)
}

/** A record value's text into the arena; returns its kind. */
function textOf (arena, v) {
  switch (typeof v) {
    case 'string':
      arena.utf8(v)
      return STRING
    case 'number':
      if (Number.isSafeInteger(v)) arena.int(v)
      else arena.latin1(String(v))
      return NUMBER
    case 'boolean':
      arena.latin1(v ? 'true' : 'false')
      return BOOLEAN
    default:
      if (v instanceof JsonNumber) {
        arena.latin1(v.text)
        return JSON_NUMBER
      }
      if (Buffer.isBuffer(v)) {
        arena.copy(v, 0, v.length)
        return BYTES
      }
      throw new Error(`internal: a flat column's value is a ${typeof v}`)
  }
}

/**
 * One column's values of a batch's rows: row r's text is buf[spans[2r], spans[2r + 1]), of
 * the kind tags[r] (row.js), its bulk string from headOf(…) to 2 bytes past the text;
 * spans[2r] -1 for a null. Segments write the values present from an index (with nulls, into
 * a scratch ColumnBatch first). A batch's columns share one array of spans and one of tags.
 */
class ColumnBatch {
  constructor (spans, tags) {
    this.buf = null
    this.view = null // a DataView of buf (the writer copies from it)
    this.spans = spans
    this.tags = tags
    this.pre = 0 // the bytes of the prefix before each value's bulk string
  }

  static of (m) {
    return new ColumnBatch(new Int32Array(2 * m), new Uint8Array(m))
  }
}

module.exports = { Arena, ColumnBatch, putValue }
