'use strict'

const { isUtf8 } = require('node:buffer')
const { Output } = require('./backpressure')

// The NDJSON writer (docs/export.md "The NDJSON format"): one line per record, written as
// bytes into a Buffer and handed to `out` in pieces of about CHUNK bytes. A string that is
// not valid UTF-8 is {"base64":"…"}; a hash (a stream entry's fields) an object, or
// [name, value] pairs when a name is not valid UTF-8 or repeats. Most keys, fields and values
// are printable ASCII, copied byte for byte between quotes: no string is made of them.

// The pieces' size: the output's (lib/export/output.js `piece`), else 64 KiB.
const CHUNK = 64 * 1024
// The Buffer lines are written into; each chunk handed to `out` is a piece of it (`out` holds
// it until written, so a full one is left to the GC and a new one taken).
const SLAB = 1024 * 1024

const QUOTE = 0x22
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const NEWLINE = 0x0a

/** Bytes written into a Buffer, handed on a piece at a time (take()). */
class Bytes {
  constructor (size = SLAB) {
    this.size = size
    this.buf = Buffer.allocUnsafe(size)
    this.start = 0 // where the bytes not taken yet begin
    this.at = 0
  }

  get length () {
    return this.at - this.start
  }

  room (n) {
    if (this.at + n <= this.buf.length) return
    const held = this.at - this.start
    const next = Buffer.allocUnsafe(Math.max(this.size, 2 * (held + n)))
    this.buf.copy(next, 0, this.start, this.at)
    this.buf = next
    this.start = 0
    this.at = held
  }

  /** The bytes written since the last take(). */
  take () {
    const piece = this.buf.subarray(this.start, this.at)
    this.start = this.at
    if (this.buf.length - this.at < this.size / 4) {
      this.buf = Buffer.allocUnsafe(this.size)
      this.start = this.at = 0
    }
    return piece
  }

  /** One byte. */
  byte (c) {
    this.room(1)
    this.buf[this.at++] = c
  }

  /** Bytes of a few ASCII characters (a line's constant parts). */
  bytes (b) {
    const n = b.length
    this.room(n)
    const buf = this.buf
    let at = this.at
    for (let i = 0; i < n; i++) buf[at++] = b[i]
    this.at = at
  }

  /** A string of ASCII characters. */
  ascii (s) {
    const n = s.length
    this.room(n)
    const buf = this.buf
    let at = this.at
    for (let i = 0; i < n; i++) buf[at++] = s.charCodeAt(i)
    this.at = at
  }

  /** A string as UTF-8. */
  utf8 (s) {
    this.room(3 * s.length)
    this.at += this.buf.utf8Write(s, this.at)
  }

  /**
   * Bytes of printable ASCII without a quote or a backslash (their own JSON text), between
   * quotes; false (nothing written) when `b` holds another byte.
   */
  plain (b) {
    const n = b.length
    this.room(n + 2)
    const buf = this.buf
    let at = this.at
    buf[at++] = QUOTE
    for (let i = 0; i < n; i++) {
      const c = b[i]
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false
      buf[at++] = c
    }
    buf[at++] = QUOTE
    this.at = at
    return true
  }
}

/** Whether the bytes are written as a JSON string (else as the base64 object). */
function isText (b) {
  for (let i = 0; i < b.length; i++) if (b[i] > 0x7e) return isUtf8(b)
  return true
}

/** A JSON string of the bytes, or the base64 marker object. */
function text (o, b) {
  if (o.plain(b)) return
  if (isUtf8(b)) o.utf8(JSON.stringify(b.toString('utf8')))
  else o.ascii('{"base64":"' + b.toString('base64') + '"}')
}

function array (o, items) {
  o.byte(OPEN_ARRAY)
  for (let i = 0; i < items.length; i++) {
    if (i) o.byte(COMMA)
    text(o, items[i])
  }
  o.byte(CLOSE_ARRAY)
}

/** Flat [name, value, …] as an object, or as pairs when a name is not UTF-8 or repeats. */
function fields (o, flat) {
  for (let i = 0; i < flat.length; i += 2) if (!isText(flat[i])) return pairs(o, flat, text)
  if (repeats(flat)) return pairs(o, flat, text)
  o.byte(OPEN_OBJECT)
  for (let i = 0; i < flat.length; i += 2) {
    if (i) o.byte(COMMA)
    text(o, flat[i])
    o.byte(COLON)
    text(o, flat[i + 1])
  }
  o.byte(CLOSE_OBJECT)
}

/** Whether a name of flat [name, value, …] comes twice (the same bytes: the same JSON text). */
function repeats (flat) {
  if (flat.length <= 16) {
    for (let i = 2; i < flat.length; i += 2) for (let j = 0; j < i; j += 2) if (same(flat[i], flat[j])) return true
    return false
  }
  const names = new Set()
  for (let i = 0; i < flat.length; i += 2) names.add(flat[i].latin1Slice(0, flat[i].length))
  return names.size !== flat.length >> 1
}

function same (a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Flat [a, b, …] as [[a, b], …]; `second` writes each b. */
function pairs (o, flat, second) {
  o.byte(OPEN_ARRAY)
  for (let i = 0; i < flat.length; i += 2) {
    if (i) o.byte(COMMA)
    o.byte(OPEN_ARRAY)
    text(o, flat[i])
    o.byte(COMMA)
    second(o, flat[i + 1])
    o.byte(CLOSE_ARRAY)
  }
  o.byte(CLOSE_ARRAY)
}

/** A zset's score, as the server printed it (ASCII). */
function score (o, b) {
  if (!o.plain(b)) o.utf8(JSON.stringify(b.toString('latin1')))
}

function entries (o, list) {
  o.byte(OPEN_ARRAY)
  for (let i = 0; i < list.length; i++) {
    o.ascii((i ? ',' : '') + '{"id":"' + list[i].id + '","fields":')
    fields(o, list[i].fields)
    o.byte(CLOSE_OBJECT)
  }
  o.byte(CLOSE_ARRAY)
}

const VALUE = {
  string: text,
  hash: fields,
  list: array,
  set: array,
  zset: (o, v) => pairs(o, v, score),
  stream: entries
}

// A line's constant parts.
const KEY = Buffer.from('{"key":')
const TYPE_TTL = Object.fromEntries(Object.keys(VALUE).map(t => [t, Buffer.from(`,"type":"${t}","ttl":`)]))
const NULL = Buffer.from('null')
const VALUE_IS = Buffer.from(',"value":')

/** One record's line, written into `o`. */
function writeLine (o, r) {
  o.bytes(KEY)
  text(o, r.key)
  o.bytes(TYPE_TTL[r.type])
  if (r.ttl === null) o.bytes(NULL)
  else o.ascii(String(r.ttl))
  if (r.part > 1) o.ascii(',"part":' + r.part)
  o.bytes(VALUE_IS)
  VALUE[r.type](o, r.value)
  o.byte(CLOSE_OBJECT)
  o.byte(NEWLINE)
}

/** One record as its line (a string). */
function line (r) {
  const o = new Bytes(256)
  writeLine(o, r)
  return o.take().toString('utf8')
}

class NdjsonWriter {
  constructor (out) {
    this.output = new Output(out)
    this.piece = out.piece ?? CHUNK
    this.pending = new Bytes(Math.max(SLAB, 4 * this.piece))
  }

  write (record) {
    writeLine(this.pending, record)
    if (this.pending.length >= this.piece) return this.flush()
  }

  /** The lines not handed over yet, as one piece: undefined, or a Promise (backpressure). */
  flush () {
    if (this.pending.length === 0) return
    return this.output.write(this.pending.take())
  }

  async end () {
    await this.flush()
    await this.output.flush()
  }
}

function createWriter (out, options = {}) {
  return new NdjsonWriter(out, options)
}

module.exports = { createWriter, line }
