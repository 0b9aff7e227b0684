'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// Redis Cluster: loads into a local cluster of redis-server processes (of each server kind
// found: Redis 7.0 and 8.0, Valkey 8.0 and 9.1, test/helpers/servers.js), with slots moved
// and a master failed over during the load. Afterwards every key must be on the master
// that owns its slot (checked with cluster-key-slot, ioredis' own implementation, not
// pipeload's; it is installed as a dependency of ioredis) with its value, and the counts
// must be right.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const Redis = require('ioredis')
const keySlot = require('cluster-key-slot')
const { startCluster, waitFor, sleep } = require('./helpers/cluster')
const { startRedis, describeEachServer } = require('./helpers/redis-server')
const { load, bench } = require('..')
const { SlotScanner, slotOf, CROSS_SLOT, NO_KEY } = require('../lib/encode/slots')
const { encodeCommand } = require('../lib/encode/resp')
const { Readable } = require('node:stream')

// Routed records: the first id whose key k:<id> hashes to each of the 16,384 slots (by
// cluster-key-slot, not by pipeload), so every slot gets a key with 16,384 records, not the
// 200,000 random ones it took to leave none empty. Ids up to about 156,000, in order.
const ROUTED_IDS = (() => {
  const first = new Int32Array(16384).fill(-1)
  let left = 16384
  for (let id = 0; left > 0; id++) {
    const s = keySlot(`k:${id}`)
    if (first[s] === -1) { first[s] = id; left-- }
  }
  return Int32Array.from(first).sort()
})()
const ROWS = ROUTED_IDS.length
// Loads with a fault (slots moved, a failover, a master killed) 40,000 records in: records
// keep coming until it is over, and tens of thousands after it.
const FAULT_ROWS = 100_000
const CLI = path.join(__dirname, '..', 'bin', 'pipeload.js')

const value = id => `v-${id}-${'x'.repeat(id % 13)}`

const row = id => ({ id, v: value(id), g: id % 7 })

function * rows (n, from = 0) {
  for (let i = from; i < n; i++) yield row(i)
}

function * rowsOf (ids) {
  for (const id of ids) yield row(id)
}

/** Records, with `during()` started after `at` records and the rest trickled until it ends. */
async function * rowsDuring (n, at, during) {
  yield * rows(at)
  let done = false
  const job = during().finally(() => { done = true })
  let i = at
  while (!done && i < n) {
    const end = Math.min(n, i + 500)
    yield * rows(end, i)
    i = end
    await sleep(5)
  }
  await job // a failing fault fails the test
  yield * rows(n, i)
}

/** rowsDuring's records as NDJSON bytes (an input the parse workers can cut), 500 rows a piece. */
async function * bytesDuring (n, at, during) {
  let lines = []
  for await (const r of rowsDuring(n, at, during)) {
    lines.push(JSON.stringify(r))
    if (lines.length === 500) {
      yield Buffer.from(lines.join('\n') + '\n')
      lines = []
    }
  }
  if (lines.length) yield Buffer.from(lines.join('\n') + '\n')
}

// HGET of each key given (of one slot), field ARGV[1]; a missing one as null (a Lua table
// ends at its first nil: false is returned as a RESP2 null instead).
const HGET_EACH = 'local r = {} for i, k in ipairs(KEYS) do r[i] = redis.call(\'HGET\', k, ARGV[1]) end return r'

/** Every key of `expected` on the master owning its slot, with its value; no other key. */
async function expectOnOwners (cluster, expected) {
  const owners = new Array(16384)
  for (const [s, e, port] of await cluster.slots()) for (let i = s; i <= e; i++) owners[i] = port
  const masters = [...new Set(owners)]
  let total = 0
  for (const port of masters) {
    const c = new Redis({ port, host: '127.0.0.1', protocol: 2 })
    try {
      const keys = []
      let cursor = '0'
      do {
        const [next, batch] = await c.scan(cursor, 'COUNT', 20000)
        cursor = next
        keys.push(...batch)
      } while (cursor !== '0')
      total += new Set(keys).size
      // Every value read back, the keys of a slot together (keys of one slot may share a
      // command on a cluster node): MGET for strings, HGET in a script for hashes.
      const groups = new Map()
      for (const k of keys) {
        const slot = keySlot(k)
        if (owners[slot] !== port) expect.fail(`${k} (slot ${slot}) is on ${port}, its slot is owned by ${owners[slot]}`)
        if (!expected.has(k)) expect.fail(`unexpected key ${k} on ${port}`)
        const g = `${expected.get(k).type} ${slot}`
        if (!groups.has(g)) groups.set(g, [])
        groups.get(g).push(k)
      }
      const reads = []
      for (const [g, ks] of groups) {
        for (let i = 0; i < ks.length; i += 1000) reads.push([g.startsWith('hash') ? 'hash' : 'string', ks.slice(i, i + 1000)])
      }
      for (let i = 0; i < reads.length; i += 2000) {
        const p = c.pipeline()
        const part = reads.slice(i, i + 2000)
        for (const [type, ks] of part) type === 'hash' ? p.eval(HGET_EACH, ks.length, ...ks, 'v') : p.mget(...ks)
        const replies = await p.exec()
        replies.forEach(([err, values], j) => {
          const ks = part[j][1]
          if (err) expect.fail(`${ks[0]} and ${ks.length - 1} more keys of its slot: ${err}`)
          ks.forEach((k, n) => {
            if (values[n] !== expected.get(k).value) expect.fail(`${k} is ${JSON.stringify(values[n])}, expected ${expected.get(k).value}`)
          })
        })
      }
    } finally {
      c.disconnect()
    }
  }
  expect(total).toBe(expected.size)
}

/** ids: a count (0 … n - 1) or the ids themselves. */
const idsOf = ids => typeof ids === 'number' ? Array.from({ length: ids }, (_, i) => i) : ids

function expectedSets (ids) {
  const m = new Map()
  for (const i of idsOf(ids)) m.set(`k:${i}`, { type: 'string', value: value(i) })
  return m
}

function expectedWithHashes (ids) {
  const m = expectedSets(ids)
  for (const i of idsOf(ids)) m.set(`h:{${i % 7}}:${i}`, { type: 'hash', value: value(i) })
  return m
}

function expectCounts (summary, n) {
  expect(summary).toMatchObject({ records: n, loaded: n, errors: 0, errorReplies: 0 })
  expect(summary.acknowledged).toBe(summary.commands)
}

describe('cluster slots', () => {
  it('hashes keys as Redis does (cluster-key-slot as reference), hash tags included', () => {
    const keys = ['foo', 'user:1000', '{user1000}.following', 'foo{{bar}}zap', 'foo{bar}{zap}', '{}', '', 'ü:ñ', '日本{語}', 'a'.repeat(300)]
    for (let i = 0; i < 2000; i++) keys.push(`k:${i}`, `h:{${i % 7}}:${i}`, `x{${i}}y`)
    for (const k of keys) expect(slotOf(k), k).toBe(keySlot(k))
    expect(slotOf('123456789')).toBe(0x31C3 & 16383)
  })

  it('finds each command\'s keys and slot in RESP bytes', () => {
    const cmds = [
      [['SET', 'foo', 'bar'], keySlot('foo')],
      [['hset', 'user:{42}', 'a', 'b', 'c', 'd'], keySlot('42')],
      [['MSET', 'a', '1', 'b', '2'], CROSS_SLOT],
      [['MSET', '{t}a', '1', '{t}b', '2'], keySlot('t')],
      [['PING'], NO_KEY],
      [['EVAL', 'return 1', '2', 'k1', 'k2'], CROSS_SLOT],
      [['EVAL', 'return 1', '2', '{k}1', '{k}2', 'arg'], keySlot('k')],
      [['ZUNIONSTORE', 'dst', '2', 'dst', 'src'], CROSS_SLOT],
      [['JSON.SET', 'doc:1', '$', '{}'], keySlot('doc:1')],
      [['EXPIRE', 'ключ', '10'], keySlot('ключ')]
    ]
    const buf = Buffer.from(cmds.map(([c]) => encodeCommand(c)).join(''))
    const scanner = new SlotScanner()
    let p = 0
    for (const [c, slot] of cmds) {
      expect(scanner.scan(buf, p), c.join(' ')).toBe(slot)
      p = scanner.end
    }
    expect(p).toBe(buf.length)
  })
})

describeEachServer('cluster', server => {
  // The failover tests' cluster (3 masters, 3 replicas) starts beside the first one: most of
  // a start is waiting (a cluster node takes writes 2 s after it started), so the waits overlap.
  let replicated
  beforeAll(() => {
    replicated = startCluster({ masters: 3, replicas: 1, server })
    replicated.catch(() => {}) // its error fails the failover tests' beforeAll, which awaits it
  })
  afterAll(async () => { await (await replicated?.catch(() => null))?.stop() })

  describe('load into a 3-master cluster', () => {
    let cluster
    beforeAll(async () => { cluster = await startCluster({ masters: 3, server }) })
    afterAll(async () => { await cluster?.stop() })

    it(`every node is the ${server.name} binary it was given (INFO server)`, async () => {
      for (const n of cluster.nodes) expect(await n.identity()).toEqual({ name: server.name, version: server.version })
    })

    it('hashes the edge cases of hash tags as the server does (CLUSTER KEYSLOT)', async () => {
      const c = new Redis({ port: cluster.nodes[0].port, protocol: 2 })
      try {
        for (const k of ['foo{}{bar}', '{}x', 'a{b', 'a}b{', '{{a}}', '{a}{b}', '}{x}', 'x{}}y}']) {
          expect(slotOf(k), k).toBe(await c.cluster('KEYSLOT', k))
        }
      } finally {
        c.disconnect()
      }
    })

    it(`detects the cluster and routes ${ROWS} records (2 commands each, hash tags) to the masters owning their slots, a key in every slot`, async () => {
      const summary = await load({ url: cluster.url, input: rowsOf(ROUTED_IDS), commands: ['SET k:{id} {v}', 'HSET h:{{{g}}}:{id} v {v}'] })
      expectCounts(summary, ROWS)
      expect(summary.commands).toBe(2 * ROWS)
      expect(summary.cluster).toMatchObject({ masters: 3, moved: 0, asked: 0 })
      expect(summary.target).toMatch(/^cluster via 127\.0\.0\.1:\d+ \(3 masters\)$/)
      await expectOnOwners(cluster, expectedWithHashes(ROUTED_IDS))
      // Each slot's keys counted by its owner (CLUSTER COUNTKEYSINSLOT), against cluster-key-slot's
      // count of the keys loaded: the servers hash as the reference does, and no slot is empty.
      const perSlot = new Uint32Array(16384)
      for (const k of expectedWithHashes(ROUTED_IDS).keys()) perSlot[keySlot(k)]++
      expect(perSlot.indexOf(0)).toBe(-1)
      const owners = new Array(16384)
      for (const [s, e, port] of await cluster.slots()) for (let i = s; i <= e; i++) owners[i] = port
      for (const port of new Set(owners)) {
        const c = new Redis({ port, protocol: 2 })
        try {
          const p = c.pipeline()
          const mine = []
          for (let slot = 0; slot < 16384; slot++) if (owners[slot] === port) { mine.push(slot); p.cluster('COUNTKEYSINSLOT', slot) }
          const counts = (await p.exec()).map(([err, n]) => { if (err) throw err; return n })
          const wrong = mine.filter((slot, i) => counts[i] !== perSlot[slot]).map(slot => `slot ${slot}: ${counts[mine.indexOf(slot)]} keys, expected ${perSlot[slot]}`)
          expect(wrong, `slots on ${port}`).toEqual([])
        } finally {
          c.disconnect()
        }
      }
      await cluster.flushall()
    })

    it('fails a record whose command spans slots (PIPELOAD_CROSSSLOT with file:line), sends none of it, loads the others', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-cluster-'))
      const file = path.join(dir, 'pairs.csv')
      fs.writeFileSync(file, 'id,a,b\n1,x,y\n2,same,same\n3,p,q\n')
      const failures = []
      const summary = await load({
        url: cluster.url,
        input: file,
        commands: ['SET one:{id} {a}', 'MSET {a}:k 1 {b}:k 2'],
        onError: 'skip',
        onFailure: f => failures.push(f)
      })
      expect(summary).toMatchObject({ records: 3, loaded: 1, errors: 2, errorReplies: 0 })
      expect(failures.map(f => [f.line, f.code])).toEqual([[2, 'PIPELOAD_CROSSSLOT'], [4, 'PIPELOAD_CROSSSLOT']])
      expect(failures[0].file).toBe(file)
      expect(failures[0].message).toMatch(/hash slot/)
      const c = cluster.client()
      expect(await c.get('one:2')).toBe('same')
      for (const k of ['one:1', 'one:3', 'x:k', 'y:k', 'p:k', 'q:k']) expect(await c.exists(k), k).toBe(0) // nothing of a failed record was sent
      await cluster.flushall()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it('the CLI: --cluster, a CSV file, every record on its master', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-cluster-'))
      const file = path.join(dir, 'rows.csv')
      const n = 20_000
      fs.writeFileSync(file, 'id,v\n' + Array.from({ length: n }, (_, i) => `${i},${value(i)}`).join('\n') + '\n')
      const r = spawnSync(process.execPath, [CLI, 'import', file, '--cluster', '-c', 'SET k:{id} {v}', '--json', '-u', cluster.url], { encoding: 'utf8' })
      expect(r.stderr).toBe('')
      expect(r.status).toBe(0)
      expectCounts(JSON.parse(r.stdout), n)
      await expectOnOwners(cluster, expectedSets(n))
      await cluster.flushall()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it('workers 2 and 4: the same keys and values on their masters; the workers hash the slots, this thread none', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-cluster-'))
      const file = path.join(dir, 'rows.ndjson')
      // About 300 KB: 9 chunks of 32 KiB, so each of 4 workers parses some.
      const n = 8_000
      fs.writeFileSync(file, [...rows(n)].map(r => JSON.stringify(r)).join('\n') + '\n')
      for (const [workers, mode] of [[2, true], [4, undefined]]) {
        // Commands this thread scans for their slot (counted, not spied: a spy's record of
        // 40,000 calls with their buffers is too big to print when the assertion fails).
        const scan = SlotScanner.prototype.scan
        let scanned = 0
        SlotScanner.prototype.scan = function (...args) { scanned++; return scan.apply(this, args) }
        let summary
        try {
          summary = await load({ url: cluster.url, input: file, commands: ['SET k:{id} {v}', 'HSET h:{{{g}}}:{id} v {v}'], workers, chunkSize: '32KiB', cluster: mode })
        } finally {
          SlotScanner.prototype.scan = scan
        }
        expectCounts(summary, n)
        expect(summary.cluster).toMatchObject({ masters: 3, moved: 0, asked: 0 })
        // Told it is a cluster (cluster: true), the workers hash every command from the start.
        if (mode === true) expect(scanned).toBe(0)
        await expectOnOwners(cluster, expectedWithHashes(n))
        await cluster.flushall()
      }
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it(`moves slots during the load (${server.name}-cli --cluster reshard): MOVED and ASK re-sent, nothing lost (${FAULT_ROWS} records)`, async () => {
      const [from, to] = await cluster.masterPorts()
      const reshard = () => cluster.reshard(from, to, 300, { replace: true })
      const summary = await load({ url: cluster.url, input: rowsDuring(FAULT_ROWS, 40_000, reshard), commands: ['SET k:{id} {v}'] })
      expectCounts(summary, FAULT_ROWS)
      expect(summary.cluster.moved).toBeGreaterThan(0)
      await cluster.settled()
      await expectOnOwners(cluster, expectedSets(FAULT_ROWS))
      await cluster.flushall()
      // The same with two parse workers, whose batches come grouped by master as the slot
      // map was when they were encoded: the moved slots' commands are re-sent from them.
      const back = () => cluster.reshard(to, from, 300, { replace: true })
      const input = Readable.from(bytesDuring(FAULT_ROWS, 40_000, back))
      const parallel = await load({ url: cluster.url, input, format: 'ndjson', name: 'rows', commands: ['SET k:{id} {v}'], workers: 2, chunkSize: '16KiB' })
      expectCounts(parallel, FAULT_ROWS)
      expect(parallel.cluster.moved).toBeGreaterThan(0)
      await cluster.settled()
      await expectOnOwners(cluster, expectedSets(FAULT_ROWS))
      await cluster.flushall()
    })

    it('timing mode against a cluster: set, hset and incr rows correct, keys spread over the masters, none left', async () => {
      // What the masters ran, read from them rather than from bench's own `correct` flag:
      // every command of every row (3 rows x 2,000: batches of 1, 100 and 1,000 commands; INCR
      // on one key per row lands on one master, SET and HSET keys spread over all of them).
      const calls = async name => {
        const per = []
        for (const port of await cluster.masterPorts()) {
          const c = new Redis({ port, protocol: 2 })
          try { per.push(Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(await c.info('commandstats'))?.[1] ?? 0)) } finally { c.disconnect() }
        }
        return per
      }
      for (const port of await cluster.masterPorts()) {
        const c = new Redis({ port, protocol: 2 })
        try { await c.config('RESETSTAT') } finally { c.disconnect() }
      }
      for (const workload of ['set', 'hset', 'incr']) {
        const r = await bench({ url: cluster.url, workload, count: 2_000, batchSizes: [100, 1000], baseline: true })
        expect(r.target).toMatch(/\(cluster\)$/)
        expect(r.rows.map(row => [row.batchSize, row.ops])).toEqual([[1, 2_000], [100, 2_000], [1000, 2_000]])
        const per = await calls(workload)
        expect(per.reduce((a, b) => a + b, 0)).toBe(6_000)
        if (workload !== 'incr') expect(per.every(n => n > 0)).toBe(true)
      }
      for (const port of await cluster.masterPorts()) {
        const c = new Redis({ port, protocol: 2 })
        try { expect(await c.dbsize()).toBe(0) } finally { c.disconnect() }
      }
      const f = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-cluster-'))
      fs.writeFileSync(path.join(f, 'kv.csv'), 'id,v\n' + Array.from({ length: 2000 }, (_, i) => `${i},${value(i)}`).join('\n') + '\n')
      const r = await bench({ url: cluster.url, workload: 'file', input: path.join(f, 'kv.csv'), command: ['SET k:{id} {v}'], batchSizes: [500] })
      expect(r.rows.map(row => row.ops)).toEqual([2000, 2000])
      // + 3: each incr row creates its counter with SET … PX first (the bench keys' safety TTL).
      expect((await calls('set')).reduce((a, b) => a + b, 0)).toBe(6_000 + 3 + 4_000)
      fs.rmSync(f, { recursive: true, force: true })
    })

    it('cluster: true against a server without cluster support is an option error', async () => {
      const srv = await startRedis({ server })
      try {
        const err = await load({ url: srv.url, input: rows(3), commands: ['SET k:{id} {v}'], cluster: true }).catch(e => e)
        expect(err.code).toBe('PIPELOAD_OPTION_INVALID')
        expect(err.message).toMatch(/cluster support disabled/)
      } finally {
        await srv.stop()
      }
    })
  })

  describe('failover during the load (3 masters, 3 replicas)', () => {
    let cluster
    beforeAll(async () => { cluster = await replicated })

    it(`CLUSTER FAILOVER on a replica: the old master answers MOVED, its commands go to the new one, nothing lost (${FAULT_ROWS} records)`, async () => {
      const [master] = await cluster.masterPorts()
      const failover = async (master) => {
        const replica = await cluster.replicaOf(master)
        const c = replica.client()
        try {
          await c.cluster('FAILOVER')
          await waitFor('the replica to become master', async () => /role:master/.test(await c.info('replication')))
        } finally {
          c.disconnect()
        }
        // Records keep coming until the loader has met the new topology: the old master has
        // answered it MOVED (Redis and Valkey count each error reply by its code).
        const old = cluster.nodeAt(master).client()
        try {
          await waitFor('the old master to answer MOVED', async () => /^errorstat_MOVED:count=[1-9]/m.test(await old.info('errorstats')))
        } finally {
          old.disconnect()
        }
      }
      const summary = await load({ url: cluster.url, input: rowsDuring(FAULT_ROWS, 40_000, () => failover(master)), commands: ['SET k:{id} {v}'] })
      expectCounts(summary, FAULT_ROWS)
      expect(summary.cluster.moved).toBeGreaterThan(0)
      await cluster.settled()
      expect(await cluster.masterPorts()).not.toContain(master)
      await expectOnOwners(cluster, expectedSets(FAULT_ROWS))
      await cluster.flushall()
      // The same with two parse workers: batches grouped by master, in shared memory given
      // back to the workers once settled, each master's part sent without a copy; the
      // commands the old master answers MOVED are re-sent from those batches.
      const [, , other] = await cluster.masterPorts()
      const input = Readable.from(bytesDuring(FAULT_ROWS, 40_000, () => failover(other)))
      const parallel = await load({ url: cluster.url, input, format: 'ndjson', name: 'rows', commands: ['SET k:{id} {v}'], workers: 2, chunkSize: '16KiB' })
      expectCounts(parallel, FAULT_ROWS)
      expect(parallel.cluster.moved).toBeGreaterThan(0)
      await cluster.settled()
      expect(await cluster.masterPorts()).not.toContain(other)
      await expectOnOwners(cluster, expectedSets(FAULT_ROWS))
      await cluster.flushall()
    })

    it('a master killed: its replica takes over, the commands for it are re-routed, nothing lost', async () => {
      const [, master] = await cluster.masterPorts()
      const kill = async () => {
        // Replication is asynchronous: a master killed at a random moment takes with it the
        // writes it acknowledged and its replica had not yet received, and "nothing lost" would
        // fail for no fault of the loader. So the master stops executing writes first (the
        // loader's commands then wait there, unanswered, and must be re-routed after the kill),
        // and is killed once its replica has everything the master wrote.
        const replica = await cluster.replicaOf(master)
        const node = cluster.nodeAt(master)
        const c = node.client()
        const r = replica.client()
        try {
          await c.call('CLIENT', 'PAUSE', '60000', 'WRITE')
          const written = Number(/^master_repl_offset:(\d+)/m.exec(await c.info('replication'))[1])
          await waitFor('the replica to have all the master wrote', async () =>
            Number(/^slave_repl_offset:(\d+)/m.exec(await r.info('replication'))[1]) >= written)
          await waitFor('loader commands held by the pause', async () =>
            String(await c.call('CLIENT', 'LIST')).split('\n').some(l => / name=pipeload-data /.test(l) && (/ flags=\w*b/.test(l) || / qbuf=[1-9]/.test(l))))
        } finally {
          c.disconnect()
          r.disconnect()
        }
        node.alive = false
        await node.kill('SIGKILL')
      }
      const summary = await load({ url: cluster.url, input: rowsDuring(FAULT_ROWS, 40_000, kill), commands: ['SET k:{id} {v}'] })
      expectCounts(summary, FAULT_ROWS)
      expect(summary.cluster.rerouted).toBeGreaterThan(0) // what was meant for the dead master went to its replica
      await cluster.settled()
      expect(await cluster.masterPorts()).not.toContain(master)
      await expectOnOwners(cluster, expectedSets(FAULT_ROWS))
    })
  })
})
