'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Timing mode as a library: rows, correctness checks, cleanup, the delay proxy. Counts stay
// small; these tests check what bench reports and what it leaves behind, never how fast
// anything is (timing assertions are limited to the delay the proxy must add).
//
// bench's own `correct` flag is its self-check; the tests do not take its word for it:
// benchSpy (test/helpers/bench-spy.js) reads every key bench deletes just before it is
// deleted, so each row's keyspace is compared with what the workload must have written.

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { performance } = require('node:perf_hooks')
const { useServer } = require('./helpers/redis-server')
const { benchSpy } = require('./helpers/bench-spy')
const { waitFor } = require('./helpers/wait')
const { bench } = require('../lib/bench')
const { startDelayProxy } = require('../lib/bench/delay-proxy')
const { prefixTemplate } = require('../lib/bench/file')
const { formatTable, formatCsv, formatMarkdown, formatChart, formatProgress } = require('../lib/bench/format')
const { BENCH_DEFAULTS } = require('../lib/bench/options')
const { DEFAULTS } = require('../lib/run/options')

let srv
let redis
let tmp
useServer('pipeload-bench-', s => { ({ srv, redis, tmp } = s) })

/** Keys someone else owns, including one that looks like another bench run's. */
async function seedForeignKeys () {
  await redis.set('mine', 'keep')
  await redis.hset('user:1', 'name', 'someone else')
  await redis.set('pipeload:bench:otherrun:1:counter', '7')
}

/** The keys a synthetic workload must leave in each row (without the row prefix) and their values. */
function expectedRow (workload, count) {
  const out = {}
  if (workload === 'incr') out.counter = String(count)
  for (let i = 0; i < count; i++) {
    if (workload === 'set') out[`set:${i}`] = `value-${i}`
    if (workload === 'hset') out[`hset:${i}`] = { name: `user ${i}`, email: `user${i}@example.com`, n: String(i) }
  }
  return out
}

/** Rows 1..n of one run, each holding exactly `expected` when bench deleted it. */
function expectRows (spy, n, expected) {
  const { runs, rows, other } = spy.rows()
  expect(other, 'keys bench deleted outside its prefix').toEqual([])
  expect(runs).toHaveLength(1)
  expect([...rows.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1))
  for (const [row, keys] of rows) expect(keys, `row ${row}`).toEqual(typeof expected === 'function' ? expected(row) : expected)
}

async function expectForeignKeysIntact (dbsizeBefore) {
  expect(await redis.dbsize()).toBe(dbsizeBefore)
  expect(await redis.get('mine')).toBe('keep')
  expect(await redis.hgetall('user:1')).toEqual({ name: 'someone else' })
  expect(await redis.get('pipeload:bench:otherrun:1:counter')).toBe('7')
}

const ROW_KEYS = ['mode', 'batchSize', 'durationMs', 'opsPerSec', 'speedup', 'latencyMs',
  'serverReplyPeakBytes', 'clientRssPeakBytes', 'correct']

function expectShape (res) {
  for (const k of ['workload', 'count', 'rttMs', 'rows']) expect(res).toHaveProperty(k)
  for (const r of res.rows) {
    for (const k of ROW_KEYS) expect(r).toHaveProperty(k)
    expect(['in-a-row', 'pipeline']).toContain(r.mode)
    expect(Object.keys(r.latencyMs).sort()).toEqual(['max', 'p50', 'p99'])
    expect(typeof r.durationMs).toBe('number')
    expect(typeof r.opsPerSec).toBe('number')
    expect(typeof r.clientRssPeakBytes).toBe('number')
    expect(r.serverReplyPeakBytes === null || typeof r.serverReplyPeakBytes === 'number').toBe(true)
  }
  expect(JSON.parse(JSON.stringify(res))).toEqual(res)
  expect(res.rows.filter(r => r.fastest)).toHaveLength(1)
}

describe('bench() synthetic workloads', () => {
  it('INCR: an in-a-row row and one per batch size, each counting every command, keys deleted', async () => {
    await seedForeignKeys()
    const before = await redis.dbsize()
    const spy = benchSpy(srv)
    await redis.config('RESETSTAT')
    const res = await bench({ redis: spy.redis, count: 500, batchSizes: [1000, 1, 10, 100] })
    // The server's own count: 5 rows x 500 INCRs, on a counter that held 500 in each row.
    expect((await redis.info('commandstats')).match(/^cmdstat_incr:calls=(\d+),/m)?.[1]).toBe('2500')
    expectRows(spy, 5, { counter: '500' })
    expectShape(res)
    expect(res.workload).toBe('incr')
    expect(res.count).toBe(500)
    expect(res.rttMs).toBe(null)
    expect(res.rows.map(r => [r.mode, r.batchSize])).toEqual([
      ['in-a-row', 1], ['pipeline', 1], ['pipeline', 10], ['pipeline', 100], ['pipeline', 1000]
    ])
    expect(res.rows.map(r => r.batches)).toEqual([500, 500, 50, 5, 1])
    for (const r of res.rows) {
      expect(r.ops).toBe(500)
      expect(r.correct).toBe(true)
      expect(r.capped).toBe(false)
    }
    expect(res.rows[0].window).toBe(1)
    expect(res.rows[0].speedup).toBe(1)
    // CLIENT LIST is allowed here, so the server side is measured.
    expect(typeof res.rows[0].serverReplyPeakBytes).toBe('number')
    await expectForeignKeysIntact(before)
  })

  it.each(['set', 'hset', 'ping'])('%s: each row writes every key with its value, nothing left behind', async (workload) => {
    const before = await redis.dbsize()
    const spy = benchSpy(srv)
    await redis.config('RESETSTAT')
    const res = await bench({ redis: spy.redis, workload, count: 300, batchSizes: [7, 300] })
    expect(res.workload).toBe(workload)
    expect(res.rows).toHaveLength(3)
    for (const r of res.rows) expect([r.ops, r.correct]).toEqual([300, true])
    if (workload === 'ping') {
      // Nothing to read back: the server counts the PINGs (3 rows x 300, and bench's 5 to
      // measure the round trip), and bench deleted nothing.
      expect((await redis.info('commandstats')).match(/^cmdstat_ping:calls=(\d+),/m)?.[1]).toBe(String(3 * 300 + 5))
      expect(spy.keys()).toEqual([])
    } else {
      expectRows(spy, 3, expectedRow(workload, 300))
    }
    expect(await redis.dbsize()).toBe(before)
  })

  it('repeat: the median run, the spread and the run count per row', async () => {
    const spy = benchSpy(srv)
    const res = await bench({ redis: spy.redis, count: 200, batchSizes: [50], repeat: 3 })
    for (const r of res.rows) {
      expect(r.runs).toBe(3)
      expect(r.opsPerSecMin).toBeLessThanOrEqual(r.opsPerSec)
      expect(r.opsPerSecMax).toBeGreaterThanOrEqual(r.opsPerSec)
      expect(r.correct).toBe(true)
    }
    // 2 rows x 3 runs, each run on its own counter.
    expectRows(spy, 6, { counter: '200' })
  })

  it('reports server memory as null (n/a) when the user may not run CLIENT', async () => {
    await redis.call('ACL', 'SETUSER', 'noclient', 'on', '>pw', '~*', '+@all', '-client')
    const before = await redis.dbsize()
    const spy = benchSpy(srv, { username: 'noclient', password: 'pw' })
    const res = await bench({ redis: spy.redis, count: 100, batchSizes: [10] })
    for (const r of res.rows) {
      expect(r.serverReplyPeakBytes).toBe(null)
      expect(r.correct).toBe(true)
    }
    expectRows(spy, 2, { counter: '100' })
    expect(formatTable(res)).toContain('n/a')
    expect(await redis.dbsize()).toBe(before)
  })

  it('keeps to a --db', async () => {
    const other = srv.client({ db: 3 })
    await other.set('in-db-3', 'x')
    const before = await redis.dbsize()
    await redis.config('RESETSTAT')
    const spy = benchSpy(srv, { db: 3 })
    const res = await bench({ redis: spy.redis, count: 100, batchSizes: [10] })
    expect(res.target).toMatch(/\/3$/)
    expect(res.rows.every(r => r.correct)).toBe(true)
    // The spy reads db 3: the counters were there, 200 INCRs in all.
    expectRows(spy, 2, { counter: '100' })
    expect((await redis.info('commandstats')).match(/^cmdstat_incr:calls=(\d+),/m)?.[1]).toBe('200')
    expect(await other.dbsize()).toBe(1)
    expect(await redis.dbsize()).toBe(before)
  })

  it('Ctrl-C (an aborted signal) stops the run, rejects with PIPELOAD_ABORTED and deletes its keys', async () => {
    const before = await redis.dbsize()
    const ac = new AbortController()
    let keysSeen = null
    const p = bench({
      url: srv.url, count: 1_000_000, batchSizes: [10], signal: ac.signal,
      // Abort once the first row has written its key: mid-run, with keys to delete.
      onProgress: () => { keysSeen ??= waitFor('the bench key', async () => await redis.dbsize() > before).then(() => ac.abort()) }
    })
    await expect(p).rejects.toMatchObject({ code: 'PIPELOAD_ABORTED' })
    await keysSeen
    expect(await redis.dbsize()).toBe(before)
  })

  it('refuses options it cannot honour, with PIPELOAD_OPTION_INVALID', async () => {
    for (const bad of [
      { rtt: 'fast' }, { batchSizes: '10,x' }, { workload: 'del' }, { count: 0 }, { jitter: '5ms' },
      { key: 'user:{id}' }, { input: 'x.csv' }, { input: 'x.csv', command: 'MSET a {id} b {id}', key: undefined }
    ]) {
      await expect(bench({ url: srv.url, ...bad })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID' })
    }
  })
})

describe('bench() with a file', () => {
  it('times the real import with every key under the run prefix; records all present; cleaned up', async () => {
    const file = path.join(tmp, 'users.csv')
    const lines = ['id,name,country']
    for (let i = 1; i <= 60; i++) lines.push(`${i},user ${i},${i % 3}`)
    fs.writeFileSync(file, lines.join('\n') + '\n')
    await seedForeignKeys()
    const before = await redis.dbsize()
    const spy = benchSpy(srv)
    const res = await bench({ redis: spy.redis, input: file, key: 'user:{id}', command: 'SADD users:{country} {id}', batchSizes: [1, 16, 1000] })
    // Each row (in a row, 1, 16, 1000) held the whole file when bench deleted it.
    const want = {}
    for (let i = 1; i <= 60; i++) {
      want[`user:${i}`] = { id: String(i), name: `user ${i}`, country: String(i % 3) }
      ;(want[`users:${i % 3}`] ??= []).push(String(i))
    }
    for (const c of [0, 1, 2]) want[`users:${c}`].sort()
    expectRows(spy, 4, want)
    expectShape(res)
    expect(res.workload).toBe('file')
    expect(res.count).toBe(60)
    for (const r of res.rows) {
      expect(r.records).toBe(60)
      expect(r.ops).toBe(120)
      expect(r.correct).toBe(true)
    }
    await expectForeignKeysIntact(before)
  })

  it('says a row is not correct when records fail', async () => {
    const file = path.join(tmp, 'clash.csv')
    fs.writeFileSync(file, 'id\n1\n2\n')
    const spy = benchSpy(srv)
    const res = await bench({ redis: spy.redis, input: file, command: ['SET u:{id} x', 'HSET u:{id} a b'], batchSizes: [10] })
    expect(res.rows.map(r => r.correct)).toEqual([false, false])
    // What the server held: the SETs, each HSET refused (WRONGTYPE).
    expectRows(spy, 2, { 'u:1': 'x', 'u:2': 'x' })
  })

  it('prefixes only the key of each template', () => {
    expect(prefixTemplate('HSET user:{id} *', 'P:')).toBe('HSET P:user:{id} *')
    expect(prefixTemplate("SET 'a b:{id}' \"x y\" EX 5", 'P:')).toBe('SET "P:a b:{id}" "x y" EX 5')
    expect(prefixTemplate('SADD {{tag}}:{c} {id}', 'P:')).toBe('SADD P:{{tag}}:{c} {id}')
    expect(() => prefixTemplate('RENAME a:{id} b:{id}', 'P:')).toThrow(/RENAME/)
    expect(() => prefixTemplate('HSET * x', 'P:')).toThrow(/first argument must be a key/)
  })
})

/** One PING over a raw socket to `port`; resolves with the ms until +PONG. */
function timePing (port) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1' })
    let t0
    sock.on('error', reject)
    sock.on('connect', () => { t0 = performance.now(); sock.write('*1\r\n$4\r\nPING\r\n') })
    sock.on('data', d => {
      if (String(d).startsWith('+PONG')) { sock.destroy(); resolve(performance.now() - t0) }
    })
  })
}

describe('delay proxy', () => {
  it('adds the round-trip time to every request', async () => {
    const proxy = await startDelayProxy({ host: '127.0.0.1', port: srv.port, rttMs: 50 })
    try {
      const ms = await timePing(proxy.port)
      // Delivery may be up to 0.5 ms early per direction (timer rounding). No upper bound:
      // how late a loaded machine delivers says nothing about the proxy.
      expect(ms).toBeGreaterThanOrEqual(49)
    } finally {
      await proxy.close()
    }
  })

  it('keeps bytes in order under jitter', async () => {
    const proxy = await startDelayProxy({ host: '127.0.0.1', port: srv.port, rttMs: 10, jitterMs: 10 })
    const key = 'proxy-order'
    try {
      const replies = await new Promise((resolve, reject) => {
        const sock = net.connect({ port: proxy.port, host: '127.0.0.1' })
        let text = ''
        sock.on('error', reject)
        sock.on('data', d => {
          text += d
          const got = text.match(/:\d+\r\n/g) || []
          if (got.length === 100) { sock.destroy(); resolve(got.map(s => Number(s.slice(1)))) }
        })
        // 100 separate writes, so each is its own chunk with its own random delay.
        let i = 0
        const tick = () => { sock.write(`*2\r\n$4\r\nINCR\r\n$${key.length}\r\n${key}\r\n`); if (++i < 100) setImmediate(tick) }
        sock.on('connect', tick)
      })
      expect(replies).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    } finally {
      await proxy.close()
      await redis.del(key)
    }
  })

  it('bench --rtt: in a row pays one RTT per command; the header says it was simulated; rows are capped by time', async () => {
    const before = await redis.dbsize()
    const spy = benchSpy(srv)
    const res = await bench({ redis: spy.redis, rtt: '20ms', count: 400, batchSizes: [400], maxRowTime: '300ms' })
    expect(res.rttMs).toBe(20)
    expect(res.rttSimulated).toBe(true)
    expect(res.pingMs).toBeGreaterThanOrEqual(19)
    const [inARow, whole] = res.rows
    // Each command in a row waits a whole round trip of at least 20 ms (19 with timer
    // rounding), so 400 of them cannot fit in the 300 ms cap: the row stops early.
    expect(inARow.capped).toBe(true)
    expect(inARow.ops).toBeLessThan(400)
    expect(inARow.durationMs).toBeGreaterThanOrEqual(inARow.ops * 19)
    expect(inARow.correct).toBe(true)
    expect(whole.capped).toBe(false)
    expect(whole.ops).toBe(400)
    expect(whole.latencyMs.p50).toBeGreaterThanOrEqual(19)
    // The ops each row reports are the INCRs its counter got.
    expectRows(spy, 2, row => ({ counter: String([inARow, whole][row - 1].ops) }))
    expect(formatTable(res)).toMatch(/RTT 20\.0 ms SIMULATED/)
    expect(formatTable(res)).toMatch(/stopped after/)
    expect(await redis.dbsize()).toBe(before)
  })
})

describe('bench rows that cannot measure a rate (issue 14, items 10-12)', () => {
  it('a row whose batches all fit in the window is one round trip: marked, never fastest; sizes above the count skipped but the smallest; --no-baseline', async () => {
    const before = await redis.dbsize()
    const spy = benchSpy(srv)
    // 400 commands, window 4, 20 ms round trips: batches of 10 take 40 batches (10 round
    // trips); one batch of 400 is all in flight at once, and 1000 or 5000 would send the
    // same single batch.
    const res = await bench({ redis: spy.redis, rtt: '20ms', count: 400, batchSizes: [5000, 10, 400, 1000], baseline: false, maxRowTime: 0 })
    expect(res.baseline).toBe(false)
    expect(res.skippedBatchSizes).toEqual([1000, 5000])
    expect(res.rows.map(r => [r.mode, r.batchSize, r.batches, r.oneRoundTrip])).toEqual([
      ['pipeline', 10, 40, false], ['pipeline', 400, 1, true]
    ])
    // The one row that measured a rate is the fastest ranked row, whatever the
    // one-round-trip row's ops/s; alone it has nothing to be compared with: no recommendation
    // (issue 34, item 8).
    expect(res.rows.map(r => r.fastest)).toEqual([true, false])
    expect(res.fastestBatchSize).toBe(10)
    expect(res.recommendedBatchSize).toBe(null)
    for (const r of res.rows) expect([r.ops, r.correct, r.speedup]).toEqual([400, true, null])
    expectRows(spy, 2, { counter: '400' })
    const text = formatTable(res)
    expect(text).toMatch(/batch sizes 1,000, 5,000 skipped: a row sends 400 commands, so they would send the same single batch as 400/)
    expect(text).toMatch(/^\s+400 .*† one round trip$/m)
    expect(text).toMatch(/^† one round trip: 400 — .*left out of "fastest"; a larger --count \(10 × window × batch size: 16,000 for 400\) measures it$/m)
    expect(text).toMatch(/^no batch size to recommend: only batch size 10 measured a rate, nothing to compare it with \(see †\); 10 ran at [\d,]+ ops\/s$/m)
    expect(text).not.toMatch(/^fastest|--batch-size here|^how sure/m)
    // No baseline: no in-a-row row and no speed-up column.
    expect(text).not.toMatch(/in a row|speed-up/)
    expect(await redis.dbsize()).toBe(before)
  })

  it('onProgress reports commands done and elapsed time while a row runs', async () => {
    const seen = []
    // In a row, 30 commands at 20 ms each: over 500 ms, so more than one report in the row.
    const res = await bench({ url: srv.url, rtt: '20ms', count: 30, batchSizes: [30], maxRowTime: 0, onProgress: p => seen.push(p) })
    expect(res.rows.map(r => r.ops)).toEqual([30, 30])
    const first = seen.filter(p => p.row === 1)
    expect(first[0]).toMatchObject({ row: 1, rows: 2, mode: 'in-a-row', ops: 0, elapsedMs: 0, count: 30, maxRowTimeMs: null })
    const during = first.filter(p => p.ops > 0)
    expect(during.length).toBeGreaterThan(0)
    for (const p of during) {
      expect(p.ops).toBeLessThanOrEqual(30)
      expect(p.elapsedMs).toBeGreaterThan(0)
    }
    expect(seen.filter(p => p.row === 2)[0]).toMatchObject({ mode: 'pipeline', batchSize: 30, ops: 0 })
  })

  it('the default batch sizes include the import default batch size', () => {
    expect(BENCH_DEFAULTS.batchSizes).toContain(DEFAULTS.batchSize)
    expect(BENCH_DEFAULTS.batchSizes).toEqual([...BENCH_DEFAULTS.batchSizes].sort((a, b) => a - b))
    expect(BENCH_DEFAULTS.batchSizes).toEqual(expect.arrayContaining([1, 10, 100, 1000, 10000, 100000]))
  })

  it('a file: rows/s and records next to ops/s; the file row that fits in one round trip is marked', async () => {
    const file = path.join(tmp, 'rate.csv')
    const lines = ['id,country']
    for (let i = 1; i <= 40; i++) lines.push(`${i},${i % 2}`)
    fs.writeFileSync(file, lines.join('\n') + '\n')
    const spy = benchSpy(srv)
    // 40 records, 2 commands each: 80 commands a row; 80 and 500 would both be one batch.
    const res = await bench({ redis: spy.redis, input: file, key: 'c:{id}', command: 'SADD cs:{country} {id}', batchSizes: [4, 80, 500] })
    expect(res.skippedBatchSizes).toEqual([500])
    expect(res.rows.map(r => [r.batchSize, r.records, r.ops, r.oneRoundTrip])).toEqual([[1, 40, 80, false], [4, 40, 80, false], [80, 40, 80, true]])
    for (const r of res.rows) expect(typeof r.recordsPerSec).toBe('number')
    expectRows(spy, 3, row => expect.objectContaining({ 'c:1': { id: '1', country: '1' }, 'cs:0': expect.any(Array) }))
    const text = formatTable(res)
    expect(text).toMatch(/^\s*batch\s+commands\s+records\s+time\s+ops\/s\s+rows\/s\s+speed-up\s/m)
    expect(text).toMatch(/^in a row\s+80\s+40\s/m)
    expect(formatChart(res)).toMatch(/^rows\/s by batch size$/m)
    // Batch 4 is 20 batches, 5 round trips (‡), 80 one (†): neither measured a rate, so nothing
    // is recommended. Which of these 3 ms rows is fastest is the machine's noise: 4, 80, or the
    // row in a row (then the line says batching did not help).
    expect(res.recommendedBatchSize).toBeNull()
    expect(text).toMatch(/^(no batch size to recommend: no batched row spanned 10 round trips \(see †, ‡\); fastest of them: (4|80) at [\d,]+ rows\/s \([\d,]+ ops\/s|fastest: in a row at [\d,]+ rows\/s)/m)
    const csv = formatCsv(res).trim().split('\n')
    expect(csv[0]).toMatch(/,records,recordsPerSec,oneRoundTrip,roundTrips,ranked,marginOpsPerSec$/)
    expect(csv[3]).toMatch(/,40,\d+,true,1,false,\d*$/)
  })
})

describe('bench progress line', () => {
  it('says the row, the commands done of the count, the elapsed time and the cap', () => {
    expect(formatProgress({ row: 1, rows: 8, run: 1, runs: 1, mode: 'in-a-row', batchSize: 1, ops: 57, count: 20000, elapsedMs: 2870, maxRowTimeMs: 10000 }))
      .toBe('row 1/8: in a row · 57 of 20,000 commands · 2.9 s (stops at 10 s)')
    expect(formatProgress({ row: 3, rows: 4, run: 2, runs: 3, mode: 'pipeline', batchSize: 5000, ops: 0, count: 100, elapsedMs: 0, maxRowTimeMs: null }))
      .toBe('row 3/4: batch size 5,000 (run 2/3) · 0 of 100 commands · 0.0 s')
    // A file: records read and commands sent (the total is not known in advance).
    expect(formatProgress({ row: 2, rows: 3, run: 1, runs: 1, mode: 'pipeline', batchSize: 10, ops: 240, records: 120, count: null, elapsedMs: 1234, maxRowTimeMs: 10000 }))
      .toBe('row 2/3: batch size 10 · 120 records · 240 commands · 1.2 s (stops at 10 s)')
  })
})

describe('bench output formats', () => {
  const res = {
    workload: 'incr', input: null, count: 10, rttMs: null, jitterMs: null, rttSimulated: false, pingMs: 0.1,
    target: '127.0.0.1:1', window: 4, repeat: 1, maxRowTimeMs: 10000, fastestBatchSize: 10, recommendedBatchSize: 10,
    rows: [
      { mode: 'in-a-row', batchSize: 1, window: 1, ops: 10, batches: 10, durationMs: 2, opsPerSec: 5000, speedup: 1, latencyMs: { p50: 0.1, p99: 0.2, max: 0.3 }, serverReplyPeakBytes: null, clientRssPeakBytes: 1048576, correct: true, capped: false, runs: 1, opsPerSecMin: 5000, opsPerSecMax: 5000, fastest: false },
      { mode: 'pipeline', batchSize: 10, window: 4, ops: 10, batches: 1, durationMs: 0.5, opsPerSec: 20000, speedup: 4, latencyMs: { p50: 0.4, p99: 0.4, max: 0.4 }, serverReplyPeakBytes: 0, clientRssPeakBytes: 2097152, correct: true, capped: false, runs: 1, opsPerSecMin: 20000, opsPerSecMax: 20000, fastest: true }
    ]
  }

  it('table: aligned columns, n/a, the fastest row marked', () => {
    const text = formatTable(res)
    const rows = text.split('\n').filter(l => /^\s*(in a row|10)\s/.test(l))
    expect(rows).toHaveLength(2)
    expect(rows[0].indexOf('yes')).toBe(rows[1].indexOf('yes'))
    expect(rows[0]).toContain('n/a')
    expect(rows[1]).toMatch(/◀ fastest$/)
    expect(formatChart(res).split('\n')[2]).toMatch(/^\s+10 │█{50} 20,000$/)
  })

  it('CSV: a header and one line per row, empty for n/a', () => {
    const lines = formatCsv(res).trim().split('\n')
    expect(lines).toHaveLength(3)
    const head = lines[0].split(',')
    const first = Object.fromEntries(lines[1].split(',').map((v, i) => [head[i], v]))
    expect(first).toMatchObject({ mode: 'in-a-row', batchSize: '1', opsPerSec: '5000', serverReplyPeakBytes: '', correct: 'true' })
  })

  it('Markdown: a table with the fastest ops/s in bold', () => {
    const md = formatMarkdown(res)
    expect(md).toMatch(/^\| batch \| commands \|/m)
    expect(md).toMatch(/^\| ---: \|/m)
    expect(md).toContain('**20,000**')
  })

  it('the underline has one segment per titled column', () => {
    const lines = formatTable(res).split('\n')
    const at = lines.findIndex(l => /^─/.test(l.trim()))
    const titles = lines[at - 1].trim().split(/\s{2,}/)
    const segments = lines[at].trim().split(/\s+/)
    expect(segments).toHaveLength(titles.length)
    expect(titles).toEqual(['batch', 'commands', 'time', 'ops/s', 'speed-up', 'batch p50', 'p99', 'max', 'server replies', 'client RSS', 'ok'])
  })

  /** A result with pipeline rows of these ops/s (min and max per row for repeats). */
  function withRows (specs, extra = {}) {
    const rows = specs.map(([batchSize, opsPerSec, more = {}]) => ({
      ...res.rows[1], batchSize, opsPerSec, opsPerSecMin: opsPerSec, opsPerSecMax: opsPerSec, durationMs: 500, fastest: false, oneRoundTrip: false, ...more
    }))
    rows.unshift({ ...res.rows[0], durationMs: 500 })
    const best = rows.filter(r => r.mode === 'pipeline' && !r.oneRoundTrip).sort((a, b) => b.opsPerSec - a.opsPerSec)[0]
    if (best) best.fastest = true
    return { ...res, rows, fastestBatchSize: best ? best.batchSize : null, ...extra }
  }

  it('the fastest that is also the smallest within 10% is named once', () => {
    const text = formatTable(withRows([[10, 20000], [100, 40000]], { recommendedBatchSize: 100 }))
    expect(text).toMatch(/^fastest, and no smaller batch within 10% of it: batch size 100 at 40,000 ops\/s \([\d.,]+x in a row\): a good --batch-size here$/m)
    expect(text).not.toMatch(/smallest batch within 10% of it: 100/)
  })

  it('a smaller batch within 10% of the fastest is recommended as such', () => {
    const text = formatTable(withRows([[10, 39000], [100, 40000]], { recommendedBatchSize: 10 }))
    expect(text).toMatch(/^fastest: batch size 100 at 40,000 ops\/s .*; smallest batch within 10% of it: 10 \(a good --batch-size here: as fast, less memory\)$/m)
  })

  it('how sure, one run each: ahead only beyond both margins; within them not a clear winner; unknown margins never ahead', () => {
    const m = (marginOpsPerSec) => ({ marginOpsPerSec, marginFrom: 'slices' })
    // 40,000 - 2,000 > 20,000 + 1,000: beyond the margins of one run each, which measure the
    // jitter within a run, not a rerun: no winner from one run (issue 34, item 8); a ratio,
    // not "% apart" (item 11).
    const beyond = formatTable(withRows([[10, 20000, m(1000)], [100, 40000, m(2000)]], { recommendedBatchSize: 100 }))
    expect(beyond).toMatch(/^how sure: one run: --repeat 3 to know \(100 ran 2\.0x as fast as 10, the next fastest, beyond the margins: 100 ±5%, 10 ±5%: 95% margins from 5 slices of one run each; they measure the jitter within a run, not how much a rerun differs\)$/m)
    expect(beyond).not.toMatch(/% apart|% ahead|is \d+% /)
    // Twice as fast, but 40,000 - 24,000 < 20,000 + 1,000: within the margins.
    expect(formatTable(withRows([[10, 20000, m(1000)], [100, 40000, m(24000)]], { recommendedBatchSize: 100 })))
      .toMatch(/^how sure: not a clear winner: 100 ran 2\.0x as fast as 10, within the margins \(100 ±60%, 10 ±5%: .*\)$/m)
    // 3% faster (1.03x), beyond margins of 1%: still one run.
    expect(formatTable(withRows([[10, 38800, m(388)], [100, 40000, m(400)]], { recommendedBatchSize: 10 })))
      .toMatch(/^how sure: one run: --repeat 3 to know \(100 ran 1\.03x as fast as 10, the next fastest, beyond the margins: 100 ±1%, 10 ±1%: /m)
    expect(formatTable(withRows([[10, 2000, m(1)], [100, 40000, m(1)]], { recommendedBatchSize: 100 })))
      .toMatch(/^how sure: one run: --repeat 3 to know \(100 ran 20x as fast as 10, /m)
    expect(formatTable(withRows([[10, 20000], [100, 40000, m(10)]], { recommendedBatchSize: 100 })))
      .toMatch(/^how sure: not known: 100 ran 2\.0x as fast as 10 in one run each, too few batches to measure a margin \(100 ±0%, 10 ±\?: .*\); --repeat 5 measures it$/m)
  })

  it('how sure with repeats: runs that overlap are not a clear winner; runs apart are', () => {
    const overlap = withRows([[10, 30000, { opsPerSecMin: 25000, opsPerSecMax: 38000, runs: 3 }], [100, 36000, { opsPerSecMin: 33000, opsPerSecMax: 40000, runs: 3 }]], { recommendedBatchSize: 100, repeat: 3 })
    expect(formatTable(overlap)).toMatch(/^how sure: not a clear winner: the runs of 100 ±10% and 10 ±22% overlap$/m)
    const apart = withRows([[10, 20000, { opsPerSecMin: 19000, opsPerSecMax: 21000, runs: 3 }], [100, 36000, { opsPerSecMin: 35000, opsPerSecMax: 37000, runs: 3 }]], { recommendedBatchSize: 100, repeat: 3 })
    expect(formatTable(apart)).toMatch(/^how sure: each of the 3 runs of 100 ±3% beat every run of 10 ±5%, the next fastest$/m)
  })

  it('one ranked batched row: no "fastest" or "a good --batch-size" line, even when a larger unranked row ran faster (issue 34, item 8)', () => {
    // The README's old example: 10 measured a rate, 100 (‡, 2 round trips) ran 5x faster.
    const one = withRows([[10, 20000], [100, 100000, { ranked: false, roundTrips: 2 }]], { recommendedBatchSize: null })
    for (const r of one.rows) r.fastest = r.batchSize === 10 && r.mode === 'pipeline'
    const text = formatTable(one)
    expect(text).toMatch(/^no batch size to recommend: only batch size 10 measured a rate, nothing to compare it with \(see ‡\); 10 ran at 20,000 ops\/s \(4\.0x in a row\)$/m)
    expect(text).not.toMatch(/^fastest|--batch-size here|^how sure/m)
    expect(text).toMatch(/^‡ fewer than 10 round trips: 100 \(2\) — /m)
  })

  it('"may be faster" only when the data admits it: an unmeasured row beat the pick, or the rate still rose at the largest ranked size (issue 34, item 11)', () => {
    const onePass = { oneRoundTrip: true }
    // Rising: 100 (the largest ranked) is fastest; 1,000 (†) may be faster still.
    const rising = formatTable(withRows([[10, 30000], [100, 40000], [1000, 20000, onePass]], { recommendedBatchSize: 100 }))
    expect(rising).toMatch(/^fastest, and no smaller batch within 10% of it: batch size 100 at 40,000 ops\/s \(.*\): the best measured here$/m)
    expect(rising).toMatch(/^how sure: .*; 1,000 not measured \(†\): may be faster$/m)
    // The rate fell from 10 to 100, and 1,000 (†) ran slower still: not said to be faster.
    const fell = formatTable(withRows([[10, 40000], [100, 30000], [1000, 20000, onePass]], { recommendedBatchSize: 10 }))
    expect(fell).toMatch(/^fastest, and no smaller batch within 10% of it: batch size 10 at 40,000 ops\/s \(.*\): a good --batch-size here$/m)
    expect(fell).not.toMatch(/may be faster/)
    // It fell, but 1,000 (†) ran faster than 10 in its one round trip: it may be.
    const beat = formatTable(withRows([[10, 40000], [100, 30000], [1000, 50000, onePass], [10000, 20000, onePass]], { recommendedBatchSize: 10 }))
    expect(beat).toMatch(/^how sure: .*; 1,000 not measured \(†\): may be faster$/m)
  })

  it('in a row fastest: said so, with the smallest batch within 10% of it', () => {
    const slow = withRows([[10, 4800], [100, 4000]], { recommendedBatchSize: 10 })
    for (const r of slow.rows) r.fastest = r.mode === 'in-a-row'
    expect(formatTable(slow)).toMatch(/^fastest: in a row at 5,000 ops\/s: batching did not help here; smallest batch within 10% of it: 10$/m)
  })

  it('rows under 100 ms get a hint at --repeat (or, when repeated, a larger --count)', () => {
    const short = withRows([[10, 20000, { durationMs: 40 }], [100, 40000, { durationMs: 20 }]], { recommendedBatchSize: 100 })
    expect(formatTable(short)).toMatch(/^under 100 ms: 10, 100 — one stall changes such a row a lot; --repeat 5 \(or a larger --count\) steadies it$/m)
    expect(formatTable({ ...short, repeat: 3 })).toMatch(/^under 100 ms: 10, 100 — .*; a larger --count steadies it$/m)
    // A file takes no --count.
    expect(formatTable({ ...short, workload: 'file', input: 'x.csv' })).toMatch(/^under 100 ms: 10, 100 — .*; --repeat 5 \(or a larger file\) steadies it$/m)
    expect(formatTable(withRows([[10, 20000], [100, 40000]]))).not.toMatch(/under 100 ms/)
  })

  it('every batched row in one round trip: no recommendation, and the table says why', () => {
    const all = withRows([[10, 20000, { oneRoundTrip: true }]], { recommendedBatchSize: null, fastestBatchSize: null })
    all.rows[1].fastest = true
    const text = formatTable(all)
    expect(text).toMatch(/^no batch size to recommend: every batched row fit in one round trip \(see †\); fastest of them: 10 at 20,000 ops\/s/m)
    expect(text).toMatch(/^† one round trip: 10 — /m)
    expect(formatMarkdown(all)).toMatch(/^\| 10 † \|/m)
    expect(formatChart(all)).toMatch(/20,000 †$/m)
  })
})
