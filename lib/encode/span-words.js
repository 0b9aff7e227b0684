'use strict'

const { FIELD } = require('./template')
const { FieldMissing } = require('./values')
const { columnIndex } = require('./fields')
const { headOf } = require('../read/row-marks')

// The writers of a template word for the readers' byte rows (mapper.js's hot path): a
// CsvRow's or JsonRow's fields, or a ParquetRow's column values, copied into RESP as spans of
// the bytes read, with no string made per field. Each returns null where the row cannot give
// a field this way; the record is then made a plain record first.

/**
 * write() for a CsvRow or JsonRow: the word's fields copied as spans of the row's bytes.
 * `locators[m](row)` gives where in row.b the m-th field's [start, end) is, or throws
 * for a missing field; null locators (a JSON dotted path) give null.
 */
function compileSpanWord (word, locators) {
  if (locators === null) return null
  if (word.parts.length === 1) {
    const at = locators[0]
    return (row, w) => {
      const j = at(row)
      w.span(row.buf, row.b[j], row.b[j + 1])
    }
  }
  const parts = word.parts.map(p => p.type === FIELD ? null : Buffer.from(p.text))
  const spans = new Int32Array(2 * locators.length)
  return (row, w) => {
    for (let m = 0; m < locators.length; m++) {
      const j = locators[m](row)
      spans[2 * m] = row.b[j]
      spans[2 * m + 1] = row.b[j + 1]
    }
    w.spanParts(parts, row.buf, spans)
  }
}

/** CsvRow fields by column; a headerless {n} past the row's end is missing. */
function rowLocators (word, shape, template) {
  return word.parts.filter(p => p.type === FIELD).map(p => {
    const k = columnIndex(p.name, shape, template)
    return row => {
      if (k >= row.n) throw new FieldMissing(p.name)
      return row.i + 2 * k
    }
  })
}

/** JsonRow values by key; null when a name is a dotted path (the record is then made an object first). */
function jsonLocators (word) {
  const fields = word.parts.filter(p => p.type === FIELD)
  if (fields.some(p => p.name.includes('.'))) return null
  return fields.map(p => {
    const bytes = Buffer.from(p.name)
    return row => valueAt(row, bytes, p.name) + 2
  })
}

/** Where in row.b the pair named `bytes` starts; a missing or null value throws, as toArg does. */
function valueAt (row, bytes, name) {
  const k = row.find(bytes)
  if (k === -1) throw new FieldMissing(name)
  const j = row.i + 4 * k
  if (row.b[j + 2] === -1) throw new FieldMissing(name, `field "${name}" is null`)
  return j
}

/**
 * write() for a ParquetRow (read/parquet-row.js, the text rows of a Parquet input whose
 * `columns` the shape names): the word's fields copied from the row's column batches. A null
 * is missing, as a record's null field is. null when a field is no column (the record is
 * then made an object first, and fails as it would).
 */
function compileColumnWord (word, columns) {
  const fields = word.parts.filter(p => p.type === FIELD)
  const ks = fields.map(p => columns.indexOf(p.name))
  if (ks.includes(-1)) return null
  if (word.parts.length === 1) {
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
  const parts = word.parts.map(p => p.type === FIELD ? null : Buffer.from(p.text))
  if (ks.length === 1) { // `flight:{id}`: constant text around one column's value
    const at = parts.indexOf(null)
    const around = { before: Buffer.concat(parts.slice(0, at)), after: Buffer.concat(parts.slice(at + 1)) }
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
    w.spanParts(parts, srcs, spans)
  }
}

/** Where row r's value starts in a Parquet ColumnBatch; a null fails the record, as a record's null field does. */
function presentAt (c, r, name) {
  const s = c.spans[2 * r]
  if (s === -1) throw new FieldMissing(name, `field "${name}" is null`)
  return s
}

module.exports = { compileSpanWord, rowLocators, jsonLocators, compileColumnWord }
