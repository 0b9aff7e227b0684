'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// Cluster mode where things go wrong: error replies from masters (file:line attribution,
// which the cluster sink does with its own record lookup, lib/send/cluster.js Parent.recordOf),
// the abort policy's stop position, ASK redirections from a slot migrated by hand, a dead
// seed node, a cluster with requirepass/masterauth on every node, a cluster over TLS, and
// every master gone (the --retry-timeout give-up). Keys are placed with cluster-key-slot (ioredis' own
// implementation, not pipeload's) and read back from the master that owns them.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const net = require('node:net')
const { spawn } = require('node:child_process')
const Redis = require('ioredis')
const keySlot = require('cluster-key-slot')
const { startCluster, waitFor } = require('./helpers/cluster')
const { makeCerts } = require('./helpers/certs')
const { runCli, BIN, BASE_ENV } = require('./helpers/run-cli')
const { load } = require('..')
const { scaledMs } = require('./helpers/wait')

const N = 3000
let cluster
let dir
let csv

// The password and TLS clusters below start beside this one: a cluster start is mostly
// waiting (a node takes writes 2 s after it started), so the three waits overlap. Each is
// awaited (its error thrown) by its describe's beforeAll, and stopped in its afterAll.
const PW = 'Cl-' + crypto.randomBytes(8).toString('hex')
let securing
let tlsStarting
let certs
const started = p => { p.catch(() => {}); return p }

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-cluster-errors-'))
  certs = makeCerts(path.join(dir, 'pki'))
  securing = started(startCluster({ masters: 3, password: PW }))
  tlsStarting = started(startCluster({ masters: 3, tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca, clientCert: certs.clientCert, clientKey: certs.clientKey } }))
  cluster = await startCluster({ masters: 3 })
  csv = path.join(dir, 'rows.csv')
  fs.writeFileSync(csv, 'id,v\n' + Array.from({ length: N }, (_, i) => `${i},v${i}`).join('\n') + '\n')
}, scaledMs(60_000))

afterAll(async () => {
  await cluster?.stop()
  // Stopped by their describes' afterAll once awaited; here, if those never ran.
  for (const p of [securing, tlsStarting]) await (await p?.catch(() => null))?.stop()
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

/** slot -> port of its master, from CLUSTER SLOTS of a live node. */
async function owners (c = cluster) {
  const o = new Array(16384)
  for (const [s, e, port] of await c.slots()) for (let i = s; i <= e; i++) o[i] = port
  return o
}

/**
 * Run `fn(client, keys)` on the master owning each group of keys (a pipeline there) and
 * collect its results: key -> [err, value].
 */
async function onOwners (keys, fn, c = cluster) {
  const o = await owners(c)
  const byPort = new Map()
  for (const k of keys) {
    const port = o[keySlot(k)]
    if (!byPort.has(port)) byPort.set(port, [])
    byPort.get(port).push(k)
  }
  const out = new Map()
  for (const [port, ks] of byPort) {
    const client = c.nodeAt(port).client()
    try {
      const p = client.pipeline()
      for (const k of ks) fn(p, k)
      const replies = await p.exec()
      ks.forEach((k, i) => out.set(k, replies[i]))
    } finally {
      client.disconnect()
    }
  }
  return out
}

const hget = keys => onOwners(keys, (p, k) => p.hget(k, 'v'))

describe('error replies in cluster mode are attributed to their file:line', () => {
  // Records whose commands will fail: 'h' (the first command's key is a list), 'g' (the
  // second's), 'both'. The first and the last record of the file are among them.
  const failing = new Map([[0, 'h'], [N - 1, 'g']])
  for (let j = 0; j < 18; j++) failing.set(11 + 163 * j, ['h', 'g', 'both'][j % 3])
  const lineOf = id => id + 2

  async function seed (prefix) {
    const lists = []
    for (const [id, kind] of failing) {
      if (kind !== 'g') lists.push(`${prefix}h:${id}`)
      if (kind !== 'h') lists.push(`${prefix}g:${id}`)
    }
    await onOwners(lists, (p, k) => p.rpush(k, 'a list'))
    // The failing commands are spread over every master.
    const o = await owners()
    expect(new Set(lists.map(k => o[keySlot(k)])).size).toBe(3)
    return lists
  }

  it('on-error skip: every failure with its exact file:line (in the summary, on stderr, in --rejects), a record with two failing commands counted once', async () => {
    const prefix = 'skip:'
    await seed(prefix)
    const rejects = path.join(dir, 'skip.rejects')
    const r = await runCli(['import', csv, '-u', cluster.url, '-c', `HSET ${prefix}h:{id} v {v}`, '-c', `HSET ${prefix}g:{id} v {v}`,
      '--on-error', 'skip', '--rejects', rejects, '--batch-size', '100', '--json'])
    expect(r.code).toBe(1)
    const s = JSON.parse(r.stdout)
    const both = [...failing.values()].filter(k => k === 'both').length
    expect(s).toMatchObject({ records: N, loaded: N - failing.size, errors: failing.size, errorReplies: failing.size + both, commands: 2 * N, acknowledged: 2 * N })
    expect(s.cluster).toMatchObject({ masters: 3, moved: 0, asked: 0 })
    const expected = [...failing.keys()].sort((a, b) => a - b).map(id => [lineOf(id), 'WRONGTYPE'])
    expect(s.failures.map(f => [f.line, f.code]).sort((a, b) => a[0] - b[0])).toEqual(expected)
    for (const f of s.failures) expect(f).toMatchObject({ file: csv, source: 'reply', message: expect.stringMatching(/^WRONGTYPE /) })
    for (const [line] of expected) expect(r.stderr).toContain(`${csv}:${line}: WRONGTYPE`)
    // The rejects file: input order, each line's raw text is its record.
    const rj = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(rj.map(x => [x.line, x.code])).toEqual(expected)
    for (const x of rj) expect(x.raw).toBe(`${x.line - 2},v${x.line - 2}`)
    // The other command of a record with one failing command ran; every other record is whole.
    const ids = Array.from({ length: N }, (_, i) => i)
    const h = await hget(ids.map(i => `${prefix}h:${i}`))
    const g = await hget(ids.map(i => `${prefix}g:${i}`))
    for (const i of ids) {
      const kind = failing.get(i)
      const hv = h.get(`${prefix}h:${i}`)
      const gv = g.get(`${prefix}g:${i}`)
      if (kind === 'h' || kind === 'both') expect(String(hv[0])).toMatch(/WRONGTYPE/)
      else if (hv[1] !== `v${i}`) expect.fail(`${prefix}h:${i} is ${hv}`)
      if (kind === 'g' || kind === 'both') expect(String(gv[0])).toMatch(/WRONGTYPE/)
      else if (gv[1] !== `v${i}`) expect.fail(`${prefix}g:${i} is ${gv}`)
    }
    await cluster.flushall()
  })

  it('on-error abort: the failure names its file:line, nothing from the stop position on was sent, everything before it was', async () => {
    const prefix = 'abort:'
    const F = 1234
    await onOwners([`${prefix}h:${F}`], (p, k) => p.rpush(k, 'a list'))
    const err = await load({ url: cluster.url, input: csv, commands: [`HSET ${prefix}h:{id} v {v}`, `HSET ${prefix}g:{id} v {v}`], batchSize: 100 }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_RECORD_FAILED')
    expect(err.exitCode).toBe(1)
    expect(err).toMatchObject({ file: csv, line: lineOf(F) })
    expect(err.failure).toMatchObject({ file: csv, line: lineOf(F), code: 'WRONGTYPE', source: 'reply' })
    expect(err.message).toMatch(new RegExp(`^${csv.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${lineOf(F)}: WRONGTYPE `))
    const at = err.summary.stoppedAt
    expect(at.file).toBe(csv)
    expect(at.line).toBeGreaterThan(lineOf(F))
    expect(at.line).toBeLessThanOrEqual(N + 1)
    const firstNotSent = at.line - 2 // the id on that line
    expect(err.summary).toMatchObject({ records: firstNotSent, loaded: firstNotSent - 1, errors: 1, errorReplies: 1 })
    expect(at.offset).toBe(fs.readFileSync(csv, 'utf8').indexOf(`\n${firstNotSent},`) + 1)
    const ids = Array.from({ length: N }, (_, i) => i)
    // Every command before the stop position ran (the failing record's other one too), none after.
    for (const cmd of ['h', 'g']) {
      const got = await hget(ids.map(i => `${prefix}${cmd}:${i}`))
      for (const i of ids) {
        if (cmd === 'h' && i === F) continue // the list
        const v = got.get(`${prefix}${cmd}:${i}`)[1]
        if (i < firstNotSent ? v !== `v${i}` : v !== null) expect.fail(`${prefix}${cmd}:${i} is ${v} (stopped at id ${firstNotSent})`)
      }
    }
    await cluster.flushall()
  })
})

describe('ASK: a slot being migrated by hand (CLUSTER SETSLOT MIGRATING / IMPORTING)', () => {
  it('keys the source still has are written there, the others go to the target with ASKING; summary counts each ASK', async () => {
    const slot = keySlot('t')
    const o = await owners()
    const source = o[slot]
    const target = (await cluster.masterPorts()).find(p => p !== source)
    const src = cluster.nodeAt(source).client()
    const dst = cluster.nodeAt(target).client()
    try {
      const srcId = await src.cluster('MYID')
      const dstId = await dst.cluster('MYID')
      const key = id => `ask:{t}:${id}`
      const OLD = 10
      const ROWS = 100
      for (let i = 0; i < OLD; i++) await src.set(key(i), 'old')
      await dst.cluster('SETSLOT', slot, 'IMPORTING', srcId)
      await src.cluster('SETSLOT', slot, 'MIGRATING', dstId)
      try {
        const rows = Array.from({ length: ROWS }, (_, i) => ({ id: i, v: `v${i}` }))
        const summary = await load({ url: cluster.url, input: rows, commands: ['SET ask:{{t}}:{id} {v}', 'SET other:{id} {v}'] })
        expect(summary).toMatchObject({ records: ROWS, loaded: ROWS, errors: 0, errorReplies: 0, commands: 2 * ROWS, acknowledged: 2 * ROWS })
        expect(summary.cluster).toMatchObject({ asked: ROWS - OLD, moved: 0 })
        for (let i = 0; i < ROWS; i++) {
          if (i < OLD) {
            expect(await src.get(key(i))).toBe(`v${i}`)
          } else {
            await expect(src.get(key(i))).rejects.toThrow(/^ASK /) // not on the source
            await dst.call('ASKING')
            expect(await dst.get(key(i))).toBe(`v${i}`)
          }
        }
        const other = await onOwners(rows.map(r => `other:${r.id}`), (p, k) => p.get(k))
        for (const r of rows) expect(other.get(`other:${r.id}`)).toEqual([null, `v${r.id}`])
      } finally {
        await src.cluster('SETSLOT', slot, 'STABLE')
        await dst.cluster('SETSLOT', slot, 'STABLE')
        await cluster.flushall()
        await dst.flushall() // the keys it imported for a slot it does not own
      }
    } finally {
      src.disconnect()
      dst.disconnect()
    }
  })
})

describe('seed nodes', () => {
  // Seeds that are down: ports we hold, where every connection is closed at once (a port
  // freed for the purpose could be taken by another test's server meanwhile).
  let dead = []
  beforeAll(async () => {
    dead = await Promise.all([0, 1, 2].map(() => new Promise(resolve => {
      const s = net.createServer(sock => sock.destroy())
      s.listen(0, '127.0.0.1', () => resolve(s))
    })))
  })
  afterAll(() => { for (const s of dead) s.close() })

  it('an ioredis Cluster whose first seeds are down, passed while still connecting: the load goes through the seed that is up', async () => {
    // A Cluster that is still connecting sends CLUSTER SLOTS to any seed at random: three of
    // four are down here, and the load is made three times, so a loader that does not wait
    // for the client to be ready fails here (each time with probability 3/4).
    const [live] = await cluster.masterPorts()
    const seeds = [...dead.map(s => ({ host: '127.0.0.1', port: s.address().port })), { host: '127.0.0.1', port: live }]
    const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, v: `v${i}` }))
    for (let k = 0; k < 3; k++) {
      const redis = new Redis.Cluster(seeds, { redisOptions: { protocol: 2 } })
      redis.on('error', () => {})
      try {
        expect(redis.status).not.toBe('ready')
        const summary = await load({ redis, input: rows, command: `SET seed${k}:{id} {v}` })
        expect(summary).toMatchObject({ records: 2000, loaded: 2000, errors: 0, target: 'cluster via ioredis Cluster (3 masters)' })
        const got = await onOwners(rows.map(r => `seed${k}:${r.id}`), (p, key) => p.get(key))
        for (const r of rows) expect(got.get(`seed${k}:${r.id}`)).toEqual([null, `v${r.id}`])
      } finally {
        redis.disconnect()
      }
    }
    await cluster.flushall()
  })

  for (const lazyConnect of [false, true]) {
    it(`an ioredis Cluster${lazyConnect ? ' (lazyConnect)' : ''} with no seed up: PIPELOAD_CONNECTION_FAILED (exit 4), not a bare ioredis error`, async () => {
      const redis = new Redis.Cluster(dead.map(s => ({ host: '127.0.0.1', port: s.address().port })), { lazyConnect, redisOptions: { protocol: 2 } })
      redis.on('error', () => {})
      try {
        const err = await load({ redis, input: [{ id: 1 }], command: 'SET never:{id} 1', connectTimeout: 1000 }).catch(e => e)
        expect(err.code).toBe('PIPELOAD_CONNECTION_FAILED')
        expect(err.exitCode).toBe(4)
        expect(err.message).toMatch(/ioredis Cluster given as redis/)
      } finally {
        redis.disconnect()
      }
    })
  }

  it('an ioredis Cluster made with lazyConnect, not connected yet: pipeload connects it and loads', async () => {
    const [live] = await cluster.masterPorts()
    const redis = new Redis.Cluster([{ host: '127.0.0.1', port: live }], { lazyConnect: true, redisOptions: { protocol: 2 } })
    redis.on('error', () => {})
    try {
      expect(redis.status).toBe('wait')
      const rows = Array.from({ length: 500 }, (_, i) => ({ id: i, v: `v${i}` }))
      expect(await load({ redis, input: rows, command: 'SET lazy:{id} {v}' })).toMatchObject({ records: 500, loaded: 500 })
      const got = await onOwners(rows.map(r => `lazy:${r.id}`), (p, k) => p.get(k))
      for (const r of rows) expect(got.get(`lazy:${r.id}`)).toEqual([null, `v${r.id}`])
    } finally {
      redis.disconnect()
      await cluster.flushall()
    }
  })
})

describe('a cluster with requirepass and masterauth on every node', () => {
  let secure
  beforeAll(async () => { secure = await securing }, 60_000)
  afterAll(async () => { await secure?.stop() })

  it('the CLI with the password from REDISCLI_AUTH loads every record on its master; the password is never printed', async () => {
    const r = await runCli(['import', csv, '-u', secure.url, '-c', 'SET sec:{id} {v}', '--json'], { env: { REDISCLI_AUTH: PW } })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const s = JSON.parse(r.stdout)
    expect(s).toMatchObject({ records: N, loaded: N, errors: 0 })
    expect(s.cluster.masters).toBe(3)
    expect(r.stdout).not.toContain(PW)
    const ids = Array.from({ length: N }, (_, i) => i)
    const got = await onOwners(ids.map(i => `sec:${i}`), (p, k) => p.get(k), secure)
    for (const i of ids) if (got.get(`sec:${i}`)[1] !== `v${i}`) expect.fail(`sec:${i} is ${got.get(`sec:${i}`)}`)
  })

  it('a wrong password: exit 4, authentication failed, nothing written', async () => {
    const r = await runCli(['import', csv, '-u', secure.url, '-c', 'SET nope:{id} {v}'], { env: { REDISCLI_AUTH: PW + 'x' } })
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/^pipeload: authentication to Redis at 127\.0\.0\.1:\d+ failed: /)
    expect(r.stderr).not.toContain(PW)
    const got = await onOwners(['nope:0', 'nope:1', 'nope:2'], (p, k) => p.exists(k), secure)
    for (const [, [, n]] of got) expect(n).toBe(0)
  })
})

describe('a cluster over TLS (TLS ports only; cluster bus and replication over TLS)', () => {
  let tlsCluster
  beforeAll(async () => { tlsCluster = await tlsStarting }, 60_000)
  afterAll(async () => { await tlsCluster?.stop() })

  it('rediss:// with --tls-ca: every record on its master, over TLS to every master', async () => {
    expect(tlsCluster.url).toMatch(/^rediss:/)
    const r = await runCli(['import', csv, '-u', tlsCluster.url, '--tls-ca', certs.ca, '-c', 'SET tls:{id} {v}', '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const s = JSON.parse(r.stdout)
    expect(s).toMatchObject({ records: N, loaded: N, errors: 0 })
    expect(s.cluster.masters).toBe(3)
    const ids = Array.from({ length: N }, (_, i) => i)
    const got = await onOwners(ids.map(i => `tls:${i}`), (p, k) => p.get(k), tlsCluster)
    for (const i of ids) if (got.get(`tls:${i}`)[1] !== `v${i}`) expect.fail(`tls:${i} is ${got.get(`tls:${i}`)}`)
  })

  it('without the CA: exit 4, the certificate is not trusted, nothing written', async () => {
    const r = await runCli(['import', csv, '-u', tlsCluster.url, '-c', 'SET untrusted:{id} {v}'])
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/^pipeload: cannot connect to Redis at 127\.0\.0\.1:\d+: the server's TLS certificate is not trusted/)
    const got = await onOwners(['untrusted:0', 'untrusted:1', 'untrusted:2'], (p, k) => p.exists(k), tlsCluster)
    for (const [, [, n]] of got) expect(n).toBe(0)
  })
})

describe('every master gone mid-load (the last test: it kills the cluster)', () => {
  it('--retry-timeout runs out: exit 4, one message naming a node, the summary, no stack', async () => {
    await cluster.flushall() // whatever an earlier test left must not count below
    const child = spawn(process.execPath, [BIN, 'import', '-', '--format', 'csv', '-u', cluster.url, '-c', 'SET gone:{id} {v}',
      '--batch-size', '100', '--retry-timeout', '1s'], { env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', d => { stderr += d })
    child.stdin.on('error', () => {})
    const done = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal })))
    child.stdin.write('id,v\n' + Array.from({ length: 2000 }, (_, i) => `${i},v${i}`).join('\n') + '\n')
    const firstKeys = Array.from({ length: 1900 }, (_, i) => `gone:${i}`)
    const written = async () => [...(await onOwners(firstKeys, (p, k) => p.exists(k))).values()].every(([, n]) => n === 1)
    try {
      await waitFor('the first rows to be written', written)
    } catch (err) {
      child.kill('SIGKILL')
      throw err
    }
    for (const node of cluster.nodes) { node.alive = false; await node.kill('SIGKILL') }
    child.stdin.end(Array.from({ length: 2000 }, (_, i) => `${2000 + i},v${2000 + i}`).join('\n') + '\n')
    const { code } = await done
    expect(code).toBe(4)
    const first = stderr.split('\n')[0]
    expect(first).toMatch(/^pipeload: .*127\.0\.0\.1:\d+/)
    expect(first).toMatch(/ 1s\b/) // --retry-timeout 1s, as given
    expect(stderr).toMatch(/pipeload: stopped after [\d,]+ records/)
    expect(stderr).not.toMatch(/\n\s+at |internal error/)
  }, scaledMs(30_000))
})
