'use strict'

// Parquet fixtures for the tests, written by DuckDB (@duckdb/node-api, a devDependency): an
// implementation independent of the reader under test (hyparquet), so that expected values
// come from what the test generated, never from the code that reads them back.
//
// writeRows(): the test's rows (column -> text, null for null) go to DuckDB as a CSV of
// texts, each cast there to its column's SQL type, then COPY ... TO a Parquet file with the
// options given (codec, row group size, page version).

const fs = require('node:fs')
const path = require('node:path')

let instance = null

async function duck () {
  if (instance === null) {
    const { DuckDBInstance } = require('@duckdb/node-api')
    instance = (await DuckDBInstance.create(':memory:')).connect()
  }
  return instance
}

/** Runs SQL; returns its rows as arrays. */
async function sql (text) {
  const c = await duck()
  return (await c.runAndReadAll(text)).getRows()
}

function csvField (v) {
  if (v === null || v === undefined) return '\\N'
  return '"' + String(v).replace(/"/g, '""') + '"'
}

function quoteId (name) {
  return '"' + name.replace(/"/g, '""') + '"'
}

/**
 * Writes `rows` (objects of text) as a Parquet file. `columns`: [[name, sqlType, expr?]]:
 * expr (SQL over the text column `v`) turns the text into the value, CAST(v AS sqlType) by
 * default. `options`: the COPY options, e.g. "COMPRESSION zstd, ROW_GROUP_SIZE 2048".
 */
async function writeRows (file, columns, rows, options = 'COMPRESSION zstd', prelude = []) {
  const csv = file + '.src.csv'
  const lines = [columns.map(([name]) => csvField(name)).join(',')]
  for (const r of rows) lines.push(columns.map(([name]) => csvField(r[name])).join(','))
  fs.writeFileSync(csv, lines.join('\n') + '\n')
  for (const p of prelude) await sql(p)
  const types = columns.map(([name]) => `${quoteId(name)}: 'VARCHAR'`).join(', ')
  const select = columns.map(([name, type, expr]) => `${(expr || 'CAST(v AS TYPE)').replace(/\bv\b/g, quoteId(name)).replace('TYPE', type)} AS ${quoteId(name)}`).join(', ')
  await sql(`COPY (SELECT ${select} FROM read_csv('${csv}', header = true, quote = '"', escape = '"', nullstr = '\\N', allow_quoted_nulls = false, columns = {${types}})) TO '${file}' (FORMAT parquet, ${options})`)
  fs.unlinkSync(csv)
  return file
}

/** Writes the rows of a SELECT as a Parquet file. */
async function writeQuery (file, select, options = 'COMPRESSION zstd') {
  await sql(`COPY (${select}) TO '${file}' (FORMAT parquet, ${options})`)
  return file
}

/** DuckDB's view of a file's column chunks: [{ rowGroup, column, codec, encodings, start, end }]. */
async function chunksOf (file) {
  const rows = await sql(`SELECT row_group_id, path_in_schema, compression, encodings, coalesce(dictionary_page_offset, data_page_offset), total_compressed_size FROM parquet_metadata('${file}')`)
  return rows.map(([g, p, codec, enc, start, size]) => ({ rowGroup: Number(g), column: p, codec, encodings: enc, start: Number(start), end: Number(start) + Number(size) }))
}

/** A temporary folder for a test file's fixtures. */
function fixtureDir (tmp, name) {
  const dir = path.join(tmp, name)
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

module.exports = { sql, writeRows, writeQuery, chunksOf, fixtureDir }
