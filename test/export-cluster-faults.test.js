'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// docs/export.md "Faults" in a cluster of 3 masters and 3 replicas, each fault made while the
// export's output holds its first chunk (every master's read stopped mid-keyspace): a
// CLUSTER FAILOVER, a master killed, slots resharded (MOVED), a slot being migrated (ASK).
// The expected keyspace is what the test wrote with its own ioredis Cluster client; the file
// is read as a restore reads it (a key's part 1 replaces it, its parts in order).

const { Writable } = require('node:stream')
const { startCluster } = require('./helpers/cluster')
const { writeDataset, readExport, restoredText, comparable, hex } = require('./helpers/export-data')

const ASK_KEYS = 200
const { waitFor, scaledMs } = require('./helpers/wait')
const { exportKeys } = require('..')

/** exportKeys() into memory, `fault()` run while the output holds its first chunk. */
async function exportDuring (url, fault, options = {}) {
  const chunks = []
  const out = new Writable({
    highWaterMark: 1024,
    write (c, e, cb) {
      chunks.push(c)
      if (chunks.length === 1) fault().then(() => cb(), cb)
      else cb()
    }
  })
  const summary = await exportKeys({ url, output: out, batchSize: 50, pageSize: 100, scanCount: 50, window: 2, retryTimeout: scaledMs(30_000), ...options })
  return { summary, text: Buffer.concat(chunks).toString('utf8') }
}

describe('export faults in a cluster (3 masters, 3 replicas)', () => {
  let cluster, client, want
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3, replicas: 1 })
    client = cluster.client()
    want = await writeDataset(client, 'c:', { big: 1500, small: 300 })
    // Keys of one slot (hash tag {t}), for the ASK test.
    for (let i = 0; i < ASK_KEYS; i++) {
      await client.set(`ask:{t}:${i}`, `v${i}`)
      want.set(hex(`ask:{t}:${i}`), { type: 'string', ttl: null, value: hex(`v${i}`) })
    }
    // Every write on the replicas too: a failover then loses none of them.
    for (const port of await cluster.masterPorts()) {
      const c = cluster.nodeAt(port).client()
      try { await c.call('WAIT', '1', String(scaledMs(10_000))) } finally { c.disconnect() }
    }
  }, scaledMs(120_000))
  afterAll(async () => { await cluster?.stop() })

  const live = () => cluster.nodes.find(n => n.alive !== false)

  function expectWhole (text) {
    expect(comparable(readExport(restoredText(text)).keys)).toEqual(comparable(want))
  }

  it('CLUSTER FAILOVER mid-export: that master is read again from cursor 0 on the new master, every key', async () => {
    const [master] = await cluster.masterPorts()
    const { summary, text } = await exportDuring(live().url, async () => {
      const replica = await cluster.replicaOf(master)
      const c = replica.client()
      try {
        await c.cluster('FAILOVER')
        await waitFor('the replica to become master', async () => /role:master/.test(await c.info('replication')))
      } finally {
        c.disconnect()
      }
      await cluster.settled()
    })
    expectWhole(text)
    expect(summary.cluster.failovers).toBe(1)
    expect(summary.cluster.slotsMoved).toBe(0)
    expect(summary.masters).not.toContain(`127.0.0.1:${master}`)
  }, scaledMs(120_000))

  it('slots resharded mid-export (redis-cli --cluster reshard, MIGRATE): reads answered MOVED are followed, the moved slots read again, every key', async () => {
    const [from, to] = await cluster.masterPorts()
    const { summary, text } = await exportDuring(live().url, async () => {
      await cluster.reshard(from, to, 3000)
      await cluster.settled()
    })
    expectWhole(text)
    expect(summary.cluster.moved).toBeGreaterThan(0)
    expect(summary.cluster).toMatchObject({ slotsMoved: 3000, slotsReread: 3000, failovers: 0 })
  }, scaledMs(120_000))

  it('slots resharded mid-export with --match: the keys read again are the matching ones only', async () => {
    const [from, to] = await cluster.masterPorts()
    const { summary, text } = await exportDuring(live().url, async () => {
      await cluster.reshard(from, to, 2000)
      await cluster.settled()
    }, { match: 'c:*[^0]' }) // most keys (the output's first chunk comes mid-read), not those ending in 0
    const hashes = new Map([...want].filter(([k]) => /^c:.*[^0]$/s.test(Buffer.from(k, 'hex').toString('latin1'))))
    expect(comparable(readExport(restoredText(text)).keys)).toEqual(comparable(hashes))
    expect(summary.cluster).toMatchObject({ slotsMoved: 2000, slotsReread: 2000 })
  }, scaledMs(120_000))

  it('a slot being migrated mid-export (SETSLOT MIGRATING/IMPORTING, half its keys MIGRATEd): reads answered ASK are followed with ASKING, every key', async () => {
    const slot = Number(await client.cluster('KEYSLOT', 'ask:{t}:0'))
    const owners = await cluster.slots()
    const source = owners.find(([lo, hi]) => slot >= lo && slot <= hi)[2]
    const target = (await cluster.masterPorts()).find(p => p !== source)
    const src = cluster.nodeAt(source).client()
    const dst = cluster.nodeAt(target).client()
    const srcId = await src.cluster('MYID')
    const dstId = await dst.cluster('MYID')
    try {
      const { summary, text } = await exportDuring(live().url, async () => {
        await dst.cluster('SETSLOT', slot, 'IMPORTING', srcId)
        await src.cluster('SETSLOT', slot, 'MIGRATING', dstId)
        const keys = Array.from({ length: ASK_KEYS / 2 }, (_, i) => `ask:{t}:${i}`)
        await src.call('MIGRATE', '127.0.0.1', String(target), '', '0', String(scaledMs(10_000)), 'KEYS', ...keys)
      })
      expectWhole(text)
      expect(summary.cluster.asked).toBeGreaterThan(0)
      expect(summary.cluster.slotsReread).toBeGreaterThanOrEqual(1)
    } finally {
      // The migration finished: the slot is the target's.
      const rest = await src.cluster('GETKEYSINSLOT', slot, ASK_KEYS)
      if (rest.length) await src.call('MIGRATE', '127.0.0.1', String(target), '', '0', String(scaledMs(10_000)), 'KEYS', ...rest)
      for (const c of [dst, src]) await c.cluster('SETSLOT', slot, 'NODE', dstId)
      src.disconnect()
      dst.disconnect()
      await cluster.settled()
    }
  }, scaledMs(120_000))

  it('a master killed mid-export: its replica takes over, found by a slot-map refresh, every key', async () => {
    const [, master] = await cluster.masterPorts()
    const { summary, text } = await exportDuring(live().url, async () => {
      const replica = await cluster.replicaOf(master)
      const node = cluster.nodeAt(master)
      node.alive = false
      await node.kill('SIGKILL')
      const r = replica.client()
      try {
        await waitFor('the replica to take over', async () => /role:master/.test(await r.info('replication')), scaledMs(30_000))
      } finally {
        r.disconnect()
      }
    })
    expectWhole(text)
    expect(summary.cluster.failovers).toBe(1)
    expect(summary.masters).not.toContain(`127.0.0.1:${master}`)
  }, scaledMs(120_000))
})
