'use strict'

const { PipeloadError } = require('../../errors')
const { FieldMissing } = require('../row')
const { delimiterHint } = require('./header')

const QUOTE = 34

/**
 * A CSV record as byte ranges of its input buffer, without a string per field: the
 * mapper copies the bytes straight into RESP (the writers of `rows` below). Field k spans
 * [b[i + 2k], b[i + 2k + 1]) of `buf`; a quoted field holding `""` stores its start as
 * -(start + 1), and its bytes are copied with each `""` turned into `"`.
 * `b` is a bounds table shared by many rows (see FastCsvCore).
 */
class CsvRow {
  constructor (buf, b, i, n) {
    this.buf = buf
    this.b = b
    this.i = i
    this.n = n // number of fields
  }

  /** Field k as a string. */
  field (k) {
    const s = this.b[this.i + 2 * k]
    const e = this.b[this.i + 2 * k + 1]
    if (s >= 0) return this.buf.toString('utf8', s, e)
    return this.buf.toString('utf8', -s - 1, e).replaceAll('""', '"')
  }

  /** The record as csv-parse gives it: an array of strings. */
  toArray () {
    const out = new Array(this.n)
    for (let k = 0; k < this.n; k++) out[k] = this.field(k)
    return out
  }

  /** The plain record (read/row.js). */
  toPlain () {
    return this.toArray()
  }

  toJSON () {
    return this.toArray()
  }
}

/**
 * A field's column: by name in the input's columns, or {n} for the n-th. A name that is no
 * column is refused once, when the template is compiled (the record's fields are not looked at).
 */
function columnIndex (name, shape, template) {
  const columns = shape.columns
  let idx = columns ? columns.indexOf(name) : -1
  if (idx === -1 && /^\d+$/.test(name)) idx = Number(name)
  if (idx === -1) {
    const known = columns ? `columns are: ${columns.join(', ')}` : 'the input has no header: use {0}, {1}, …'
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID',
      `template "${template}" uses {${name}}, which is not a column of ${shape.file || 'the input'} (${known})${delimiterHint(columns)}`,
      { template, field: name })
  }
  return idx
}

/**
 * A word's writer (read/row.js RowKind): its fields copied as spans of the row's bytes, by
 * column; a headerless {n} past the row's end is missing. `parts`: literal texts and { name }.
 */
function word (parts, shape, template) {
  const fields = parts.filter(p => typeof p !== 'string')
  const ks = fields.map(p => columnIndex(p.name, shape, template))
  if (parts.length === 1) {
    const k = ks[0]
    const name = fields[0].name
    return (row, w) => {
      if (k >= row.n) throw new FieldMissing(name)
      const j = row.i + 2 * k
      const s = row.b[j]
      if (s >= 0) w.span(row.buf, s, row.b[j + 1])
      else quoted(w, row.buf, s, row.b[j + 1])
    }
  }
  const texts = parts.map(p => typeof p === 'string' ? Buffer.from(p) : null)
  const spans = new Int32Array(2 * ks.length)
  return (row, w) => {
    let quoted = false
    for (let m = 0; m < ks.length; m++) {
      const k = ks[m]
      if (k >= row.n) throw new FieldMissing(fields[m].name)
      const j = row.i + 2 * k
      const s = row.b[j]
      if (s < 0) quoted = true
      spans[2 * m] = s
      spans[2 * m + 1] = row.b[j + 1]
    }
    if (quoted) quotedParts(w, texts, row.buf, spans)
    else w.spanParts(texts, row.buf, spans)
  }
}

const ONE = [null]
const PAIR = new Int32Array(2)

/** A quoted field holding `""` as one bulk string. */
function quoted (w, src, s, e) {
  PAIR[0] = s
  PAIR[1] = e
  quotedParts(w, ONE, src, PAIR)
}

/** `*`: each column's name (`nameBytes`, a bulk string) and value. */
function star (shape, nameBytes) {
  const names = shape.columns || null
  const nameOf = i => names ? names[i] : String(i)
  const bulks = []
  return {
    count: row => row.n * 2,
    write (row, w) {
      const b = row.b
      for (let k = 0, j = row.i; k < row.n; k++, j += 2) {
        w.bytes(bulks[k] ?? (bulks[k] = nameBytes(nameOf(k))))
        const s = b[j]
        if (s >= 0) w.span(row.buf, s, b[j + 1])
        else quoted(w, row.buf, s, b[j + 1])
      }
    }
  }
}

/**
 * One bulk string of constant parts and spans of `src`, where a span may be a quoted field
 * holding `""` (its start stored as -(start + 1)): each `""` in it is written as one `"`.
 */
function quotedParts (w, parts, src, spans) {
  let len = 0
  for (let i = 0, k = 0; i < parts.length; i++) {
    if (parts[i] === null) {
      len += spanLength(src, spans[k], spans[k + 1])
      k += 2
    } else len += parts[i].length
  }
  w.bulkHead(len)
  const buf = w.buf
  let p = w.pos
  for (let i = 0, k = 0; i < parts.length; i++) {
    const part = parts[i]
    if (part === null) {
      const s = spans[k]
      const e = spans[k + 1]
      k += 2
      if (s >= 0) {
        for (let x = s; x < e; x++) buf[p++] = src[x]
      } else {
        for (let x = -s - 1; x < e; x++) {
          const c = src[x]
          buf[p++] = c
          if (c === QUOTE) x++
        }
      }
    } else {
      for (let x = 0; x < part.length; x++) buf[p++] = part[x]
    }
  }
  w.pos = p
  w.crlf()
}

/** Length in bytes of what a span stands for. */
function spanLength (src, s, e) {
  if (s >= 0) return e - s
  let n = e + s + 1
  for (let i = -s - 1; i < e; i++) {
    if (src[i] === QUOTE) { n--; i++ }
  }
  return n
}

/** The RowKind of CsvRows (read/row.js). */
const rows = { name: 'csv', Row: CsvRow, word, star, columnIndex }

module.exports = { CsvRow, rows, columnIndex }
