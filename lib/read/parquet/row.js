'use strict'

const { JsonNumber } = require('../json-number')
const { ROW_GROUP, setField } = require('./values')
const { KEY_ORDER, FieldMissing } = require('../row')


// A Parquet row as text (text.js): row r of a batch whose columns (the projected ones,
// in schema order) are ColumnBatches, each value the bytes the mapper sends for it (the text
// of the record value values.js gives); the mapper copies them into RESP
// (the writers of `rows` below). A null has no bytes (start -1), as a JSON null. Each
// value's kind is kept beside it, so that toObject() gives back the record the object reader
// gives, exactly: a string, a number, a JsonNumber (64-bit integers past 2^53, decimals,
// -0), bytes, a boolean.

const STRING = 1
const NUMBER = 2
const JSON_NUMBER = 3
const BYTES = 4
const BOOLEAN = 5

/**
 * What the rows of a row group share: the group, the column names, and the records' prototype
 * as ParquetFile.records makes it (the row group under ROW_GROUP, the key order for `*`).
 */
class RowShape {
  constructor (group, columns) {
    this.group = group
    this.columns = columns
    this.proto = { [ROW_GROUP]: group, [KEY_ORDER]: columns }
  }
}

class ParquetRow {
  constructor (cols, r, shape) {
    this.cols = cols
    this.r = r
    this.shape = shape
  }

  get [ROW_GROUP] () {
    return this.shape.group
  }

  /** The record ParquetFile.records gives for the row: column -> value, null for null. */
  toObject () {
    const { columns, proto } = this.shape
    const rec = Object.create(proto)
    const r = this.r
    for (let k = 0; k < columns.length; k++) {
      const c = this.cols[k]
      const s = c.spans[2 * r]
      setField(rec, columns[k], s === -1 ? null : valueOf(c.buf, s, c.spans[2 * r + 1], c.tags[r]))
    }
    return rec
  }

  /** The plain record (read/row.js). */
  toPlain () {
    return this.toObject()
  }

  toJSON () {
    return this.toObject()
  }
}

function valueOf (buf, s, e, tag) {
  switch (tag) {
    case STRING: return buf.toString('utf8', s, e)
    case NUMBER: return Number(buf.latin1Slice(s, e))
    case JSON_NUMBER: return new JsonNumber(buf.latin1Slice(s, e))
    case BYTES: return Buffer.from(buf.subarray(s, e))
    case BOOLEAN: return buf[s] === 0x74 // t
    default: throw new Error(`internal: a Parquet text value of kind ${tag}`)
  }
}

/**
 * Where the bulk string of the text at [start, end) starts: `$`, the length's digits and CRLF
 * before it (text.js writes each value so, arena.js keeps them so).
 */
function headOf (start, end) {
  const len = end - start
  return start - 3 - (len < 10 ? 1 : len < 100 ? 2 : len < 1000 ? 3 : len < 10000 ? 4 : String(len).length)
}

/**
 * A word's writer (read/row.js RowKind) for the text rows of an input whose `parquetColumns`
 * the shape names: the word's fields copied from the row's column batches. A null is missing,
 * as a record's null field is. null when a field is no column (the record is then made an
 * object first, and fails as it would).
 */
function word (parts, shape) {
  const columns = shape.parquetColumns
  const fields = parts.filter(p => typeof p !== 'string')
  const ks = fields.map(p => columns.indexOf(p.name))
  if (ks.includes(-1)) return null
  if (parts.length === 1) {
    const k = ks[0]
    const name = fields[0].name
    return (row, w) => {
      const c = row.cols[k]
      const r = row.r
      const s = presentAt(c, r, name)
      const e = c.spans[2 * r + 1]
      w.raw(c.buf, headOf(s, e), e + 2) // the value's bulk string
    }
  }
  const texts = parts.map(p => typeof p === 'string' ? Buffer.from(p) : null)
  if (ks.length === 1) { // `flight:{id}`: constant text around one column's value
    const at = texts.indexOf(null)
    const around = { before: Buffer.concat(texts.slice(0, at)), after: Buffer.concat(texts.slice(at + 1)) }
    const k = ks[0]
    const name = fields[0].name
    return (row, w) => {
      const c = row.cols[k]
      const r = row.r
      w.spanBetween(around, c.buf, presentAt(c, r, name), c.spans[2 * r + 1])
    }
  }
  const srcs = new Array(ks.length)
  const spans = new Int32Array(2 * ks.length)
  return (row, w) => {
    for (let m = 0; m < ks.length; m++) {
      const c = row.cols[ks[m]]
      srcs[m] = c.buf
      spans[2 * m] = presentAt(c, row.r, fields[m].name)
      spans[2 * m + 1] = c.spans[2 * row.r + 1]
    }
    w.spanParts(texts, srcs, spans)
  }
}

/** Where row r's value starts in a ColumnBatch; a null fails the record, as a record's null field does. */
function presentAt (c, r, name) {
  const s = c.spans[2 * r]
  if (s === -1) throw new FieldMissing(name, `field "${name}" is null`)
  return s
}

/**
 * `*` of rows read with each value's column name before it (`parquetNames`: text.js, `pre`
 * bytes): the name and value of each column, one span each, a null left out. Others: null
 * (their records go as objects).
 */
function star (shape) {
  if (!shape.parquetNames) return null
  return {
    count (row) {
      let n = 0
      for (let k = 0; k < row.cols.length; k++) if (row.cols[k].spans[2 * row.r] !== -1) n += 2
      return n
    },
    write (row, w) {
      const cols = row.cols
      const r = row.r
      for (let k = 0; k < cols.length; k++) {
        const c = cols[k]
        const s = c.spans[2 * r]
        if (s === -1) continue
        const e = c.spans[2 * r + 1] + 2
        w.rawView(c.view, headOf(s, e - 2) - c.pre, e)
      }
    }
  }
}

/** The RowKind of ParquetRows (read/row.js). */
const rows = { name: 'parquet', Row: ParquetRow, word, star }

module.exports = { rows, ParquetRow, RowShape, headOf, STRING, NUMBER, JSON_NUMBER, BYTES, BOOLEAN }
