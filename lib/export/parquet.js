'use strict'

const { Output } = require('./backpressure')
const { TableWriter, normalize, checkTable } = require('./table')
const { PipeloadError } = require('../errors')
const { FORMAT_TYPES } = require('./formats')
const statistics = require('./parquet-statistics')

// The Parquet writer of `pipeload export` (docs/export.md, "The Parquet format"): hashes and
// strings, one row per key. Columns: key, type, ttl, value (a string's), then the hash
// fields. key, value and the fields are BYTE_ARRAY without a STRING annotation, so that every
// byte survives (a key or value that is not UTF-8 too) and `pipeload import` sends them as
// they are; type is a STRING; ttl an optional INT64 (ms left). A field a hash lacks is null.
//
// Written with hyparquet-writer (an ES module: imported when the first row group is written)
// one row group at a time: rows are gathered until `rowGroupSize` rows or `rowGroupBytes`
// bytes, encoded, written to `out` (awaiting 'drain'), and let go; what stays is the footer's
// metadata, a few hundred bytes per column and row group.

const FIXED = ['key', 'type', 'ttl', 'value']
// A row group's bytes (keys and values) take several times as much while it is encoded (the
// values, their dictionary, the pages, compressed copies): 100k hashes of 20 fields of 200
// bytes peaked at 160 MB RSS with 16 MiB groups, 135 MB with 8 MiB, 130 MB with 4 MiB.
const DEFAULTS = Object.freeze({ rowGroupSize: 10000, rowGroupBytes: 8 * 1024 * 1024, codec: 'SNAPPY' })

let library = null
function hyparquetWriter () {
  if (library === null) library = import('hyparquet-writer')
  return library
}

function schemaOf (fields) {
  return [
    { name: 'root', num_children: FIXED.length + fields.length },
    { name: 'key', type: 'BYTE_ARRAY', repetition_type: 'REQUIRED' },
    { name: 'type', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'ttl', type: 'INT64', repetition_type: 'OPTIONAL' },
    { name: 'value', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
    ...fields.map(name => ({ name, type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' }))
  ]
}

class ParquetSink {
  constructor (out, options) {
    this.output = new Output(out)
    this.rowGroupSize = options.rowGroupSize
    this.rowGroupBytes = options.rowGroupBytes
    this.codec = options.codec
    this.names = null
    this.columns = null
    this.bytes = 0
    this.bytesOut = null
    this.writer = null
  }

  async begin (columns) {
    const { ParquetWriter, ByteWriter } = await hyparquetWriter()
    this.names = [...FIXED, ...columns.fields]
    this.fields = columns.fields
    this.bytesOut = new ByteWriter(1024 * 1024)
    this.writer = new ParquetWriter({ writer: this.bytesOut, schema: schemaOf(columns.fields), codec: this.codec, statisticsTruncateLength: statistics.TRUNCATE, createdBy: `pipeload ${require('../../package.json').version}` })
    this.empty()
  }

  empty () {
    this.columns = this.names.map(() => [])
    this.bytes = 0
  }

  row (row) {
    const c = this.columns
    c[0].push(row.key)
    c[1].push(row.type)
    c[2].push(row.ttl === null ? null : BigInt(row.ttl))
    c[3].push(row.type === 'string' ? row.value : null)
    for (let i = 0; i < this.fields.length; i++) c[4 + i].push(row.fields ? row.fields.get(this.fields[i]) ?? null : null)
    this.bytes += row.size
    if (c[0].length >= this.rowGroupSize || this.bytes >= this.rowGroupBytes) return this.writeGroup()
    return undefined
  }

  /** Encodes the rows gathered as one row group and hands its bytes to `out`. */
  writeGroup () {
    const n = this.columns[0].length
    const columnData = this.names.map((name, i) => ({ name, data: this.columns[i] }))
    this.empty()
    try {
      this.writer.write({ columnData, rowGroupSize: n })
      statistics.detach(this.writer.row_groups[this.writer.row_groups.length - 1])
    } catch (err) {
      throw new PipeloadError('PIPELOAD_INTERNAL', `the Parquet writer failed: ${err.message}`, { cause: err })
    }
    return this.send()
  }

  send () {
    const w = this.bytesOut
    const bytes = Buffer.from(w.buffer.slice(0, w.index)) // a copy: the writer's buffer is reused
    w.index = 0
    return this.output.write(bytes)
  }

  async end () {
    if (this.columns[0].length > 0) await this.writeGroup()
    this.writer.finish()
    await this.send()
    await this.output.flush()
  }
}

/**
 * A Parquet writer to `out` (not ended by end()). options: fields (the field columns;
 * default: the fields of the first `sample` keys), sample (100), maxRecordSize (bytes one
 * hash may hold, 64 MiB), rowGroupSize (rows, 10,000), rowGroupBytes (8 MiB), codec
 * ('SNAPPY', or 'UNCOMPRESSED').
 */
function createWriter (out, options = {}) {
  const { parquet, table } = split(options)
  return new TableWriter(new ParquetSink(out, parquet), normalize(table), HOW)
}

const HOW = Object.freeze({ format: 'Parquet', types: FORMAT_TYPES.parquet.types, typeHint: FORMAT_TYPES.parquet.hint, fixed: FIXED })

/** Throws PIPELOAD_OPTION_INVALID for options createWriter() would refuse. */
function checkOptions (options = {}) {
  checkTable(split(options).table, HOW)
}

/** The Parquet options (checked) and the table's (fields, sample, maxRecordSize). */
function split (options) {
  const { rowGroupSize, rowGroupBytes, codec, ...table } = { ...DEFAULTS, ...options }
  for (const [option, v] of [['rowGroupSize', rowGroupSize], ['rowGroupBytes', rowGroupBytes]]) {
    if (!Number.isSafeInteger(v) || v < 1) throw new PipeloadError('PIPELOAD_OPTION_INVALID', `${option}: expected a whole number ≥ 1, got ${v}`, { option })
  }
  if (codec !== 'SNAPPY' && codec !== 'UNCOMPRESSED') throw new PipeloadError('PIPELOAD_OPTION_INVALID', `codec: expected SNAPPY or UNCOMPRESSED, got ${codec}`, { option: 'codec' })
  return { parquet: { rowGroupSize, rowGroupBytes, codec }, table }
}

module.exports = { createWriter, checkOptions }
