'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// bench --connections (issue 35): the batch-size rows over the fewest counts given, then one
// row per count at the picked batch size. The oracle is the server's own MONITOR feed, read by
// the test's client: the writes of each row (its keys carry the row number) and the client
// address each came from, so "2 connections" is what the server saw, not what bench says.

const fs = require('node:fs')
const path = require('node:path')
const { startRedis } = require('./helpers/redis-server')
const { runCli: pipeload } = require('./helpers/run-cli')
const { bench } = require('../lib/bench')
const { formatCsv, formatMarkdown, formatProgress } = require('../lib/bench/format')

const ROW_KEY = /^pipeload:bench:[0-9a-f]{12}:(\d+):(.*)$/
const CITIES = path.join(__dirname, '..', 'examples', 'data', 'cities.csv')

let srv
let redis

beforeAll(async () => {
  srv = await startRedis()
  redis = srv.client()
})

afterAll(async () => {
  if (srv) await srv.stop()
})

/** MONITOR on a client of the test's own: per row number, its writes ([cmd, key without prefix, ...args]) and the client addresses they came from. */
async function watchWrites () {
  const client = srv.client()
  await client.ping() // ready first: see bench-cluster.test's MONITOR
  const monitor = await client.monitor()
  const rows = new Map()
  let marker = null
  monitor.on('monitor', (time, args, source) => {
    if (String(args[0]).toUpperCase() === 'ECHO' && marker && args[1] === marker.name) return marker.seen()
    const m = ROW_KEY.exec(String(args[1] ?? ''))
    if (!m || !['hset', 'set'].includes(String(args[0]).toLowerCase())) return
    const n = Number(m[1])
    if (!rows.has(n)) rows.set(n, { writes: [], sources: new Set() })
    rows.get(n).writes.push([String(args[0]).toLowerCase(), m[2], ...args.slice(2).map(String)])
    rows.get(n).sources.add(source)
  })
  return {
    rows,
    async stop () {
      // Every command executed before now has been seen once the marker is.
      const seen = new Promise(resolve => { marker = { name: `bench-connections-${process.pid}`, seen: resolve } })
      await client.echo(marker.name)
      await seen
      monitor.disconnect()
      client.disconnect()
    }
  }
}

/** Writes compared as sets: several connections interleave them. */
function sortedWrites (writes) {
  return writes.map(w => JSON.stringify(w)).sort()
}

describe('bench --connections', () => {
  it('--connections 1,2: the batch-size rows over one connection, then a row on 1 and on 2 connections at the picked batch size; keys deleted', async () => {
    await redis.set('mine', 'keep')
    const before = await redis.dbsize()
    const watch = await watchWrites()
    const r = await pipeload(['bench', '-u', srv.url, '--workload', 'hset', '--count', '400', '--batch-sizes', '10,40', '--connections', '1,2', '--json'])
    await watch.stop()
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const res = JSON.parse(r.stdout)
    expect(res.connections).toEqual([1, 2])
    expect(res.rows.map(x => [x.mode, x.batchSize, x.connections, x.correct])).toEqual([
      ['in-a-row', 1, 1, true], ['pipeline', 10, 1, true], ['pipeline', 40, 1, true]
    ])
    // 400 commands at 10: 10 round trips, ranked; at 40: 3, not ranked: the sweep runs at 10.
    expect(res.connectionSweep).toMatchObject({ batchSize: 10, basis: 'fastest' })
    expect(res.connectionSweep.rows.map(x => [x.batchSize, x.connections, x.ops, x.correct])).toEqual([[10, 1, 400, true], [10, 2, 400, true]])
    // What the server saw: five rows, each the same 400 HSETs; rows 1-4 from one client each, row 5 from two.
    expect([...watch.rows.keys()]).toEqual([1, 2, 3, 4, 5])
    const want = sortedWrites(watch.rows.get(1).writes)
    expect(want).toHaveLength(400)
    for (const [n, row] of watch.rows) {
      expect(sortedWrites(row.writes), `row ${n}`).toEqual(want)
      expect(row.sources.size, `row ${n}'s client addresses`).toBe(n === 5 ? 2 : 1)
    }
    expect(await redis.dbsize()).toBe(before)
    expect(await redis.get('mine')).toBe('keep')
  })

  it('the text output: the header names the connections, a second table per count, and the pick names both', async () => {
    const before = await redis.dbsize()
    const r = await pipeload(['bench', '-u', srv.url, '--workload', 'set', '--count', '400', '--batch-sizes', '10', '--no-baseline', '--connections', '2,1'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^pipeload bench · SET a key per command × 400 · 127\.0\.0\.1:\d+ · window 4 · 1 connection$/m)
    expect(r.stdout).toMatch(/^connections at batch size 10 \(the fastest ranked\), each count run back to back:$/m)
    expect(r.stdout).toMatch(/^connections {2}commands/m)
    expect(r.stdout).toMatch(/^ {10}1 +400 .* 1\.00x .* yes/m)
    expect(r.stdout).toMatch(/^ {10}2 +400 .* yes/m)
    expect(r.stdout).toMatch(/a good --batch-size 10 --connections [12] here/)
    expect(await redis.dbsize()).toBe(before)
  })

  it('library: connections 2 alone runs every batch-size row over two connections, no sweep', async () => {
    const before = await redis.dbsize()
    const watch = await watchWrites()
    const res = await bench({ url: srv.url, workload: 'set', count: 200, batchSizes: [20, 50], baseline: false, connections: 2 })
    await watch.stop()
    expect(res.connections).toEqual([2])
    expect(res.connectionSweep).toBeUndefined()
    expect(res.rows.map(x => [x.batchSize, x.connections, x.ops, x.correct])).toEqual([[20, 2, 200, true], [50, 2, 200, true]])
    expect([...watch.rows.keys()]).toEqual([1, 2])
    for (const row of watch.rows.values()) {
      expect(row.writes).toHaveLength(200)
      expect(row.sources.size).toBe(2)
    }
    expect(await redis.dbsize()).toBe(before)
  })

  it('--csv gets a connections column and the sweep\'s rows; --markdown the second table; progress names the connections', async () => {
    const seen = []
    const res = await bench({ url: srv.url, workload: 'set', count: 400, batchSizes: [10], baseline: false, connections: '1,2', onProgress: p => seen.push(p) })
    const lines = formatCsv(res).trim().split('\n')
    expect(lines[0]).toMatch(/^mode,batchSize,window,.*,connections$/)
    expect(lines.slice(1).map(l => l.split(',')).map(f => [f[0], f[1], f[f.length - 1]])).toEqual([
      ['pipeline', '10', '1'], ['pipeline', '10', '1'], ['pipeline', '10', '2']
    ])
    const md = formatMarkdown(res)
    expect(md).toMatch(/^\| connections \| commands \| time \| ops\/s \| vs 1 \|/m)
    expect(md.match(/^\| [12] \| 400 \|/gm)).toHaveLength(2)
    expect(seen.filter(p => p.elapsedMs === 0).map(p => [p.row, p.rows, p.connections])).toEqual([[1, 3, 1], [2, 3, 1], [3, 3, 2]])
    expect(formatProgress({ row: 3, rows: 3, run: 1, runs: 1, mode: 'pipeline', batchSize: 10, connections: 2, ops: 0, count: 400, elapsedMs: 0 }))
      .toBe('row 3/3: batch size 10 · 2 connections · 0 of 400 commands · 0.0 s')
  })

  it('a file: the import itself over two connections (load() connections 2), every record written, keys deleted', async () => {
    const before = await redis.dbsize()
    const watch = await watchWrites()
    const res = await bench({ url: srv.url, input: CITIES, key: 'city:{id}', batchSizes: [10], baseline: false, connections: 2 })
    await watch.stop()
    // The file's ids, read here: every line that starts with one (no field of it spans lines).
    const ids = fs.readFileSync(CITIES, 'utf8').split('\n').map(l => /^(\d+),/.exec(l)?.[1]).filter(Boolean)
    expect(res.rows.map(x => [x.batchSize, x.connections, x.records, x.correct])).toEqual([[10, 2, ids.length, true]])
    const row = watch.rows.get(1)
    expect(row.writes.map(w => w[1]).sort()).toEqual(ids.map(id => `city:${id}`).sort())
    expect(row.sources.size).toBe(2)
    expect(await redis.dbsize()).toBe(before)
  })

  it('library: "auto" asks the server (io-threads 1 here: one connection) and says so', async () => {
    const threads = (await redis.config('GET', 'io-threads'))[1]
    const res = await bench({ url: srv.url, workload: 'set', count: 100, batchSizes: [10], baseline: false, connections: ['auto', 2] })
    const auto = Math.min(Number(threads), 4)
    expect(res.connections).toEqual([...new Set([auto, 2])].sort((a, b) => a - b))
    expect(res.connectionsAuto).toBe(`auto: ${auto} (io-threads ${threads})`)
  })

  it('a bad value: exit 2 with the message import gives for --connections', async () => {
    const imp = await pipeload(['import', CITIES, '--key', 'city:{id}', '-u', srv.url, '--connections', '0'])
    const r = await pipeload(['bench', '-u', srv.url, '--connections', '1,0'])
    expect(imp.code).toBe(2)
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(imp.stderr)
    expect(r.stderr).toBe('pipeload: --connections must be a number of connections from 1 to 64, or "auto", got "0"\n')
    await expect(bench({ url: srv.url, connections: [1, 65] })).rejects.toMatchObject({
      code: 'PIPELOAD_OPTION_INVALID', message: 'connections must be a number of connections from 1 to 64, or "auto", got 65'
    })
  })
})
