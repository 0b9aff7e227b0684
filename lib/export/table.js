'use strict'

const { PipeloadError } = require('../errors')
const { RowJoiner } = require('./rows')
const { Columns } = require('./columns')

// What the CSV and Parquet writers share: records joined into one row per key (rows.js),
// the columns decided once (columns.js: the `fields` option, or the first `sample` rows held
// back until they are known), then each row handed to the format's sink:
//   sink.begin(columns) → undefined | Promise   (the header, the schema)
//   sink.row(row)       → undefined | Promise   (a Promise: await it before the next row)
//   sink.end()          → Promise               (flush; `out` is not ended)

const DEFAULTS = Object.freeze({ fields: null, sample: 100, maxRecordSize: 64 * 1024 * 1024 })

function normalize (options = {}) {
  const o = { ...DEFAULTS, ...options }
  if (o.fields !== null && !Array.isArray(o.fields)) throw optionError('fields', `expected an array of field names, got ${typeof o.fields}`)
  if (!Number.isSafeInteger(o.sample) || o.sample < 1) throw optionError('sample', `expected a whole number of keys ≥ 1, got ${o.sample}`)
  if (!Number.isSafeInteger(o.maxRecordSize) || o.maxRecordSize < 1) throw optionError('maxRecordSize', `expected a number of bytes ≥ 1, got ${o.maxRecordSize}`)
  return Object.freeze(o)
}

/** Throws PIPELOAD_OPTION_INVALID for options a TableWriter of `how` would refuse. */
function checkTable (options, how) {
  const o = normalize(options)
  if (o.fields !== null) Columns.given(o.fields, how)
  return o
}

function optionError (option, message) {
  return new PipeloadError('PIPELOAD_OPTION_INVALID', `${option}: ${message}`, { option })
}

class TableWriter {
  /**
   * @param {object} sink the format's begin/row/end
   * @param {object} options normalized: fields, sample, maxRecordSize
   * @param {{ format: string, types: string[], typeHint: string, fixed: string[] }} how
   */
  constructor (sink, options, how) {
    this.sink = sink
    this.sample = options.sample
    this.how = { format: how.format, fixed: how.fixed }
    this.joiner = new RowJoiner({ format: how.format, types: how.types, typeHint: how.typeHint, maxRecordSize: options.maxRecordSize })
    this.columns = options.fields === null ? null : Columns.given(options.fields, this.how)
    this.held = []
    this.begun = false
  }

  /** Takes a record; undefined or a Promise to await before the next. */
  write (record) {
    const row = this.joiner.push(record)
    return row === null ? undefined : this.take(row)
  }

  async end () {
    const row = this.joiner.end()
    if (row !== null) await this.take(row)
    if (!this.begun) await this.begin()
    await this.sink.end()
  }

  take (row) {
    if (!this.begun) {
      if (this.columns === null) {
        this.held.push(row)
        return this.held.length >= this.sample ? this.begin() : undefined
      }
      return this.begin().then(() => this.put(row))
    }
    return this.put(row)
  }

  put (row) {
    this.columns.check(row)
    return this.sink.row(row)
  }

  /** Decides the columns (from the rows held, if no `fields`), begins the sink, writes the rows held. */
  async begin () {
    if (this.columns === null) this.columns = Columns.sampled(this.held, this.how)
    this.begun = true
    await this.sink.begin(this.columns)
    const held = this.held
    this.held = []
    for (const row of held) await this.put(row)
  }
}

module.exports = { TableWriter, normalize, checkTable }
