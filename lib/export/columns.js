'use strict'

const { PipeloadError } = require('../errors')
const { keyName } = require('./names')

// The field columns of a CSV or Parquet export: the `fields` option as given, or the union
// of the fields of the first rows in the order first seen. Decided once, before the first
// row is written (a file's header or schema cannot change afterwards); a later hash with a
// field outside them is refused rather than written without it.

const SHOWN = 40

class Columns {
  /**
   * @param {string[]} fields the field columns, in order
   * @param {{ format: string, fixed: string[], given: boolean }} how fixed: the format's own
   *   columns (key, …), which no field may be named; given: from the `fields` option
   */
  constructor (fields, { format, fixed, given }) {
    this.fields = fields
    this.format = format
    this.fixed = fixed
    this.given = given
    this.index = new Map(fields.map((f, i) => [f, i]))
  }

  /** From the `fields` option: each a distinct name, none a fixed column's. */
  static given (fields, how) {
    const seen = new Set()
    for (const f of fields) {
      if (typeof f !== 'string' || f === '') throw optionError(`fields: expected names, got ${JSON.stringify(f)}`)
      if (how.fixed.includes(f)) throw optionError(`fields: "${f}" is the name of a ${how.format} column of its own (${how.fixed.join(', ')}), so no field can have it`)
      if (seen.has(f)) throw optionError(`fields: "${f}" is named twice`)
      seen.add(f)
    }
    return new Columns([...fields], { ...how, given: true })
  }

  /** The union of the rows' fields, first seen first. */
  static sampled (rows, how) {
    const names = new Set()
    for (const row of rows) {
      if (row.fields) for (const f of row.fields.keys()) if (!how.fixed.includes(f)) names.add(f)
    }
    const columns = new Columns([...names], { ...how, given: false })
    for (const row of rows) columns.check(row)
    return columns
  }

  /** Throws when the row has a field that is not a column. */
  check (row) {
    if (!row.fields) return
    for (const f of row.fields.keys()) {
      if (!this.index.has(f)) throw this.unknown(row, f)
    }
  }

  unknown (row, field) {
    const name = JSON.stringify(field)
    if (this.fixed.includes(field)) {
      return new PipeloadError('PIPELOAD_EXPORT_FIELD_UNKNOWN', `${keyName(row.key)} has a field named ${name}, which is the name of a ${this.format} column of its own (${this.fixed.join(', ')}): export this key to NDJSON`, { key: row.key, field })
    }
    const from = this.given ? 'the --fields given' : 'the fields of the first keys'
    // A few dozen names are worth printing whole, ready to paste; thousands are not.
    const fix = this.fields.length <= SHOWN
      ? `(${from}: ${this.fields.join(',')}): name every field with --fields ${[...this.fields, field].join(',')}`
      : `(${from}, ${this.fields.length} of them): add it to --fields`
    return new PipeloadError('PIPELOAD_EXPORT_FIELD_UNKNOWN', `${keyName(row.key)} has the field ${name}, which is not among the ${this.format} columns ${fix}, or export to NDJSON`, { key: row.key, field })
  }
}

function optionError (message) {
  return new PipeloadError('PIPELOAD_OPTION_INVALID', message, { option: 'fields' })
}

module.exports = { Columns }
