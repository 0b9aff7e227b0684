'use strict'

const { isUtf8 } = require('node:buffer')
const { drained } = require('./drain')

// The NDJSON writer (docs/export.md "The NDJSON format"): one line per record, written as
// text and handed to `out` in pieces of about CHUNK characters. A string that is not valid
// UTF-8 is {"base64":"…"}; a hash (a stream entry's fields) an object, or [name, value]
// pairs when a name is not valid UTF-8 or repeats.

const CHUNK = 64 * 1024

/** A JSON string of the bytes, or the base64 marker object. */
function text (b) {
  // Printable ASCII without a quote or a backslash (most keys, fields and values) is its own
  // JSON text: no decoding, no escaping.
  const n = b.length
  if (n <= 256) {
    let i = 0
    while (i < n) {
      const c = b[i]
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) break
      i++
    }
    if (i === n) return '"' + b.latin1Slice(0, n) + '"'
  }
  return isUtf8(b) ? JSON.stringify(b.toString('utf8')) : '{"base64":"' + b.toString('base64') + '"}'
}

function array (items) {
  let s = '['
  for (let i = 0; i < items.length; i++) s += (i ? ',' : '') + text(items[i])
  return s + ']'
}

/** Flat [name, value, …] as an object, or as pairs when a name is not UTF-8 or repeats. */
function fields (flat) {
  // A name's JSON text stands for its bytes (one text per byte sequence): compared for repeats.
  const names = new Array(flat.length >> 1)
  for (let i = 0; i < flat.length; i += 2) {
    const name = text(flat[i])
    if (name.charCodeAt(0) !== 0x22) return pairs(flat, text) // the base64 object
    names[i >> 1] = name
  }
  if (repeats(names)) return pairs(flat, text)
  let s = '{'
  for (let i = 0; i < names.length; i++) s += (i ? ',' : '') + names[i] + ':' + text(flat[2 * i + 1])
  return s + '}'
}

function repeats (names) {
  if (names.length <= 8) {
    for (let i = 1; i < names.length; i++) for (let j = 0; j < i; j++) if (names[i] === names[j]) return true
    return false
  }
  return new Set(names).size !== names.length
}

/** Flat [a, b, …] as [[a, b], …]; `second` writes each b. */
function pairs (flat, second) {
  let s = '['
  for (let i = 0; i < flat.length; i += 2) s += (i ? ',[' : '[') + text(flat[i]) + ',' + second(flat[i + 1]) + ']'
  return s + ']'
}

/** A zset's score, as the server printed it (ASCII). */
function score (b) {
  return JSON.stringify(b.toString('latin1'))
}

function entries (list) {
  let s = '['
  for (let i = 0; i < list.length; i++) s += (i ? ',' : '') + '{"id":"' + list[i].id + '","fields":' + fields(list[i].fields) + '}'
  return s + ']'
}

const VALUE = {
  string: text,
  hash: fields,
  list: array,
  set: array,
  zset: v => pairs(v, score),
  stream: entries
}

/** One record as its line. */
function line (r) {
  return '{"key":' + text(r.key) + ',"type":"' + r.type + '","ttl":' + (r.ttl === null ? 'null' : r.ttl) +
    (r.part > 1 ? ',"part":' + r.part : '') + ',"value":' + VALUE[r.type](r.value) + '}\n'
}

class NdjsonWriter {
  constructor (out) {
    this.out = out
    this.pending = ''
  }

  write (record) {
    this.pending += line(record)
    if (this.pending.length >= CHUNK) return this.flush()
  }

  flush () {
    const chunk = this.pending
    this.pending = ''
    if (chunk !== '' && !this.out.write(chunk)) return drained(this.out)
  }

  async end () {
    await this.flush()
  }
}

function createWriter (out, options = {}) {
  return new NdjsonWriter(out, options)
}

module.exports = { createWriter, line }
