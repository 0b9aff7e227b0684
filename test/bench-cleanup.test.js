'use strict'
/* global describe, it, expect, beforeAll */ // vitest globals (see vitest.config.js)

// Timing mode cleans up by deleting the keys its workload wrote, by name, not by SCANning
// the whole keyspace after every row (issue 34, item 8: on a 3M-key server, 5,998 SCAN calls
// took 27 s of a 30 s command). The server's own command counts (INFO commandstats, read by
// the test's client) are the oracle: no SCAN at all, however many unrelated keys there are.

const { useServer } = require('./helpers/redis-server')
const { waitFor } = require('./helpers/wait')
const { bench } = require('../lib/bench')

let srv
let redis
useServer('pipeload-bench-cleanup-', s => { ({ srv, redis } = s) })

// Unrelated keys: a SCAN COUNT 1000 of the keyspace takes 60 calls, per row.
const UNRELATED = 60000

/** The calls of `name` the server counted since the last CONFIG RESETSTAT. */
async function calls (name) {
  return Number((await redis.info('commandstats')).match(new RegExp(`^cmdstat_${name}:calls=(\\d+),`, 'm'))?.[1] ?? 0)
}

beforeAll(async () => {
  for (let from = 0; from < UNRELATED; from += 1000) {
    const args = []
    for (let i = from; i < from + 1000; i++) args.push(`unrelated:${i}`, `v${i}`)
    await redis.mset(...args)
  }
})

async function expectUnrelatedIntact () {
  expect(await redis.dbsize()).toBe(UNRELATED)
  expect(await redis.get('unrelated:0')).toBe('v0')
  expect(await redis.get(`unrelated:${UNRELATED - 1}`)).toBe(`v${UNRELATED - 1}`)
}

describe('bench deletes the keys it wrote by name (issue 34, item 8)', () => {
  it.each(['set', 'hset', 'incr'])('%s: no SCAN on a server of 60,000 unrelated keys; every bench key deleted, the others kept', async (workload) => {
    await redis.config('RESETSTAT')
    const res = await bench({ url: srv.url, workload, count: 3000, batchSizes: [100, 1000] })
    expect(res.rows.map(r => [r.batchSize, r.ops, r.correct])).toEqual([[1, 3000, true], [100, 3000, true], [1000, 3000, true]])
    expect(await calls('scan')).toBe(0)
    // Deleted by name: set and hset 3,000 keys a row (3 rows), incr one counter a row.
    const keys = workload === 'incr' ? 3 : 9000
    expect(await calls('unlink')).toBeGreaterThan(0)
    expect(await calls('unlink')).toBeLessThanOrEqual(keys)
    expect(await redis.keys('pipeload:bench:*')).toEqual([])
    await expectUnrelatedIntact()
  })

  it('a run stopped mid-row (Ctrl-C) deletes that row\'s keys by name too', async () => {
    await redis.config('RESETSTAT')
    const ac = new AbortController()
    let seen = null
    const p = bench({
      url: srv.url, workload: 'set', count: 1_000_000, batchSizes: [10], baseline: false, maxRowTime: 0, signal: ac.signal,
      // Abort once the row has written keys: mid-row, with keys to delete.
      onProgress: () => { seen ??= waitFor('bench keys', async () => await redis.dbsize() > UNRELATED + 100).then(() => ac.abort()) }
    })
    await expect(p).rejects.toMatchObject({ code: 'PIPELOAD_ABORTED' })
    await seen
    expect(await calls('scan')).toBe(0)
    expect(await calls('set')).toBeGreaterThan(100)
    expect(await redis.keys('pipeload:bench:*')).toEqual([])
    await expectUnrelatedIntact()
  })
})
