'use strict'

const { JsonNumber } = require('../json-number')
const { ROW_GROUP, setField } = require('./values')
const { KEY_ORDER } = require('../json/value')
const { headOf } = require('../row') // the writers of encode/ read it from there: a CSV run loads no Parquet module

// A Parquet row as text (text.js): row r of a batch whose columns (the projected ones,
// in schema order) are ColumnBatches, each value the bytes the mapper sends for it (the text
// of the record value values.js gives); the mapper copies them into RESP
// (encode/mapper.js, writeParquet). A null has no bytes (start -1), as a JSON null. Each
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

module.exports = { ParquetRow, RowShape, headOf, STRING, NUMBER, JSON_NUMBER, BYTES, BOOLEAN }
