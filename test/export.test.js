'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// pipeload export against real servers (Redis 7.0 and Valkey 9.1): every type, TTLs,
// binary keys and values, empty strings, big keys in parts, --match, --type, --db, gzip,
// stdout. The expected keyspace is what the test wrote with its own ioredis client
// (test/helpers/export-data.js); the file is read with JSON.parse.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { startRedis } = require('./helpers/redis-server')
const { describeEachServer, serverKinds } = require('./helpers/servers')
const { runCli } = require('./helpers/run-cli')
const { writeDataset, readExport, comparable, hex } = require('./helpers/export-data')
const { exportKeys } = require('..')

// Small batches and pages, so that the data paths run many times: 300 small keys of each
// type are 18 batches of 100 keys; each big key of 2,500 elements is 25 pages or more.
const SMALL = ['--batch-size', '100', '--page-size', '100', '--scan-count', '50', '-w', '2']

describeEachServer('export', kind => {
  let srv, redis, tmp, want
  beforeAll(async () => {
    srv = await startRedis({ server: kind })
    redis = srv.client()
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-'))
    want = await writeDataset(redis, 'e:')
  })
  afterAll(async () => {
    await srv?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('writes every key of every type, with its TTL, every byte, big keys in parts', async () => {
    const file = path.join(tmp, 'all.ndjson')
    const r = await runCli(['export', file, '-u', srv.url, ...SMALL, '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const got = readExport(fs.readFileSync(file, 'utf8'))
    expect(comparable(got.keys)).toEqual(comparable(want))
    // Every big key came in parts 1, 2, 3, … in order; a small one in one line.
    for (const [k, parts] of got.parts) {
      expect(parts, k).toEqual(parts.map((_, i) => i + 1))
      if (!Buffer.from(k, 'hex').toString().startsWith('e:big:')) expect(parts, k).toEqual([1])
    }
    for (const t of ['h', 'l', 's', 'z', 'x']) expect(got.parts.get(hex(`e:big:${t}`)).length).toBeGreaterThan(5)
    const summary = JSON.parse(r.stdout)
    expect(summary.keys).toBe(want.size)
    expect(summary.total).toBe(want.size)
    expect(summary.deleted).toBe(0)
    expect(summary.types).toEqual({ string: 301, hash: 302, list: 302, set: 301, zset: 302, stream: 302 })
    expect(summary.parts).toBe(got.lines - want.size)
  })

  it('writes non-UTF-8 bytes as base64 marker objects, a hash with such a field as pairs', async () => {
    const file = path.join(tmp, 'bin.ndjson')
    const r = await runCli(['export', file, '-u', srv.url, '--match', 'e:\x80*', '-q'])
    expect(r.code).toBe(0)
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(lines.length).toBe(5)
    for (const l of lines) expect(Object.keys(l.key)).toEqual(['base64'])
    const h = lines.find(l => l.type === 'hash')
    expect(Array.isArray(h.value)).toBe(true)
    const s = lines.find(l => l.type === 'string')
    expect(Buffer.from(s.value.base64, 'base64')).toEqual(Buffer.from([0x80, 0xc0, 0xaf, 0xff, 0x00, 0x41]))
  })
}, serverKinds(['redis7', 'valkey9']))

describe('export: filters, databases and outputs', () => {
  let srv, redis, tmp, want
  beforeAll(async () => {
    srv = await startRedis()
    redis = srv.client()
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-'))
    want = await writeDataset(redis, 'f:', { big: 1200, small: 150 })
  })
  afterAll(async () => {
    await srv?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  const only = (pred) => new Map([...want].filter(([k, e]) => pred(Buffer.from(k, 'hex').toString('latin1'), e)))

  it('--match: the keys that match only', async () => {
    const file = path.join(tmp, 'match.ndjson')
    const r = await runCli(['export', file, '-u', srv.url, ...SMALL, '--match', 'f:h:1*', '-q'])
    expect(r.code).toBe(0)
    const got = readExport(fs.readFileSync(file, 'utf8'))
    const expected = only(k => k.startsWith('f:h:1'))
    expect(expected.size).toBeGreaterThan(50)
    expect(comparable(got.keys)).toEqual(comparable(expected))
  })

  it('--type with one type (SCAN TYPE) and with several', async () => {
    for (const types of ['zset', 'list,stream']) {
      const file = path.join(tmp, `type-${types}.ndjson`)
      const r = await runCli(['export', file, '-u', srv.url, ...SMALL, '--type', types, '--json'])
      expect(r.code).toBe(0)
      const got = readExport(fs.readFileSync(file, 'utf8'))
      const expected = only((k, e) => types.split(',').includes(e.type))
      expect(comparable(got.keys)).toEqual(comparable(expected))
      expect(JSON.parse(r.stdout).keys).toBe(expected.size)
    }
  })

  it('--db: the keys of that database only; gzip by .gz', async () => {
    const db = srv.client({ db: 3 })
    const wantDb = await writeDataset(db, 'd:', { big: 700, small: 120 })
    const file = path.join(tmp, 'db3.ndjson.gz')
    const r = await runCli(['export', file, '-u', srv.url, '-n', '3', ...SMALL, '-q'])
    expect(r.code).toBe(0)
    const text = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8')
    expect(comparable(readExport(text).keys)).toEqual(comparable(wantDb))
    await db.flushdb()
  })

  it('- writes to stdout, the summary to stderr', async () => {
    const r = await runCli(['export', '-', '-u', srv.url, '--type', 'hash', '--progress', '1ms'])
    expect(r.code).toBe(0)
    expect(comparable(readExport(r.stdout.toString('utf8')).keys)).toEqual(comparable(only((k, e) => e.type === 'hash')))
    expect(r.stderr).toMatch(/^progress: .* keys\/s/m)
    expect(r.stderr).toMatch(/^exported 152 keys \(hash 152\), 1 more part of big keys from .* to stdout/m)
  })

  it('exportKeys() writes to a stream of the caller and returns the summary', async () => {
    const chunks = []
    const { Writable } = require('node:stream')
    const out = new Writable({ highWaterMark: 1024, write (c, e, cb) { chunks.push(c); setImmediate(cb) } })
    const progress = []
    const s = await exportKeys({ url: srv.url, output: out, types: ['set'], pageSize: 100, batchSize: 50, onProgress: p => progress.push(p), progressInterval: 1 })
    expect(comparable(readExport(Buffer.concat(chunks).toString('utf8')).keys)).toEqual(comparable(only((k, e) => e.type === 'set')))
    expect(s.keys).toBe(151)
    expect(s.bytes).toBe(Buffer.concat(chunks).length)
    expect(progress.at(-1).keys).toBe(151)
  })

  it('a slow output stops the reading (backpressure), then the export goes on to the end', async () => {
    const db = srv.client({ db: 5 })
    const keys = 20000
    for (let i = 0; i < keys; i += 1000) await db.mset(...Array.from({ length: 1000 }, (_, j) => [`b:${i + j}`, 'x'.repeat(100)]).flat())
    const typeCalls = async () => Number((await redis.info('commandstats')).match(/^cmdstat_type:calls=(\d+),/m)?.[1] ?? 0)
    const before = await typeCalls()
    let release = null
    const { Writable } = require('node:stream')
    const chunks = []
    // Takes the first chunk, then holds the second until released.
    const out = new Writable({ highWaterMark: 1024, write (c, e, cb) { chunks.push(c); if (chunks.length === 2) release = cb; else cb() } })
    const run = exportKeys({ url: srv.url, db: 5, output: out, batchSize: 100, window: 2 })
    const { waitFor } = require('./helpers/wait')
    await waitFor('the output to be full', () => release !== null)
    const held = await typeCalls()
    await new Promise(resolve => setTimeout(resolve, 300))
    expect(await typeCalls(), 'no key read while the output is full').toBe(held)
    expect(held - before).toBeLessThan(keys / 2)
    release()
    const s = await run
    expect(s.keys).toBe(keys)
    expect(readExport(Buffer.concat(chunks).toString('utf8')).keys.size).toBe(keys)
    await db.flushdb()
  })

  it('refuses --json with the output -, and an unknown --format: exit 2', async () => {
    const r = await runCli(['export', '-', '-u', srv.url, '--json'])
    expect(r.code).toBe(2)
    expect(JSON.parse(r.stdout).error.code).toBe('PIPELOAD_OPTION_INVALID')
    const f = await runCli(['export', path.join(tmp, 'x.csv'), '-u', srv.url, '--format', 'xml'])
    expect(f.code).toBe(2)
    expect(f.stderr).toMatch(/^pipeload: option '--format <format>' argument 'xml' is invalid/)
  })

  it('a server that cannot be reached: exit 4, one line', async () => {
    const r = await runCli(['export', path.join(tmp, 'none.ndjson'), '-p', '1'])
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/^pipeload: cannot connect to Redis at 127\.0\.0\.1:1/)
    expect(fs.existsSync(path.join(tmp, 'none.ndjson'))).toBe(false)
  })
})

describe('export: credentials', () => {
  let srv, tmp
  beforeAll(async () => {
    srv = await startRedis({ password: 'pw-export' })
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-'))
    const c = srv.client({ password: 'pw-export', db: 2 })
    await c.hset('secret:1', 'a', '1')
    await c.rpush('secret:2', 'x')
  })
  afterAll(async () => {
    await srv?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('AUTH and SELECT on the data connection; a wrong password: exit 4', async () => {
    const file = path.join(tmp, 'auth.ndjson')
    const r = await runCli(['export', file, '-p', String(srv.port), '-n', '2', '-q'], { env: { REDISCLI_AUTH: 'pw-export' } })
    expect(r.code).toBe(0)
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map(l => JSON.parse(l)).sort((a, b) => a.key < b.key ? -1 : 1)
    expect(lines).toEqual([
      { key: 'secret:1', type: 'hash', ttl: null, value: { a: '1' } },
      { key: 'secret:2', type: 'list', ttl: null, value: ['x'] }
    ])
    const bad = await runCli(['export', file, '-p', String(srv.port)], { env: { REDISCLI_AUTH: 'nope' } })
    expect(bad.code).toBe(4)
    expect(bad.stderr).toMatch(/^pipeload: authentication to Redis at .* failed/)
  })
})
