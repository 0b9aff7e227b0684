'use strict'
/* global it, expect, beforeAll, afterAll */

// Issue 35 item 1: several connections per master of a cluster (--connections n), each a
// "lane" owning the master's slots s with s % n = i. Per-key order: RPUSH of each record's
// id onto lists of a small set of keys, read back from the masters with LRANGE and compared
// with the ids in input order as this test generates them; and a resharding during the load
// (redis-cli --cluster reshard, as test/cluster.test.js does), with MOVED and ASK followed
// per lane: every key on its owner, nothing lost, nothing run twice.

const Redis = require('ioredis')
const keySlot = require('cluster-key-slot')
const { Readable } = require('node:stream')
const { startCluster, sleep } = require('./helpers/cluster')
const { describeEachServer } = require('./helpers/redis-server')
const { scaledMs } = require('./helpers/wait')
const { load } = require('..')

const ROWS = 30_000
const KEYS = 23
const OTHER = 17

function row (id) {
  const x = (id * 2654435761) % 4294967296
  return { id, k: x % KEYS, j: (x >>> 12) % OTHER, m: id % 2000 }
}

function * rows (n, from = 1) {
  for (let id = from; id <= n; id++) yield row(id)
}

/** The records as NDJSON bytes, 500 a piece (an input the parse workers can cut). */
function * ndjson (n) {
  for (let id = 1; id <= n; id += 500) {
    const lines = []
    for (let i = id; i < Math.min(n + 1, id + 500); i++) lines.push(JSON.stringify(row(i)))
    yield Buffer.from(lines.join('\n') + '\n')
  }
}

/** The lists' contents in input order: { 'a:<k>': [ids], 'b:<j>': [ids] }. */
function expectedLists (n) {
  const want = new Map()
  const push = (key, id) => { if (!want.has(key)) want.set(key, []); want.get(key).push(String(id)) }
  for (const r of rows(n)) {
    push(`a:${r.k}`, r.id)
    push(`b:${r.j}`, r.id)
  }
  return want
}

/** Per master port, a client; each key read from the master owning its slot now. */
async function reader (cluster) {
  const owners = new Array(16384)
  for (const [s, e, port] of await cluster.slots()) for (let i = s; i <= e; i++) owners[i] = port
  const clients = new Map()
  const on = key => {
    const port = owners[keySlot(key)]
    if (!clients.has(port)) clients.set(port, new Redis({ port, host: '127.0.0.1', protocol: 2 }))
    return clients.get(port)
  }
  return { on, close: () => { for (const c of clients.values()) c.disconnect() } }
}

async function expectLists (cluster, want, { sorted = false } = {}) {
  const r = await reader(cluster)
  try {
    for (const [key, ids] of want) {
      const got = await r.on(key).lrange(key, 0, -1)
      if (sorted) expect([...got].sort(), key).toEqual([...ids].sort())
      else expect(got, key).toEqual(ids)
    }
  } finally {
    r.close()
  }
}

describeEachServer('--connections n per master of a 3-master cluster', server => {
  let cluster
  beforeAll(async () => { cluster = await startCluster({ masters: 3, server }) })
  afterAll(async () => { await cluster?.stop() })

  for (const workers of [0, 2]) {
    it(`--workers ${workers}: connections 1, 2, 3 and 4 per master give each key its ids in input order`, async () => {
      const want = expectedLists(ROWS)
      for (const n of [1, 2, 3, 4]) {
        await cluster.flushall()
        const input = workers ? Readable.from(ndjson(ROWS)) : rows(ROWS)
        const s = await load({ url: cluster.url, input, ...(workers ? { format: 'ndjson', name: 'rows', chunkSize: '16KiB' } : {}), commands: ['RPUSH a:{k} {id}', 'RPUSH b:{j} {id}'], connections: n, batchSize: 300, workers })
        expect(s, `connections ${n}`).toMatchObject({ records: ROWS, loaded: ROWS, errors: 0, commands: 2 * ROWS, acknowledged: 2 * ROWS })
        expect(s.cluster.masters).toBe(3)
        expect(s.connections).toEqual(n === 1 ? undefined : { count: n, auto: null })
        await expectLists(cluster, want)
      }
    }, scaledMs(180_000))
  }

  it(`slots moved during the load (${server.name}-cli --cluster reshard), 3 connections per master: MOVED and ASK followed, nothing lost or run twice`, async () => {
    await cluster.flushall()
    const n = 100_000
    const [from, to] = await cluster.masterPorts()
    const id = async port => { const c = new Redis({ port, protocol: 2 }); try { return await c.cluster('MYID') } finally { c.disconnect() } }
    const reshard = async () => {
      await cluster.cli(['--cluster', 'reshard', `127.0.0.1:${from}`, '--cluster-from', await id(from), '--cluster-to', await id(to),
        '--cluster-slots', '300', '--cluster-yes', '--cluster-replace', '--cluster-pipeline', '50'])
    }
    // 40,000 records, then the reshard, records trickling while it runs, then the rest.
    async function * input () {
      yield * rows(40_000)
      let done = false
      const job = reshard().finally(() => { done = true })
      let i = 40_000
      while (!done && i < n) {
        yield * rows(Math.min(n, i + 500), i + 1)
        i = Math.min(n, i + 500)
        await sleep(5)
      }
      await job
      yield * rows(n, i + 1)
    }
    const s = await load({ url: cluster.url, input: input(), commands: ['SET k:{id} {id}', 'RPUSH r:{m} {id}'], connections: 3, batchSize: 500 })
    expect(s).toMatchObject({ records: n, loaded: n, errors: 0, errorReplies: 0, resentCommands: 0 })
    expect(s.acknowledged).toBe(s.commands)
    expect(s.cluster.moved).toBeGreaterThan(0)
    await cluster.settled()
    const r = await reader(cluster)
    try {
      for (let lo = 1; lo <= n; lo += 5000) {
        const ids = Array.from({ length: Math.min(5000, n - lo + 1) }, (_, i) => lo + i)
        const got = await Promise.all(ids.map(i => r.on(`k:${i}`).get(`k:${i}`)))
        expect(got).toEqual(ids.map(String))
      }
    } finally {
      r.close()
    }
    // A command re-sent after MOVED or ASK ran nowhere before: each id once in its list (2000
    // lists, so that some are in the slots moved). Compared as sets: a command answered MOVED
    // may be re-sent after a later one on its key that went to the new owner directly.
    const want = new Map()
    for (const x of rows(n)) {
      if (!want.has(`r:${x.m}`)) want.set(`r:${x.m}`, [])
      want.get(`r:${x.m}`).push(String(x.id))
    }
    await expectLists(cluster, want, { sorted: true })
  }, scaledMs(180_000))
})
