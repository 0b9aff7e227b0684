'use strict'

// The format registry: the one place where the stages above read/ reach a format's code. The
// byte rows an input's records may be (read/row.js RowKind) are chosen from its shape, once
// per input, and loaded by the first input that gives them: a CSV run loads no Parquet code.

// Each RowKind by name, loaded on first use.
const KINDS = {
  csv: () => require('./csv/row').rows,
  json: () => require('./json/row').rows,
  parquet: () => require('./parquet/row').rows
}

/**
 * The RowKind of the byte rows an input of this shape may give: the one its shape names
 * (`rows`: a Parquet input reading text rows, parquet/input.js); else those of a text input,
 * CSV rows where the shape has columns (a CSV or TSV input) and JSON rows (an NDJSON input's
 * flat lines) where it has none.
 * @param {{ rows?: string, columns?: string[]|null }|null|undefined} shape
 * @returns {import('./row').RowKind}
 */
function rowKindOf (shape) {
  const name = shape && shape.rows !== undefined ? shape.rows : shape && shape.columns !== undefined ? 'csv' : 'json'
  const load = KINDS[name]
  if (load === undefined) throw new Error(`internal: no row kind "${name}"`)
  return load()
}

module.exports = { rowKindOf }
