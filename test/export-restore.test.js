'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// Issue 36's round trip: a keyspace written by the test's own ioredis client (every type,
// TTLs, keys and values that are not UTF-8, empty strings and an empty key name, big keys of
// every type over many pages among thousands of small keys), `pipeload export`, then
// `pipeload import --restore` into another server, and the two keyspaces read back key by key
// with the test's own commands (TYPE, PTTL, GET/HGETALL/LRANGE/SMEMBERS/ZRANGE WITHSCORES/
// XRANGE, as Buffers; never pipeload's code): the source is what was written, the target is
// the source, and each restored TTL is > 0 and ≤ the one in the dump.
// Redis 7.0 → Redis 7.0 (NDJSON, gzip, a restore repeated over a changed target), Redis 8.0
// → Valkey 9.1, a 3-master cluster → another one, and a cluster → one server.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { startRedis } = require('./helpers/redis-server')
const { serverKinds } = require('./helpers/servers')
const { startCluster } = require('./helpers/cluster')
const { runCli } = require('./helpers/run-cli')
const { scaledMs } = require('./helpers/wait')
const { writeDataset, readExport, hex, BAD } = require('./helpers/export-data')

// Small batches and pages: 3,600 small keys are 70 batches or more, and each big key of
// 2,500 elements (5,000 for a hash's fields and values) is 13 pages or more.
const SMALL = ['--batch-size', '50', '--page-size', '200', '--scan-count', '100', '-w', '3']
const LIMIT = scaledMs(180_000)

/**
 * The keyspace of export-data.js (600 small keys of each type, 5 big keys of 2,500 elements)
 * and a few more edges, all under `prefix` but the empty key. Returns the expected keyspace
 * in the shape of read() below.
 */
async function writeKeyspace (client, prefix) {
  const want = canonicalWant(await writeDataset(client, prefix, { big: 2500, small: 600 }))
  const k = s => Buffer.concat([Buffer.from(prefix), Buffer.from(s)])
  const bigString = Buffer.alloc(300_000)
  for (let i = 0; i < bigString.length; i++) bigString[i] = (i * 131 + 7) & 0xff // every byte, not UTF-8
  const extras = [
    [Buffer.alloc(0), 'string', () => client.set(Buffer.alloc(0), 'the empty key'), Buffer.from('the empty key').toString('hex')],
    [k('edge:bigstring'), 'string', key => client.set(key, bigString), bigString.toString('hex')],
    [k('edge:emptyfield'), 'hash', key => client.hset(key, '', '', BAD, ''), [['', ''], [hex(BAD), '']].sort(byFirst)],
    [k('edge:emptyset'), 'set', key => client.sadd(key, '', BAD), ['', hex(BAD)].sort()],
    [k('edge:emptyzset'), 'zset', key => client.zadd(key, '0', '', '-2.25', BAD), [['', '0'], [hex(BAD), '-2.25']].sort(byFirst)],
    [k('edge:emptylist'), 'list', key => client.rpush(key, '', '', BAD), ['', '', hex(BAD)]],
    [k('edge:emptyentry'), 'stream', key => client.xadd(key, '7-0', '', ''), [['7-0', ['', '']]]]
  ]
  for (const [key, type, write, value] of extras) {
    await write(key)
    want.set(hex(key), { type, ttl: false, value })
  }
  return want
}

const byFirst = (a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0

/** export-data.js's keyspace in read()'s shape (ttl: whether the key has one). */
function canonicalWant (want) {
  const out = new Map()
  for (const [k, e] of want) {
    let value = e.value
    if (value instanceof Map) value = [...value.entries()].sort(byFirst)
    if (e.type === 'stream') value = value.map(x => [x.id, x.fields])
    out.set(k, { type: e.type, ttl: e.ttl === true, value })
  }
  return out
}

/**
 * Every key of a server (a plain ioredis client), read with the test's own commands:
 * Map hex(key) → { type, pttl, value } with value: string hex; hash [[field, value]] sorted;
 * list [hex]; set sorted [hex]; zset [[member, score]] sorted by member; stream [[id, [hex…]]].
 */
async function read (client, into = new Map()) {
  const keys = new Map()
  let cursor = '0'
  do {
    const [next, found] = await client.scanBuffer(cursor, 'COUNT', 1000)
    cursor = next.toString()
    for (const key of found) keys.set(hex(key), key)
  } while (cursor !== '0')
  const all = [...keys.values()]
  for (let i = 0; i < all.length; i += 500) {
    const chunk = all.slice(i, i + 500)
    const p = client.pipeline()
    for (const key of chunk) p.callBuffer('TYPE', key).pttl(key)
    const meta = await p.exec()
    const q = client.pipeline()
    const types = chunk.map((key, j) => meta[2 * j][1].toString())
    chunk.forEach((key, j) => q.callBuffer(...READ[types[j]](key)))
    const values = await q.exec()
    chunk.forEach((key, j) => {
      const [err, reply] = values[j]
      if (err) throw err
      if (into.has(hex(key))) throw new Error(`key ${hex(key)} on two masters`)
      into.set(hex(key), { type: types[j], pttl: meta[2 * j + 1][1], value: CANONICAL[types[j]](reply) })
    })
  }
  return into
}

const READ = {
  string: key => ['GET', key],
  hash: key => ['HGETALL', key],
  list: key => ['LRANGE', key, '0', '-1'],
  set: key => ['SMEMBERS', key],
  zset: key => ['ZRANGE', key, '0', '-1', 'WITHSCORES'],
  stream: key => ['XRANGE', key, '-', '+']
}

/** [a, b, a, b, …] → [[hex(a), second(b)], …] */
const flatPairs = (flat, second) => {
  const out = []
  for (let i = 0; i < flat.length; i += 2) out.push([hex(flat[i]), second(flat[i + 1])])
  return out
}

const CANONICAL = {
  string: v => hex(v),
  hash: v => flatPairs(v, hex).sort(byFirst),
  list: v => v.map(hex),
  set: v => v.map(hex).sort(),
  zset: v => flatPairs(v, String).sort(byFirst),
  stream: v => v.map(([id, fields]) => [id.toString(), (fields || []).map(hex)])
}

/** Every master of a cluster, read as read() reads one server. */
async function readCluster (cluster) {
  const into = new Map()
  for (const port of await cluster.masterPorts()) {
    const c = cluster.nodeAt(port).client()
    try { await read(c, into) } finally { c.disconnect() }
  }
  return into
}

const withoutTtl = m => new Map([...m].map(([k, e]) => [k, { type: e.type, value: e.value }]))

/** The source is what was written (and has a TTL where one was set). */
function expectWritten (source, want) {
  expect(source.size).toBe(want.size)
  expect(withoutTtl(source)).toEqual(withoutTtl(want))
  for (const [k, e] of want) expect(source.get(k).pttl > 0, k).toBe(e.ttl)
}

/**
 * The target holds the source's keys, types and values exactly, and each key's TTL as the
 * dump (the text of the exported file) wrote it: none where none, else 0 < PTTL ≤ the dump's.
 */
function expectRestored (target, source, dumpText) {
  const dump = readExport(dumpText).keys
  expect(target.size).toBe(source.size)
  expect(withoutTtl(target)).toEqual(withoutTtl(source))
  let ttls = 0
  for (const [k, e] of source) {
    const written = dump.get(k).ttl
    const restored = target.get(k).pttl
    if (e.pttl === -1) {
      expect([written, restored], k).toEqual([null, -1])
    } else {
      ttls++
      expect(written, k).toBeGreaterThan(0)
      expect(written, k).toBeLessThanOrEqual(e.pttl) // the source's PTTL was read before the export
      expect(restored > 0 && restored <= written, `${k}: PTTL ${restored}, dump ttl ${written}`).toBe(true)
    }
  }
  expect(ttls).toBeGreaterThan(700)
}

async function exportTo (file, url, more = []) {
  const r = await runCli(['export', file, '-u', url, ...SMALL, '-q', ...more])
  expect(r.stderr.toString()).toBe('')
  expect(r.code).toBe(0)
  const bytes = fs.readFileSync(file)
  return file.endsWith('.gz') ? zlib.gunzipSync(bytes).toString('utf8') : bytes.toString('utf8')
}

async function restore (file, url) {
  const r = await runCli(['import', file, '--restore', '-u', url, '--batch-size', '100', '-q'])
  expect(r.stderr.toString()).toBe('')
  expect(r.code).toBe(0)
}

function tmpdir (name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `pipeload-export-restore-${name}-`))
}

const server = kind => startRedis({ server: kind })

describe('export then restore: Redis 7.0 → Redis 7.0', () => {
  let from, to, source, target, tmp, want, sourceKeys
  beforeAll(async () => {
    [from, to] = await Promise.all([server(), server()])
    source = from.client()
    target = to.client()
    tmp = tmpdir('r7')
    want = await writeKeyspace(source, 'r:')
    sourceKeys = await read(source)
    expectWritten(sourceKeys, want)
  }, LIMIT)
  afterAll(async () => {
    await Promise.all([from?.stop(), to?.stop()])
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('NDJSON: every key, type, value and TTL', async () => {
    await target.flushall()
    const file = path.join(tmp, 'dump.ndjson')
    const text = await exportTo(file, from.url)
    await restore(file, to.url)
    expectRestored(await read(target), sourceKeys, text)
  }, LIMIT)

  it('a gzip dump (.ndjson.gz)', async () => {
    await target.flushall()
    const file = path.join(tmp, 'dump.ndjson.gz')
    const text = await exportTo(file, from.url)
    expect(fs.readFileSync(file).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]))
    await restore(file, to.url)
    expectRestored(await read(target), sourceKeys, text)
  }, LIMIT)

  it('restored again over a changed target (other types and elements on the same names): the same keyspace', async () => {
    await target.flushall()
    const file = path.join(tmp, 'again.ndjson')
    const text = await exportTo(file, from.url)
    await restore(file, to.url)
    await changeTarget(target, sourceKeys)
    expect(withoutTtl(await read(target))).not.toEqual(withoutTtl(sourceKeys))
    await restore(file, to.url)
    expectRestored(await read(target), sourceKeys, text)
  }, LIMIT)
})

/**
 * Over the restored keys: every 40th key and every big one becomes another type, every 40th
 * (from the 20th) keeps its type with more elements, and the TTLs of every 40th (from the
 * 10th) are changed (dropped or added).
 */
async function changeTarget (client, keys) {
  const OTHER = {
    string: key => client.hset(key, 'was', 'a string'),
    hash: key => client.rpush(key, 'was', 'a hash'),
    list: key => client.sadd(key, 'was', 'a list'),
    set: key => client.zadd(key, '1', 'was a set'),
    zset: key => client.xadd(key, '1-1', 'was', 'a zset'),
    stream: key => client.set(key, 'was a stream')
  }
  const MORE = {
    string: key => client.append(key, 'more'),
    hash: key => client.hset(key, 'more', 'field'),
    list: key => client.rpush(key, 'more'),
    set: key => client.sadd(key, 'more'),
    zset: key => client.zadd(key, '99', 'more'),
    stream: key => client.xadd(key, '*', 'more', 'entry')
  }
  let i = 0
  for (const [k, e] of keys) {
    const key = Buffer.from(k, 'hex')
    const big = key.toString('latin1').includes(':big:') || key.toString().includes('edge:')
    if (big || i % 40 === 0) {
      await client.del(key)
      await OTHER[e.type](key)
    } else if (i % 40 === 20) {
      await MORE[e.type](key)
    } else if (i % 40 === 10) {
      if (e.pttl === -1) await client.pexpire(key, 5_000_000)
      else await client.persist(key)
    }
    i++
  }
}

// Across servers: Redis 8.0's keyspace into Valkey 9.1 (the way across now that their RDB
// files part), and Valkey 8.0's into Redis 7.0.
for (const [fromId, toId, prefix] of [['redis8', 'valkey9', 'r8:'], ['valkey8', 'redis7', 'v8:']]) {
  const [fromKind, toKind] = serverKinds([fromId, toId])
  const missing = fromKind.missing || toKind.missing
  describe.skipIf(Boolean(missing))(`export then restore: ${fromKind.label} → ${toKind.label}${missing ? ` [skipped: ${missing}]` : ''}`, () => {
    let from, to, tmp
    beforeAll(async () => {
      [from, to] = await Promise.all([server(fromKind), server(toKind)])
      tmp = tmpdir(fromId + toId)
    }, LIMIT)
    afterAll(async () => {
      await Promise.all([from?.stop(), to?.stop()])
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
    })

    it('every key, type, value and TTL', async () => {
      const source = from.client()
      const want = await writeKeyspace(source, prefix)
      const sourceKeys = await read(source)
      expectWritten(sourceKeys, want)
      const file = path.join(tmp, 'dump.ndjson')
      const text = await exportTo(file, from.url)
      await restore(file, to.url)
      expectRestored(await read(to.client()), sourceKeys, text)
    }, LIMIT)
  })
}

describe('export then restore: a 3-master cluster', () => {
  let from, sourceKeys, tmp
  beforeAll(async () => {
    from = await startCluster({ masters: 3 })
    tmp = tmpdir('cluster')
    const want = await writeKeyspace(from.client(), 'c:')
    sourceKeys = await readCluster(from)
    expectWritten(sourceKeys, want)
  }, LIMIT)
  afterAll(async () => {
    await from?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('into another 3-master cluster', async () => {
    const to = await startCluster({ masters: 3 })
    try {
      const file = path.join(tmp, 'to-cluster.ndjson')
      const text = await exportTo(file, from.nodes[1].url)
      await restore(file, to.nodes[2].url)
      expectRestored(await readCluster(to), sourceKeys, text)
    } finally {
      await to.stop()
    }
  }, LIMIT)

  it('into one server', async () => {
    const to = await server()
    try {
      const file = path.join(tmp, 'to-one.ndjson')
      const text = await exportTo(file, from.url)
      await restore(file, to.url)
      expectRestored(await read(to.client()), sourceKeys, text)
    } finally {
      await to.stop()
    }
  }, LIMIT)
})
