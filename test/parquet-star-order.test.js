'use strict'
/* global describe, it, expect, beforeAll */

// `*` writes a Parquet row's columns in schema order (issue 24 item 2), also columns named
// like integers, which a plain JS object would list first (Object.keys puts "10" before "a").
// The schema order is DuckDB's, which wrote the file.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { dryRunIntoMemory } = require('./helpers/dry-run')
const { writeQuery, sql } = require('./helpers/parquet')

let file
beforeAll(async () => {
  file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-star-order-')), 'order.parquet')
  await writeQuery(file, `SELECT i AS a, i * 10 AS "10", 'x' || i AS b, NULL::INT AS "2024", i + 1 AS "0" FROM range(3000) t(i)`, 'COMPRESSION zstd, ROW_GROUP_SIZE 2048')
})

describe('Parquet: * in schema order', () => {
  it('columns named like integers stay where the schema has them; a null column is left out', async () => {
    const order = (await sql(`SELECT name FROM parquet_schema('${file}') WHERE num_children IS NULL`)).map(r => r[0])
    expect(order).toEqual(['a', '10', 'b', '2024', '0'])
    const { bytes, error } = await dryRunIntoMemory({ input: file, command: 'HSET k:{a} *', dryRun: 'text', workers: 0 })
    expect(error).toBeNull()
    const lines = bytes.toString('utf8').trim().split('\n')
    expect(lines).toHaveLength(3000)
    expect(lines[2100]).toBe(`HSET k:2100 a 2100 10 21000 b x2100 0 2101`)
  })
})
