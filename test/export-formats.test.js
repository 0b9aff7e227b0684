'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// `pipeload export --format csv|parquet` against a real server: hashes written by the test's
// own ioredis client (the expected data is what it wrote), exported in small batches and
// pages so that the data paths run many times (a big hash comes in a dozen parts, joined into
// one row), and read back by independent readers: csv-parse, and DuckDB for Parquet. Then the
// refusals: a hash with a field that is not a column, a --type the format cannot hold.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { parse } = require('csv-parse/sync')
const { startRedis } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { sql } = require('./helpers/parquet')

// 100 keys a batch, 100 fields a page: 3,000 hashes are 30 batches or more; a big hash of
// 600 fields is 6 pages or more.
const SMALL = ['--batch-size', '100', '--page-size', '100', '--scan-count', '50', '-w', '2']
const COLUMNS = ['name', 'email', 'age', 'note']
const BIG_FIELDS = Array.from({ length: 600 }, (_, i) => `b${i}`)
const TTL_MS = 1_000_000
const hex = b => Buffer.from(b).toString('hex')

/** The i-th small hash: what CSV quoting must get right, and a field or two missing. */
function smallHash (i) {
  const h = { name: `Lovelace, Ada ${i}`, age: String(i % 90) }
  if (i % 3 !== 0) h.email = i % 11 ? `u${i}@example.com` : `"u${i}" <u${i}@example.com>`
  if (i % 7 === 0) h.note = i % 2 ? 'two\nlines é ✓' : ''
  return h
}

/** Hashes (small ones under h:, big ones under big:), strings and a list, as the test wrote them. */
async function writeKeyspace (redis, { hashes, big, strings }) {
  const want = { hashes: new Map(), strings: new Map() }
  const p = redis.pipeline()
  for (let i = 0; i < hashes; i++) {
    const h = smallHash(i)
    p.hset(`h:${i}`, h)
    if (i % 5 === 0) p.pexpire(`h:${i}`, TTL_MS)
    want.hashes.set(`h:${i}`, { fields: h, ttl: i % 5 === 0 })
  }
  for (let i = 0; i < big; i++) {
    const h = Object.fromEntries(BIG_FIELDS.map((f, j) => [f, `${i}:${j}`]))
    p.hset(`big:${i}`, h)
    want.hashes.set(`big:${i}`, { fields: h, ttl: false })
  }
  for (let i = 0; i < strings; i++) {
    // A key and a value that are not UTF-8 too: Parquet keeps every byte.
    const key = i % 10 === 0 ? Buffer.concat([Buffer.from(`s:${i}:`), Buffer.from([0xff, 0x80])]) : Buffer.from(`s:${i}`)
    const value = i % 10 === 0 ? Buffer.from([0xc0, 0xaf, i % 256]) : Buffer.from(i % 9 === 0 ? '' : `value ${i} ✓`)
    p.set(key, value)
    if (i % 4 === 0) p.pexpire(key, TTL_MS)
    want.strings.set(hex(key), { value: hex(value), ttl: i % 4 === 0 })
  }
  p.rpush('a-list', 'x', 'y')
  await p.exec()
  return want
}

describe('export --format csv and parquet', () => {
  let srv, redis, tmp, want
  beforeAll(async () => {
    srv = await startRedis()
    redis = srv.client()
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-formats-'))
    want = await writeKeyspace(redis, { hashes: 3000, big: 3, strings: 2000 })
  })
  afterAll(async () => {
    await srv?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  /** Each CSV row compared with the hash the test wrote: a missing field is an empty cell. */
  function expectCsv (text, fields) {
    const rows = parse(text, { columns: true })
    expect(Object.keys(rows[0])).toEqual(['key', ...fields])
    expect(rows.length).toBe(want.hashes.size)
    // Differences gathered, then compared once: an expect() per cell (3.6M) takes minutes.
    const wrong = []
    const seen = new Set()
    for (const row of rows) {
      const w = want.hashes.get(row.key)
      if (w === undefined) { wrong.push(`${row.key}: not written by the test`); continue }
      seen.add(row.key)
      for (const f of fields) if (row[f] !== (w.fields[f] ?? '')) wrong.push(`${row.key} ${f}: ${JSON.stringify(row[f])}, not ${JSON.stringify(w.fields[f] ?? '')}`)
      for (const f of Object.keys(w.fields)) if (!fields.includes(f)) wrong.push(`${row.key} ${f}: no column`)
    }
    expect(wrong.slice(0, 10)).toEqual([])
    expect(seen.size).toBe(want.hashes.size)
  }

  it('--format csv: every hash one row, big ones joined from their parts; other types not read', async () => {
    const file = path.join(tmp, 'users.csv')
    const fields = [...COLUMNS, ...BIG_FIELDS]
    const r = await runCli(['export', file, '--format', 'csv', '-u', srv.url, ...SMALL, '--fields', fields.join(','), '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expectCsv(fs.readFileSync(file, 'utf8'), fields)
    const summary = JSON.parse(r.stdout)
    expect(summary.types).toEqual({ hash: want.hashes.size })
    expect(summary.parts).toBeGreaterThanOrEqual(3 * 5)
  })

  it('--format csv to .csv.gz, the columns from the first --sample keys', async () => {
    const file = path.join(tmp, 'users.csv.gz')
    const r = await runCli(['export', file, '--format', 'csv', '-u', srv.url, ...SMALL, '--match', 'h:*', '--sample', '500', '-q'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const rows = parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8'), { columns: true })
    // The fields of 500 hashes, in the order first seen: each of the four, once.
    const fields = Object.keys(rows[0]).slice(1)
    expect([...fields].sort()).toEqual([...COLUMNS].sort())
    expect(rows.length).toBe(3000)
    const wrong = rows.filter(row => COLUMNS.some(f => row[f] !== (want.hashes.get(row.key)?.fields[f] ?? '')))
    expect(wrong.slice(0, 10)).toEqual([])
  })

  it('refuses a hash with a field that is not a column: exit 3, the key and the field named, no stack', async () => {
    await redis.hset('h:odd', 'name', 'x', 'zzz', 'y')
    try {
      const file = path.join(tmp, 'odd.csv')
      const given = await runCli(['export', file, '--format', 'csv', '-u', srv.url, ...SMALL, '--match', 'h:*', '--fields', COLUMNS.join(',')])
      expect({ code: given.code, stderr: given.stderr }).toEqual({ code: 3, stderr: `pipeload: key h:odd has the field "zzz", which is not among the CSV columns (the --fields given: name,email,age,note): name every field with --fields name,email,age,note,zzz, or export to NDJSON\n` })
      // Without --fields, from the first key: one of two hashes with a field of their own is
      // always refused, whichever key SCAN gives first.
      await redis.hset('h:odd2', 'name', 'x', 'yyy', 'y')
      const sampled = await runCli(['export', file, '--format', 'parquet', '-u', srv.url, ...SMALL, '--match', 'h:*', '--sample', '1'])
      // The code and stderr together: a wrong code shows what was printed.
      expect({ code: sampled.code, stderr: sampled.stderr }).toEqual({ code: 3, stderr: expect.stringMatching(/^pipeload: key h:\S+ has the field "\w+", which is not among the Parquet columns \(the fields of the first keys: [\w,]+\): name every field with --fields [\w,]+, or export to NDJSON\n$/) })
    } finally {
      await redis.del('h:odd', 'h:odd2')
    }
  })

  it('refuses a hash over --max-record-size: exit 3, the key named', async () => {
    const file = path.join(tmp, 'big.csv')
    const r = await runCli(['export', file, '--format', 'csv', '-u', srv.url, ...SMALL, '--match', 'big:*', '--fields', BIG_FIELDS.join(','), '--max-record-size', '1KiB'])
    expect(r.code).toBe(3)
    expect(r.stderr).toMatch(/^pipeload: key big:\d is a hash of more than 1024 bytes \(maxRecordSize\), too big for one CSV row: export it to NDJSON, which writes a big key in parts, or raise --max-record-size \(maxRecordSize\)\n$/)
  })

  it('--format parquet: hashes and strings, every byte and TTL, read back by DuckDB', async () => {
    const file = path.join(tmp, 'dump.parquet')
    const r = await runCli(['export', file, '--format', 'parquet', '-u', srv.url, ...SMALL, '--match', '[hs]:*', '--sample', '1000', '--row-group-size', '700', '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const summary = JSON.parse(r.stdout)
    expect(summary.types).toEqual({ hash: 3000, string: 2000 })
    const cols = ['name', 'email', 'age', 'note']
    const rows = await sql(`SELECT hex(key), type, ttl, hex(value), ${cols.map(c => `decode("${c}")`).join(', ')} FROM read_parquet('${file}')`)
    expect(rows.length).toBe(5000)
    const groups = await sql(`SELECT count(DISTINCT row_group_id) FROM parquet_metadata('${file}')`)
    expect(Number(groups[0][0])).toBeGreaterThanOrEqual(Math.ceil(5000 / 700))
    const strings = new Map()
    for (const [key, type, ttl, value, ...fields] of rows) {
      const hasTtl = ttl !== null
      if (hasTtl) expect(Number(ttl)).toBeGreaterThan(0)
      if (hasTtl) expect(Number(ttl)).toBeLessThanOrEqual(TTL_MS)
      if (type === 'string') {
        expect(fields).toEqual([null, null, null, null])
        strings.set(key.toLowerCase(), { value: value.toLowerCase(), ttl: hasTtl })
        continue
      }
      expect(type).toBe('hash')
      const name = Buffer.from(key, 'hex').toString()
      const w = want.hashes.get(name)
      expect(w, name).toBeDefined()
      expect(value).toBe(null)
      expect(hasTtl, name).toBe(w.ttl)
      expect(fields, name).toEqual(cols.map(c => w.fields[c] ?? null))
    }
    expect(strings).toEqual(want.strings)
  })

  it('refuses a --type the format cannot hold, before reading: exit 2', async () => {
    const file = path.join(tmp, 'lists.parquet')
    const r = await runCli(['export', file, '--format', 'parquet', '-u', srv.url, '--type', 'hash,list'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('pipeload: --type list: Parquet holds hashes and strings (--type hash,string, the default with --format parquet): export lists to NDJSON, which writes every type\n')
    expect(fs.existsSync(file)).toBe(false)
    const csv = await runCli(['export', file, '--format', 'csv', '-u', srv.url, '--type', 'string'])
    expect(csv.code).toBe(2)
    expect(csv.stderr).toMatch(/^pipeload: --type string: CSV holds hashes only \(--type hash, the default with --format csv\): export strings to NDJSON/)
    const ndjson = await runCli(['export', file, '-u', srv.url, '--fields', 'a'])
    expect(ndjson.code).toBe(2)
    expect(ndjson.stderr).toMatch(/^pipeload: --?fields is an option of the csv and parquet formats, and format is ndjson\n$/)
  })
})

describe('exportKeys() options of the CSV and Parquet formats (the plan, before any connection)', () => {
  const { planExport } = require('../lib/export/options')
  const plan = o => planExport({ output: 'x', ...o })
  const refusal = o => { try { plan(o) } catch (err) { return `${err.code}: ${err.message}` } return 'accepted' }

  it('passes fields, sample, maxRecordSize and the row group sizes to the writer; types default to the format\'s', () => {
    expect(plan({ format: 'csv' }).types).toEqual(['hash'])
    expect(plan({ format: 'parquet' }).types).toEqual(['hash', 'string'])
    expect(plan({}).types).toBe(undefined)
    expect(plan({ format: 'parquet', types: 'string' }).types).toEqual(['string'])
    expect(plan({ format: 'csv', fields: 'a, b', sample: 7, maxRecordSize: '1MiB' }).writer).toEqual({ fields: ['a', 'b'], sample: 7, maxRecordSize: 1048576 })
    expect(plan({ format: 'parquet', fields: ['a'], rowGroupSize: 500, rowGroupBytes: 4096 }).writer).toEqual({ fields: ['a'], rowGroupSize: 500, rowGroupBytes: 4096 })
    expect(plan({}).writer).toEqual({})
  })

  it('refuses each with a format that has no use for it, a type the format cannot hold, a field that would be a column of its own', () => {
    expect(refusal({ fields: ['a'] })).toBe('PIPELOAD_OPTION_INVALID: fields is an option of the csv and parquet formats, and format is ndjson')
    expect(refusal({ format: 'csv', rowGroupSize: 10 })).toBe('PIPELOAD_OPTION_INVALID: rowGroupSize is an option of the parquet format, and format is csv')
    expect(refusal({ format: 'csv', types: ['hash', 'zset'] })).toBe('PIPELOAD_OPTION_INVALID: types ["zset"]: CSV holds hashes only (types ["hash"], the default with format \'csv\'): export zsets to NDJSON, which writes every type')
    expect(refusal({ format: 'parquet', fields: 'name,ttl' })).toMatch(/^PIPELOAD_OPTION_INVALID: fields: "ttl" is the name of a Parquet column of its own/)
    expect(refusal({ format: 'csv', fields: 'a,a' })).toMatch(/^PIPELOAD_OPTION_INVALID: fields: "a" is named twice/)
    expect(refusal({ format: 'csv', sample: 0 })).toMatch(/^PIPELOAD_OPTION_INVALID: sample must be a whole number ≥ 1/)
    expect(refusal({ format: 'parquet', maxRecordSize: 'lots' })).toMatch(/^PIPELOAD_OPTION_INVALID: maxRecordSize/)
  })
})

describe('a row of more than MAX_FIELDS fields', () => {
  const { MAX_FIELDS } = require('../lib/export/rows')
  const { collector } = require('./helpers/export-sink')
  const page = (from, n) => Array.from({ length: n }, (_, i) => [Buffer.from(`f${from + i}`), Buffer.from('v')]).flat()

  it('is refused as its parts come in, before it is whole (PIPELOAD_RECORD_TOO_LARGE), in CSV and Parquet', async () => {
    expect(MAX_FIELDS).toBe(10_000)
    for (const format of ['csv', 'parquet']) {
      const w = require(`../lib/export/${format}`).createWriter(collector().out, { sample: 1 })
      const key = Buffer.from('wide')
      const half = MAX_FIELDS / 2
      expect(w.write({ key, type: 'hash', ttl: null, part: 1, value: page(0, half) })).toBe(undefined)
      expect(w.write({ key, type: 'hash', ttl: null, part: 2, value: page(half, half) })).toBe(undefined)
      let err
      try { w.write({ key, type: 'hash', ttl: null, part: 3, value: page(MAX_FIELDS, 1) }) } catch (e) { err = e }
      expect(err?.code, format).toBe('PIPELOAD_RECORD_TOO_LARGE')
      expect(err.message).toBe(`key wide is a hash of more than 10,000 fields, too many for one ${format === 'csv' ? 'CSV' : 'Parquet'} row (a column each): export it to NDJSON, which writes a big key in parts`)
    }
  })
})
