'use strict'

const { isUtf8 } = require('node:buffer')
const { drained } = require('./drain')

// The NDJSON writer (docs/export.md "The NDJSON format"): one line per record, written as
// bytes into a Buffer and handed to `out` in pieces of about CHUNK bytes. A string that is
// not valid UTF-8 is {"base64":"…"}; a hash (a stream entry's fields) an object, or
// [name, value] pairs when a name is not valid UTF-8 or repeats. Most keys, fields and values
// are printable ASCII, copied byte for byte between quotes: no string is made of them.

// Few, large writes to the output and the file (1M hashes of 5 fields: 105 MB).
const CHUNK = 64 * 1024
// The Buffer lines are written into; each chunk handed to `out` is a piece of it (`out` holds
// it until written, so a full one is left to the GC and a new one taken).
const SLAB = 1024 * 1024

const QUOTE = 0x22

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
    if (this.buf.length - this.at < CHUNK) {
      this.buf = Buffer.allocUnsafe(this.size)
      this.start = this.at = 0
    }
    return piece
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
  o.ascii('[')
  for (let i = 0; i < items.length; i++) {
    if (i) o.ascii(',')
    text(o, items[i])
  }
  o.ascii(']')
}

/** Flat [name, value, …] as an object, or as pairs when a name is not UTF-8 or repeats. */
function fields (o, flat) {
  for (let i = 0; i < flat.length; i += 2) if (!isText(flat[i])) return pairs(o, flat, text)
  if (repeats(flat)) return pairs(o, flat, text)
  o.ascii('{')
  for (let i = 0; i < flat.length; i += 2) {
    if (i) o.ascii(',')
    text(o, flat[i])
    o.ascii(':')
    text(o, flat[i + 1])
  }
  o.ascii('}')
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
  o.ascii('[')
  for (let i = 0; i < flat.length; i += 2) {
    o.ascii(i ? ',[' : '[')
    text(o, flat[i])
    o.ascii(',')
    second(o, flat[i + 1])
    o.ascii(']')
  }
  o.ascii(']')
}

/** A zset's score, as the server printed it (ASCII). */
function score (o, b) {
  if (!o.plain(b)) o.utf8(JSON.stringify(b.toString('latin1')))
}

function entries (o, list) {
  o.ascii('[')
  for (let i = 0; i < list.length; i++) {
    o.ascii((i ? ',' : '') + '{"id":"' + list[i].id + '","fields":')
    fields(o, list[i].fields)
    o.ascii('}')
  }
  o.ascii(']')
}

const VALUE = {
  string: text,
  hash: fields,
  list: array,
  set: array,
  zset: (o, v) => pairs(o, v, score),
  stream: entries
}

/** One record's line, written into `o`. */
function writeLine (o, r) {
  o.ascii('{"key":')
  text(o, r.key)
  o.ascii(',"type":"' + r.type + '","ttl":' + (r.ttl === null ? 'null' : r.ttl) + (r.part > 1 ? ',"part":' + r.part : '') + ',"value":')
  VALUE[r.type](o, r.value)
  o.ascii('}\n')
}

/** One record as its line (a string). */
function line (r) {
  const o = new Bytes(256)
  writeLine(o, r)
  return o.take().toString('utf8')
}

class NdjsonWriter {
  constructor (out) {
    this.out = out
    this.pending = new Bytes()
  }

  write (record) {
    writeLine(this.pending, record)
    if (this.pending.length >= CHUNK) return this.flush()
  }

  flush () {
    if (this.pending.length === 0) return
    const chunk = this.pending.take()
    if (!this.out.write(chunk)) return drained(this.out)
  }

  async end () {
    await this.flush()
  }
}

function createWriter (out, options = {}) {
  return new NdjsonWriter(out, options)
}

module.exports = { createWriter, line }
