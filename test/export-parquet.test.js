'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// The Parquet writer of `pipeload export` (lib/export/parquet.js), without a server: records
// built by hand, the file read back by DuckDB (an independent implementation) and by the
// hyparquet reader, and compared with what the test generated, byte for byte.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createWriter } = require('../lib/export/parquet')
const { collector, writeAll: writeRecords, failure: writeFailure } = require('./helpers/export-sink')
const { prng } = require('./helpers/prng')
const { sql, rowGroupsOf } = require('./helpers/parquet')

const B = s => Buffer.from(s)
const FIELDS = ['f0', 'f1', 'f2', 'f3']
let dir

beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-parquet-')) })
afterAll(() => { fs.rmSync(dir, { recursive: true, force: true }) })

const writeAll = (records, options, sink) => writeRecords(createWriter, records, options, sink)
const failure = (records, options) => writeFailure(createWriter, records, options)

function bytes (r, n) {
  return Buffer.from(Array.from({ length: n }, () => r.int(256)))
}

/**
 * n keys, hashes and strings, with the records a reader would send (a big hash in parts) and
 * the rows expected: keys and values random bytes (not UTF-8, NULs) or text, empty values,
 * TTLs or none, hashes with some of the fields.
 */
function dataset (n, seed) {
  const r = prng(seed)
  const records = []
  const rows = []
  for (let i = 0; i < n; i++) {
    const key = r.chance(0.2) ? Buffer.concat([bytes(r, 1 + r.int(12)), B(`:${i}`)]) : B(`k:${i}`)
    const ttl = r.chance(0.3) ? 1 + r.int(1e9) : null
    const value = () => r.chance(0.1) ? B('') : r.chance(0.3) ? bytes(r, r.int(40)) : B(`v${i}-${r.int(1e6)}✓`)
    if (i % 4 === 3) {
      const v = value()
      records.push({ key, type: 'string', ttl, part: 1, value: v })
      rows.push({ key, type: 'string', ttl, value: v, f0: null, f1: null, f2: null, f3: null })
      continue
    }
    const pairs = FIELDS.filter((f, j) => i < 4 ? j <= i : r.chance(0.6)).map(f => [f, value()])
    if (pairs.length === 0) pairs.push(['f2', value()])
    const row = { key, type: 'hash', ttl, value: null, f0: null, f1: null, f2: null, f3: null }
    for (const [f, v] of pairs) row[f] = v
    rows.push(row)
    const flat = pairs.flatMap(([f, v]) => [B(f), v])
    if (i % 7 === 0 && pairs.length > 1) { // in parts, as a big key comes
      records.push({ key, type: 'hash', ttl, part: 1, value: flat.slice(0, 2) })
      records.push({ key, type: 'hash', ttl, part: 2, value: flat.slice(2) })
    } else records.push({ key, type: 'hash', ttl, part: 1, value: flat })
  }
  return { records, rows }
}

const hex = v => v === null || v === undefined ? null : Buffer.from(v.bytes ?? v).toString('hex')
const COLUMNS = ['key', 'type', 'ttl', 'value', ...FIELDS]
const canonical = row => COLUMNS.map(c => c === 'type' ? row[c] : c === 'ttl' ? (row[c] === null ? null : Number(row[c])) : hex(row[c]))

describe('Parquet export writer', () => {
  it('writes one row per key, every byte kept, row group by row group: DuckDB and hyparquet read back the data', async () => {
    const { records, rows } = dataset(12_000, 1)
    const file = path.join(dir, 'mixed.parquet')
    fs.writeFileSync(file, (await writeAll(records, { rowGroupSize: 1000 })).bytes())

    const types = await sql(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${file}'))`)
    expect(types).toEqual([['key', 'BLOB'], ['type', 'VARCHAR'], ['ttl', 'BIGINT'], ['value', 'BLOB'], ...FIELDS.map(f => [f, 'BLOB'])])
    const groups = await rowGroupsOf(file)
    expect(groups.length).toBe(12)
    expect(groups.every(g => g.rows === 1000)).toBe(true)

    const duck = await sql(`SELECT ${COLUMNS.join(', ')} FROM read_parquet('${file}', file_row_number = true) ORDER BY file_row_number`)
    expect(duck.map(r => canonical(Object.fromEntries(COLUMNS.map((c, i) => [c, r[i]]))))).toEqual(rows.map(canonical))

    const { parquetReadObjects } = await import('hyparquet')
    const buf = fs.readFileSync(file)
    const hy = await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length), utf8: false })
    expect(hy.map(canonical)).toEqual(rows.map(canonical))
  })

  it('awaits drain: a slow output never holds more than a row group or two', async () => {
    const { records } = dataset(6000, 2)
    const sink = await writeAll(records, { rowGroupSize: 500 }, collector({ slow: true }))
    expect(sink.stats.writes).toBeGreaterThan(10)
    expect(sink.stats.most).toBeLessThan(sink.bytes().length / 4)
    expect(sink.out.writableEnded).toBe(false)
  })

  it('writes a valid file of no rows', async () => {
    const file = path.join(dir, 'empty.parquet')
    fs.writeFileSync(file, (await writeAll([], {})).bytes())
    expect(await sql(`SELECT count(*) FROM read_parquet('${file}')`)).toEqual([[0n]])
  })

  it('refuses other types, a field name that is not UTF-8 or is a column of its own, a field outside the columns', async () => {
    const list = await failure([{ key: B('l'), type: 'zset', ttl: null, part: 1, value: [B('m'), B('1')] }], {})
    expect([list.code, list.exitCode]).toEqual(['PIPELOAD_EXPORT_TYPE_UNSUPPORTED', 3])
    expect(list.message).toBe('key l is a zset, and Parquet writes hashes and strings: export only those (--type hash,string), or to NDJSON, which writes every type')
    const name = await failure([{ key: B('h'), type: 'hash', ttl: null, part: 1, value: [Buffer.from([0xff]), B('v')] }], {})
    expect([name.code, name.exitCode]).toEqual(['PIPELOAD_EXPORT_NOT_TEXT', 3])
    const clash = await failure([{ key: B('h'), type: 'hash', ttl: null, part: 1, value: [B('ttl'), B('v')] }], {})
    expect(clash.message).toContain('a field named "ttl", which is the name of a Parquet column of its own (key, type, ttl, value)')
    const outside = await failure([{ key: B('h'), type: 'hash', ttl: null, part: 1, value: [B('a'), B('v'), B('b'), B('w')] }], { fields: ['a'] })
    expect([outside.code, outside.field]).toEqual(['PIPELOAD_EXPORT_FIELD_UNKNOWN', 'b'])
    const opt = await failure([], { rowGroupSize: 0 })
    expect([opt.code, opt.exitCode]).toEqual(['PIPELOAD_OPTION_INVALID', 2])
  })
})
