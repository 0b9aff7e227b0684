'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// `pipeload bench` as a user runs it: bin/pipeload.js spawned with process.execPath against
// a private redis-server named with -u (the inherited REDIS_URL/REDISCLI_AUTH are removed).

const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { startRedis } = require('./helpers/redis-server')
const { runCli: pipeload, BIN } = require('./helpers/run-cli')
const { monitorCommands } = require('./helpers/bench-spy')

let srv
let redis

beforeAll(async () => {
  srv = await startRedis()
  redis = srv.client()
})

afterAll(async () => {
  if (srv) await srv.stop()
})

const SMALL = ['--count', '200', '--batch-sizes', '1,20,200']
const ROW_KEY = /^pipeload:bench:[0-9a-f]{12}:(\d+):(.*)$/
const READS = new Set(['get', 'hget', 'scan', 'type', 'ping', 'echo', 'client', 'info', 'dbsize', 'hello', 'select', 'auth', 'unlink', 'monitor', 'config', 'command', 'cluster', 'acl'])

/**
 * What a bench process sent, from the server's MONITOR feed (bench's own `correct` flag is
 * not the proof): per row number, the writes in order as [command, key without the row
 * prefix, ...args]; every key written is unlinked after its writes; no other key is touched.
 */
function rowsFromMonitor (commands) {
  const rows = new Map()
  const written = new Map() // full key -> index of its last write
  const unlinked = new Map()
  commands.forEach(([name, ...args], i) => {
    name = name.toLowerCase()
    if (name === 'unlink') { for (const k of args) unlinked.set(k, i); return }
    if (READS.has(name)) return
    const m = ROW_KEY.exec(args[0])
    expect(m, `a write outside bench's prefix: ${name} ${args.join(' ')}`).not.toBe(null)
    written.set(args[0], i)
    const n = Number(m[1])
    if (!rows.has(n)) rows.set(n, [])
    rows.get(n).push([name, m[2], ...args.slice(1)])
  })
  for (const [key, at] of written) expect(unlinked.get(key), `${key} unlinked after its last write`).toBeGreaterThan(at)
  return rows
}

describe('pipeload bench', () => {
  it('--json: the documented shape on stdout, exit 0, nothing left behind', async () => {
    await redis.set('mine', 'keep')
    const before = await redis.dbsize()
    const monitor = await monitorCommands(srv)
    const r = await pipeload(['bench', '-u', srv.url, ...SMALL, '--json'])
    await monitor.flush()
    monitor.stop()
    // In a row, 1, 20, 200: each row 200 INCRs of its own counter, then deleted.
    const rows = rowsFromMonitor(monitor.commands)
    expect([...rows.keys()]).toEqual([1, 2, 3, 4])
    // The counter is created with the safety TTL (an hour) first; INCR keeps it.
    for (const cmds of rows.values()) expect(cmds).toEqual([['set', 'counter', '0', 'PX', '3600000'], ...Array(200).fill(['incr', 'counter'])])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const res = JSON.parse(r.stdout)
    expect(res).toMatchObject({ workload: 'incr', count: 200, rttMs: null })
    expect(res.rows.map(x => [x.mode, x.batchSize, x.correct])).toEqual([
      ['in-a-row', 1, true], ['pipeline', 1, true], ['pipeline', 20, true], ['pipeline', 200, true]
    ])
    for (const row of res.rows) {
      expect(Object.keys(row)).toEqual(expect.arrayContaining(['mode', 'batchSize', 'durationMs', 'opsPerSec', 'speedup',
        'latencyMs', 'serverReplyPeakBytes', 'clientRssPeakBytes', 'correct']))
    }
    expect(await redis.dbsize()).toBe(before)
    expect(await redis.get('mine')).toBe('keep')
  })

  it('--csv: a header line and one line per row', async () => {
    const monitor = await monitorCommands(srv)
    const r = await pipeload(['bench', '-u', srv.url, ...SMALL, '--workload', 'set', '--csv'])
    expect(r.code).toBe(0)
    await monitor.flush()
    monitor.stop()
    const rows = rowsFromMonitor(monitor.commands)
    expect([...rows.keys()]).toEqual([1, 2, 3, 4])
    // Each key with the safety TTL (an hour): nothing outlives a killed bench.
    const want = Array.from({ length: 200 }, (_, i) => ['set', `set:${i}`, `value-${i}`, 'PX', '3600000'])
    for (const cmds of rows.values()) expect(cmds).toEqual(want)
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^mode,batchSize,window,ops,durationMs,opsPerSec,speedup,/)
    expect(lines.slice(1).map(l => l.split(',').slice(0, 2).join(','))).toEqual(['in-a-row,1', 'pipeline,1', 'pipeline,20', 'pipeline,200'])
  })

  it('--markdown: a Markdown table', async () => {
    const r = await pipeload(['bench', '-u', srv.url, ...SMALL, '--markdown'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^\| batch \| commands \| time \| ops\/s \|/m)
    // 200 commands in one batch of 200: one round trip, marked †; in ten of 20, three round trips, marked ‡.
    expect(r.stdout.match(/^\| (in a row|1|20|200)( [†‡])? \|/gm)).toHaveLength(4)
    expect(r.stdout).toMatch(/^\| 20 ‡ \|/m)
    expect(r.stdout).toMatch(/^\| 200 † \|/m)
  })

  it('default: the table, the fastest row marked, and the chart', async () => {
    const r = await pipeload(['bench', '-u', srv.url, ...SMALL])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^pipeload bench · INCR one key × 200 · 127\.0\.0\.1:\d+ · window 4$/m)
    expect(r.stdout).toMatch(/^in a row\s+200\s/m)
    expect(r.stdout).toContain('◀ fastest')
    expect(r.stdout).toMatch(/^ops\/s by batch size$/m)
  })

  it('--help says what it touches and that it never flushes', async () => {
    const r = await pipeload(['bench', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/pipeload:bench:<random>:/)
    expect(r.stdout).toMatch(/never runs\s+FLUSHDB or FLUSHALL/)
  })

  it('--help: the default sizes include the import default (5000), --no-baseline, one round trip, rows/s, progress', async () => {
    const r = await pipeload(['bench', '--help'])
    expect(r.code).toBe(0)
    const text = r.stdout.replace(/\s+/g, ' ')
    expect(text).toContain('1,10,100,1000,5000,10000,100000')
    expect(text).toMatch(/--no-baseline skip the "in a row" row/)
    expect(text).toMatch(/count <= window x batch size\) times one round trip, not a rate: it is marked †; one of fewer than 10 round trips is marked ‡; neither is ranked/)
    expect(text).toMatch(/Batch sizes above --count are skipped but the smallest/)
    expect(text).toMatch(/Rows under 100 ms are noisy: --repeat 5/)
    expect(text).toMatch(/records \(rows\/s, as import counts them\) next to commands \(ops\/s\)/)
    expect(text).toMatch(/On a terminal, stderr shows each row's progress/)
    expect(text).toContain('pipeload bench --rtt 50ms --count 1000000 --no-baseline --repeat 3')
  })

  it('--no-baseline: no in-a-row row, no speed-up', async () => {
    const json = await pipeload(['bench', '-u', srv.url, ...SMALL, '--no-baseline', '--json'])
    expect(json.code).toBe(0)
    const res = JSON.parse(json.stdout)
    expect(res.baseline).toBe(false)
    expect(res.rows.map(x => [x.mode, x.batchSize, x.speedup])).toEqual([['pipeline', 1, null], ['pipeline', 20, null], ['pipeline', 200, null]])
    const table = await pipeload(['bench', '-u', srv.url, ...SMALL, '--no-baseline'])
    expect(table.code).toBe(0)
    expect(table.stdout).not.toMatch(/in a row|speed-up/)
  })

  it('on a terminal, stderr shows each row with the commands done and the elapsed time', async () => {
    // script(1) gives the CLI a pseudo-terminal, so stderr.isTTY is true. In a row, 30
    // commands at 20 ms each: over 500 ms, so the line is redrawn during the row.
    const cmd = `"${process.execPath}" "${BIN}" bench -u ${srv.url} --rtt 20ms --count 30 --batch-sizes 30 --max-row-time 0`
    const { stdout } = await promisify(execFile)('script', ['-qfec', cmd, '/dev/null'], { encoding: 'utf8' })
    expect(stdout).toContain('\r\x1b[Krow 1/2: in a row · 0 of 30 commands · 0.0 s')
    expect(stdout).toMatch(/\r\x1b\[Krow 1\/2: in a row · [1-9]\d* of 30 commands · \d+\.\d s/)
    expect(stdout).toContain('\r\x1b[Krow 2/2: batch size 30 · 0 of 30 commands')
    // The line is cleared before the table.
    expect(stdout).toMatch(/\r\x1b\[Kpipeload bench · INCR one key × 30/)
  })

  it('without --count the count grows so the largest batch spans 10 round trips; a given --count is kept', async () => {
    await redis.config('RESETSTAT')
    // 10 x window 4 x batch 3,000 = 120,000 INCRs a row, two rows: the server counts 240,000.
    const r = await pipeload(['bench', '-u', srv.url, '--batch-sizes', '1000,3000', '--no-baseline', '--json'])
    expect(r.code).toBe(0)
    const res = JSON.parse(r.stdout)
    expect([res.count, res.countGrown]).toEqual([120000, true])
    expect(res.rows.map(x => [x.batchSize, x.ops, x.roundTrips, x.ranked])).toEqual([[1000, 120000, 30, true], [3000, 120000, 10, true]])
    expect((await redis.info('commandstats')).match(/^cmdstat_incr:calls=(\d+),/m)?.[1]).toBe('240000')
    const table = await pipeload(['bench', '-u', srv.url, '--batch-sizes', '1000,3000', '--no-baseline'])
    expect(table.stdout).toMatch(/^--count 120,000: the default, grown so the largest batch size spans 10 round trips/m)
    const given = JSON.parse((await pipeload(['bench', '-u', srv.url, '--count', '300', '--batch-sizes', '1000,3000', '--no-baseline', '--json'])).stdout)
    expect([given.count, given.countGrown]).toEqual([300, false])
  })

  it('bad usage exits 2 with one line', async () => {
    for (const args of [['--rtt', 'fast'], ['--key', 'user:{id}'], ['--json', '--csv'], ['--batch-sizes', '0']]) {
      const r = await pipeload(['bench', '-u', srv.url, ...args])
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
    }
  })
})
