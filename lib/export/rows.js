'use strict'

const { isUtf8 } = require('node:buffer')
const { PipeloadError } = require('../errors')
const { shown, keyName } = require('./names')

// Records to rows, for the formats that write one row per key (CSV, Parquet). A big key
// comes as several records (part 1, then 2, 3, … for its further pages, one after another);
// the joiner merges them into one row, held until the next key's first record (or the end)
// shows the row is whole. `maxRecordSize` bounds what one row may hold in memory, and
// MAX_FIELDS its fields: each is a column, and a field costs far more than its bytes while it
// is held (a Map entry, a string, a Buffer object: ~150 bytes), and more again as a Parquet
// column. Measured before this bound: one hash of 500,000 short fields (7 MB) peaked at
// 341 MB RSS as a CSV row and 1.7 GB as a Parquet row of 500,000 columns.
const MAX_FIELDS = 10_000

/**
 * A whole key: { key: Buffer, type, ttl, value: Buffer } for a string,
 * { key, type: 'hash', ttl, fields: Map<string, Buffer>, size } for a hash.
 */
class RowJoiner {
  /** @param {{ format: string, types: string[], maxRecordSize: number, typeHint: string }} o */
  constructor ({ format, types, maxRecordSize, typeHint }) {
    this.format = format
    this.types = types
    this.maxRecordSize = maxRecordSize
    this.typeHint = typeHint
    this.pending = null
  }

  /** Takes a record; returns the row it completed (the previous key's), or null. */
  push (record) {
    if (!this.types.includes(record.type)) throw this.typeError(record)
    if (record.part >= 2) {
      this.continue(record)
      return null
    }
    const done = this.pending
    this.pending = this.start(record)
    return done
  }

  /** The last row, or null. */
  end () {
    const done = this.pending
    this.pending = null
    return done
  }

  start (record) {
    if (record.type === 'string') return { key: record.key, type: 'string', ttl: record.ttl, value: record.value, size: record.key.length + record.value.length }
    const row = { key: record.key, type: 'hash', ttl: record.ttl, fields: new Map(), size: record.key.length }
    this.addFields(row, record.value)
    return row
  }

  continue (record) {
    const row = this.pending
    // The reading engine sends a key's parts one after another: anything else is its bug.
    if (row === null || row.type !== record.type || !row.key.equals(record.key)) {
      throw new PipeloadError('PIPELOAD_INTERNAL', `part ${record.part} of ${keyName(record.key)} came without the key's first part just before it`, { key: record.key })
    }
    this.addFields(row, record.value)
  }

  addFields (row, flat) {
    for (let i = 0; i < flat.length; i += 2) {
      const name = flat[i]
      if (!isUtf8(name)) {
        throw new PipeloadError('PIPELOAD_EXPORT_NOT_TEXT', `${keyName(row.key)}: the field name ${shown(name)} is not valid UTF-8, and ${this.format} column names are text: export this key to NDJSON, which keeps every byte`, { key: row.key, field: name })
      }
      row.fields.set(name.toString('utf8'), flat[i + 1])
      row.size += name.length + flat[i + 1].length
    }
    if (row.fields.size > MAX_FIELDS) {
      throw new PipeloadError('PIPELOAD_RECORD_TOO_LARGE', `${keyName(row.key)} is a hash of more than ${MAX_FIELDS.toLocaleString('en-US')} fields, too many for one ${this.format} row (a column each): export it to NDJSON, which writes a big key in parts`, { key: row.key, maxFields: MAX_FIELDS })
    }
    if (row.size > this.maxRecordSize) {
      throw new PipeloadError('PIPELOAD_RECORD_TOO_LARGE', `${keyName(row.key)} is a hash of more than ${this.maxRecordSize} bytes (maxRecordSize), too big for one ${this.format} row: export it to NDJSON, which writes a big key in parts, or raise --max-record-size (maxRecordSize)`, { key: row.key, maxRecordSize: this.maxRecordSize })
    }
  }

  typeError (record) {
    return new PipeloadError('PIPELOAD_EXPORT_TYPE_UNSUPPORTED', `${keyName(record.key)} is a ${record.type}, and ${this.format} writes ${this.typeHint}: export only those (--type ${this.types.join(',')}), or to NDJSON, which writes every type`, { key: record.key, type: record.type })
  }
}

module.exports = { RowJoiner, MAX_FIELDS }
