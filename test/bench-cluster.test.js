'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Timing mode against a Redis Cluster (issue 34, items 8 and 11): the server's reply memory is
// sampled on every master where the user may run CLIENT (it was "n/a" on any cluster), still
// n/a where it may not; and each row's keys are deleted by name, one UNLINK per slot, with no
// SCAN of any master. Oracles: each master's own INFO commandstats and keyspace, read by the
// test's clients.

const Redis = require('ioredis')
const { startCluster } = require('./helpers/cluster')
const { bench } = require('..')
const { formatTable } = require('../lib/bench/format')

let cluster

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 })
})

afterAll(async () => {
  if (cluster) await cluster.stop()
})

/** `fn(client)` on every master, in turn; the results. */
async function onMasters (fn) {
  const out = []
  for (const port of await cluster.masterPorts()) {
    const c = new Redis({ port, protocol: 2 })
    try { out.push(await fn(c)) } finally { c.disconnect() }
  }
  return out
}

const calls = (c, name) => c.info('commandstats').then(t => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+),`, 'm').exec(t)?.[1] ?? 0))

describe('bench against a cluster', () => {
  it('CLIENT allowed: server reply memory measured on the masters, not n/a; keys deleted by name (no SCAN), the others kept', async () => {
    await onMasters(async c => { await c.config('RESETSTAT') })
    const others = cluster.client()
    for (let i = 0; i < 300; i++) await others.set(`other:${i}`, String(i))
    const res = await bench({ url: cluster.url, workload: 'set', count: 3000, batchSizes: [100, 1000] })
    expect(res.target).toMatch(/\(cluster\)$/)
    expect(res.rows.map(r => [r.batchSize, r.ops, r.correct])).toEqual([[1, 3000, true], [100, 3000, true], [1000, 3000, true]])
    for (const r of res.rows) {
      expect(typeof r.serverReplyPeakBytes, `row ${r.batchSize}`).toBe('number')
      expect(typeof r.serverTotalPeakBytes).toBe('number')
      expect(r.serverSamples).toBeGreaterThan(0)
    }
    const table = formatTable(res)
    expect(table.split('\n').filter(l => /^\s*(in a row|100|1,000)\s/.test(l)).filter(l => l.includes('n/a'))).toEqual([])
    // Every master ran SETs (the keys spread over the slots), none a SCAN; the bench keys are gone.
    expect((await onMasters(c => calls(c, 'set'))).every(n => n > 0)).toBe(true)
    expect(await onMasters(c => calls(c, 'scan'))).toEqual([0, 0, 0])
    expect((await onMasters(c => calls(c, 'unlink'))).every(n => n > 0)).toBe(true)
    const keys = (await onMasters(c => c.keys('*'))).flat().sort()
    expect(keys).toEqual(Array.from({ length: 300 }, (_, i) => `other:${i}`).sort())
  })

  it('connections 2: every master takes each row\'s writes on two connections of its own (MONITOR); keys deleted', async () => {
    const watches = []
    for (const port of await cluster.masterPorts()) {
      const c = new Redis({ port, protocol: 2 })
      // Ready first: its INFO (the ready check) landing as MONITOR's +OK arrives reaches ioredis
      // before it is in monitor mode ("Command queue state error", seen once in CI).
      await c.ping()
      const m = await c.monitor()
      const w = { c, m, sources: new Map(), sets: 0 }
      m.on('monitor', (time, args, source) => {
        const row = /^pipeload:bench:[0-9a-f]{12}:(\d+):/.exec(String(args[1] ?? ''))
        if (String(args[0]).toLowerCase() !== 'set' || !row) return
        w.sets++
        if (!w.sources.has(row[1])) w.sources.set(row[1], new Set())
        w.sources.get(row[1]).add(source)
      })
      watches.push(w)
    }
    const res = await bench({ url: cluster.url, workload: 'set', count: 3000, batchSizes: [100, 1000], baseline: false, connections: 2 })
    // A marker from another client, after the run: each feed has shown every earlier command once it shows the marker.
    for (const [i, port] of (await cluster.masterPorts()).entries()) {
      const seen = new Promise(resolve => watches[i].m.on('monitor', (t, args) => { if (args[0] === 'echo' && args[1] === 'bench-marker') resolve() }))
      const c = new Redis({ port, protocol: 2 })
      await c.echo('bench-marker')
      await seen
      c.disconnect()
      watches[i].m.disconnect()
      watches[i].c.disconnect()
    }
    expect(res.rows.map(r => [r.batchSize, r.connections, r.ops, r.correct])).toEqual([[100, 2, 3000, true], [1000, 2, 3000, true]])
    expect(watches.reduce((n, w) => n + w.sets, 0)).toBe(6000)
    for (const w of watches) expect([...w.sources.values()].map(s => s.size)).toEqual([2, 2])
    expect((await onMasters(c => c.keys('pipeload:bench:*'))).flat()).toEqual([])
  })

  it('CLIENT refused: the server columns stay n/a', async () => {
    await onMasters(c => c.call('ACL', 'SETUSER', 'noclient', 'on', '>pw', '~*', '+@all', '-client'))
    const res = await bench({ url: cluster.url.replace('redis://', 'redis://noclient:pw@'), workload: 'incr', count: 2000, batchSizes: [100] })
    expect(res.rows.map(r => [r.ops, r.correct, r.serverReplyPeakBytes])).toEqual([[2000, true, null], [2000, true, null]])
    expect(formatTable(res)).toMatch(/n\/a/)
    expect((await onMasters(c => c.keys('pipeload:bench:*'))).flat()).toEqual([])
  })
})
