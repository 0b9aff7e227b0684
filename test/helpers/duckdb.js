'use strict'

// Parquet fixtures written at test time by DuckDB (@duckdb/node-api, a devDependency): an
// implementation independent of the reader under test, so what a test expects comes from
// the writer, never from the reader. Also DuckDB's own view of a file's row groups (rows,
// byte spans of their column chunks), for tests that check which row groups were read.

/** One in-memory DuckDB connection per test process, opened when first needed. */
let connecting = null
function connection () {
  if (connecting === null) {
    connecting = (async () => {
      const { DuckDBInstance } = require('@duckdb/node-api')
      const db = await DuckDBInstance.create(':memory:')
      const conn = await db.connect()
      await conn.run('SET preserve_insertion_order = true')
      return conn
    })()
  }
  return connecting
}

const literal = s => `'${String(s).replace(/'/g, "''")}'`

/**
 * Write the rows of `select` (SQL) to `file` as Parquet. `rowGroupSize` rows per row group
 * (DuckDB rounds it up to a multiple of 2,048), `compression` as DuckDB names it.
 */
async function writeParquet (file, select, { rowGroupSize = 2048, compression = 'zstd' } = {}) {
  const conn = await connection()
  await conn.run(`COPY (${select}) TO ${literal(file)} (FORMAT parquet, COMPRESSION ${compression}, ROW_GROUP_SIZE ${rowGroupSize})`)
  return file
}

/** Rows of a query, as arrays of JS values (BigInt for 64-bit integers). */
async function query (sql) {
  const conn = await connection()
  return (await conn.runAndReadAll(sql)).getRows()
}

/**
 * The row groups of a Parquet file as DuckDB reads its footer: per group, its rows and the
 * byte span [start, end) its column chunks take (dictionary and data pages).
 */
async function rowGroups (file) {
  const rows = await query(`SELECT row_group_id, any_value(row_group_num_rows),
      min(coalesce(least(dictionary_page_offset, data_page_offset), data_page_offset)), max(data_page_offset + total_compressed_size)
    FROM parquet_metadata(${literal(file)}) GROUP BY row_group_id ORDER BY row_group_id`)
  return rows.map(([, n, start, end]) => ({ rows: Number(n), start: Number(start), end: Number(end) }))
}

module.exports = { writeParquet, query, rowGroups }
