'use strict'
/* global describe, it, expect, beforeEach, beforeAll, afterAll */

// Issue 35 item 1: several connections to one server (--connections n). Each connection
// owns the hash slots s with s % n = i, so every command on one key goes through one
// connection and keeps its order. Checked against a real server with RPUSH of each record's
// id onto lists of a small set of keys (many ids per key, records of two commands on two
// keys), read back with LRANGE and compared with the ids in file order as this test reads
// them from the input itself (not through pipeload's reader). Also: the parse workers' path,
// --shard shares, a connection killed mid-load (CLIENT KILL of one of them), SIGKILL then
// --resume, a command with keys in several slots, error replies on two connections for one
// record, and --connections auto.

const fs = require('node:fs')
const path = require('node:path')
const keySlot = require('cluster-key-slot')
const { useServer, startRedis, describeEachServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { scaledMs } = require('./helpers/wait')
const { killData, paced, dataConnectionsClosed, killedAfterCheckpoint } = require('./helpers/data-connections')
const { load } = require('..')

const ROWS = 30_000
const KEYS = 23 // a small set of keys: each gets well over a thousand ids
const OTHER = 17

let srv, redis, tmp
useServer('pipeload-connections-', s => { ({ srv, redis, tmp } = s) })
beforeEach(async () => { await redis.flushall() })

/** A CSV of `rows` records id,k,j: k and j pseudo-random picks of a small key set. */
function writeInput (name, rows = ROWS) {
  const lines = ['id,k,j']
  let x = 12345
  for (let id = 1; id <= rows; id++) {
    x = (x * 1103515245 + 12345) % 2147483648
    lines.push(`${id},${x % KEYS},${(x >> 8) % OTHER}`)
  }
  const file = path.join(tmp, name)
  fs.writeFileSync(file, lines.join('\n') + '\n')
  return file
}

/** What the lists must hold, from the file's text: { 'a:<k>': [ids in file order], 'b:<j>': […] }. */
function expectedLists (file) {
  const want = new Map()
  const push = (key, id) => { if (!want.has(key)) want.set(key, []); want.get(key).push(id) }
  for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
    if (!line) continue
    const [id, k, j] = line.split(',')
    push(`a:${k}`, id)
    push(`b:${j}`, id)
  }
  return want
}

const COMMANDS = ['-c', 'RPUSH a:{k} {id}', '-c', 'RPUSH b:{j} {id}']

/** Every list exactly as the file orders its ids; `dedupe`: a re-sent command's second run dropped (its first place kept). */
async function expectLists (want, { dedupe = false, client = redis } = {}) {
  let extra = 0
  for (const [key, ids] of want) {
    let got = await client.lrange(key, 0, -1)
    if (dedupe) {
      const seen = new Set()
      const firsts = got.filter(id => !seen.has(id) && seen.add(id))
      extra += got.length - firsts.length
      got = firsts
    }
    expect(got, key).toEqual(ids)
  }
  expect(await client.dbsize()).toBe(want.size)
  return extra
}

/** Load the file with connections 1, 2, 3 and 4 into `server` ({ url, client }): each key its ids in file order. */
async function differential (server, file, workers) {
  const want = expectedLists(file)
  for (const n of [1, 2, 3, 4]) {
    await server.client.flushall()
    const res = await runCli(['import', file, '-u', server.url, ...COMMANDS, '--connections', String(n), '-b', '300', '--workers', String(workers), '--chunk-size', '64KiB', '--json'])
    expect(res.stderr, `connections ${n}`).toBe('')
    const s = JSON.parse(res.stdout)
    expect(s).toMatchObject({ records: ROWS, loaded: ROWS, commands: 2 * ROWS, acknowledged: 2 * ROWS, errors: 0, workers })
    expect(s.connections).toEqual(n === 1 ? undefined : { count: n, auto: null })
    expect(s.batches).toBeGreaterThanOrEqual(2 * ROWS / 300) // many batches, each split over the connections
    await expectLists(want, { client: server.client })
  }
}

describe('--connections n into one server: per-key order, as the input orders it', () => {
  for (const workers of [0, 2]) {
    it(`--workers ${workers}: connections 1, 2, 3 and 4 give each key its ids in file order`, async () => {
      await differential({ url: srv.url, client: redis }, writeInput(`in-w${workers}.csv`), workers)
    }, scaledMs(120_000))
  }

  it('--shard i/3 shares, loaded one after another with connections 1, 2, 3 and 4 (shard 1 through 2 parse workers): each key in file order', async () => {
    const file = writeInput('in-shards.csv')
    const want = expectedLists(file)
    for (const n of [1, 2, 3, 4]) {
      await redis.flushall()
      let loaded = 0
      for (let i = 0; i < 3; i++) {
        const workers = i === 1 ? ['--workers', '2', '--chunk-size', '16KiB'] : ['--workers', '0']
        const res = await runCli(['import', file, '-u', srv.url, ...COMMANDS, '--connections', String(n), '-b', '200', '--shard', `${i}/3`, ...workers, '--json'])
        expect(res.stderr, `connections ${n}, shard ${i}/3`).toBe('')
        const s = JSON.parse(res.stdout)
        expect(s.batches, `connections ${n}, shard ${i}/3`).toBeGreaterThanOrEqual(2 * 9000 / 200) // a share spans many batches
        expect(s.workers).toBe(i === 1 ? 2 : 0)
        loaded += s.loaded
      }
      expect(loaded).toBe(ROWS)
      await expectLists(want)
    }
  }, scaledMs(120_000))

  it('a command with keys in several slots (LMOVE) keeps its order with the commands on each of its keys', async () => {
    // Each record RPUSHes its id onto a:<k> and b:<j>; every 150th also LMOVEs the last of
    // a:<k> to the head of b:<j> (two keys, two slots). What the lists hold is computed here
    // by running the same commands in input order on arrays.
    const rows = 12_000
    const records = () => Array.from({ length: rows }, (_, i) => ({ id: i + 1, k: (i + 1) % 29, j: ((i + 1) * 7) % 31 }))
    const map = r => [['RPUSH', `a:${r.k}`, String(r.id)], ['RPUSH', `b:${r.j}`, String(r.id)], ...(r.id % 150 === 0 ? [['LMOVE', `a:${r.k}`, `b:${r.j}`, 'RIGHT', 'LEFT']] : [])]
    const model = new Map()
    const list = key => { if (!model.has(key)) model.set(key, []); return model.get(key) }
    for (const r of records()) {
      list(`a:${r.k}`).push(String(r.id))
      list(`b:${r.j}`).push(String(r.id))
      if (r.id % 150 === 0) list(`b:${r.j}`).unshift(list(`a:${r.k}`).pop())
    }
    // Most LMOVEs have their keys on two different connections of 3 (cluster-key-slot says).
    expect(records().filter(r => r.id % 150 === 0 && keySlot(`a:${r.k}`) % 3 !== keySlot(`b:${r.j}`) % 3).length).toBeGreaterThan(30)
    const s = await load({ url: srv.url, input: records().values(), map, connections: 3, batchSize: 100 })
    expect(s).toMatchObject({ records: rows, loaded: rows, errors: 0 })
    for (const [key, ids] of model) expect(await redis.lrange(key, 0, -1), key).toEqual(ids)
  }, scaledMs(60_000))
})

/** One of `n` data connections killed mid-load into `server` ({ url, client, srv }): complete, each key in file order, re-sent commands counted. */
async function killOne (server, file, n) {
  const want = expectedLists(file)
  const rows = want.size && fs.readFileSync(file, 'utf8').trim().split('\n').length - 1
  const admin = server.srv.client()
  let killed = null
  const { Readable } = require('node:stream')
  const reconnects = []
  // The input in 8 KiB pieces, so that the kill comes mid-load.
  const text = fs.readFileSync(file)
  const pieces = Array.from({ length: Math.ceil(text.length / 8192) }, (_, i) => text.subarray(i * 8192, (i + 1) * 8192))
  const input = Readable.from(paced(pieces, async () => { killed = await killData(admin, n) }))
  let s
  try {
    s = await load({ url: server.url, input, format: 'csv', commands: ['RPUSH a:{k} {id}', 'RPUSH b:{j} {id}'], connections: n, batchSize: 200, onReconnect: e => reconnects.push(e) })
  } finally {
    admin.disconnect()
  }
  expect(killed).toMatch(/^\d+$/)
  expect(s).toMatchObject({ records: rows, loaded: rows, errors: 0, reconnects: 1, commands: 2 * rows, acknowledged: 2 * rows })
  expect(reconnects).toHaveLength(1)
  // The killed connection had commands the server had not run: they were sent again, counted.
  expect(s.resentCommands).toBeGreaterThan(0)
  expect(s.resentCommands).toBe(reconnects[0].resentCommands)
  // To one server the whole batch is re-sent, so a command that ran before the pause may run
  // again ("Re-sent commands" in docs/resume.md): at most as many as counted, never lost, in order.
  const twice = await expectLists(want, { dedupe: true, client: server.client })
  expect(twice).toBeLessThanOrEqual(s.resentCommands)
}

describe('--connections n: one connection dies while the others go on', () => {
  it('CLIENT KILL of one of 3 data connections mid-load, commands in flight on it: the load completes, nothing lost, what was re-sent is counted', async () => {
    await redis.flushall()
    await killOne({ url: srv.url, client: redis, srv }, writeInput('in-kill.csv', 60_000), 3)
  }, scaledMs(60_000))
})

// The same against every server kind found (Redis 7.0 and 8.0, Valkey 8.0 and 9.1).
describeEachServer('--connections n', kind => {
  const server = {}
  beforeAll(async () => {
    server.srv = await startRedis({ server: kind })
    server.url = server.srv.url
    server.client = server.srv.client()
  })
  afterAll(async () => { server.client?.disconnect(); await server.srv?.stop() })

  it('connections 1 to 4: each key its ids in file order; one connection killed mid-load: nothing lost', async () => {
    await differential(server, writeInput(`in-${kind.id}.csv`), 0)
    await server.client.flushall()
    await killOne(server, writeInput(`in-kill-${kind.id}.csv`, 60_000), 4)
  }, scaledMs(120_000))
})

describe('--connections n: SIGKILL, then --resume', () => {
  it('4 connections: resumed, each list is what ran before the kill, then the ids after the checkpoint in file order', async () => {
    const rows = 150_000
    const file = writeInput('in-resume.csv', rows)
    const want = expectedLists(file)
    const cp = path.join(tmp, 'resume.cp')
    const args = ['import', file, '-u', srv.url, ...COMMANDS, '-c', 'SET r:{id} {k}', '--connections', '4', '-b', '500', '--checkpoint', cp]
    const killedRun = await killedAfterCheckpoint(args, cp, 40_000)
    expect(killedRun.signal).toBe('SIGKILL')
    const state = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(state.records).toBeGreaterThan(40_000)
    expect(state.records).toBeLessThan(rows)
    const prefix = state.records
    // What ran before the kill, read once the server has let go of every data connection (so
    // nothing it had read runs later): per key, a prefix of the file's ids holding every id up
    // to the checkpoint's count; ids past it are commands that ran after its last write.
    await dataConnectionsClosed([redis])
    const before = new Map()
    let ranAfter = 0
    for (const [key, ids] of want) {
      const got = await redis.lrange(key, 0, -1)
      expect(got, key).toEqual(ids.slice(0, got.length))
      expect(got.length, key).toBeGreaterThanOrEqual(ids.filter(id => Number(id) <= prefix).length)
      ranAfter += got.filter(id => Number(id) > prefix).length
      before.set(key, got)
    }
    expect(await redis.exists(...Array.from({ length: prefix }, (_, i) => `r:${i + 1}`))).toBe(prefix)
    const res = await runCli([...args, '--resume', '--json'])
    expect(res.code).toBe(0)
    const s = JSON.parse(res.stdout)
    expect(s).toMatchObject({ resumedFrom: prefix, records: rows, loaded: rows, errors: 0, uncleanStop: true, possibleDuplicates: true })
    expect(s.batches).toBeGreaterThan((rows - prefix) / 200) // the rest: batches of at most 500 commands (166 records), each split over the 4
    // RPUSH may run twice after an unclean stop (docs/resume.md "Re-sent commands"): exactly
    // the commands that ran after the checkpoint's last write, and nothing else.
    let twice = 0
    for (const [key, ids] of want) {
      const got = await redis.lrange(key, 0, -1)
      expect(got, key).toEqual([...before.get(key), ...ids.filter(id => Number(id) > prefix)])
      twice += got.length - ids.length
    }
    expect(twice).toBe(ranAfter)
    expect(await redis.dbsize()).toBe(want.size + rows)
    // SET is idempotent: every record's value exact, whatever ran twice.
    const kOf = new Map()
    for (const [key, ids] of want) if (key.startsWith('a:')) for (const id of ids) kOf.set(Number(id), key.slice(2))
    for (let lo = 1; lo <= rows; lo += 10_000) {
      const ids = Array.from({ length: Math.min(10_000, rows - lo + 1) }, (_, i) => lo + i)
      expect(await redis.mget(ids.map(id => `r:${id}`))).toEqual(ids.map(id => kOf.get(id)))
    }
  }, scaledMs(120_000))
})

describe('--connections n: failures and rejects', () => {
  it('a record whose two commands fail on two connections fails once; rejects in input order', async () => {
    // Keys of distinct slots mod 4 (cluster-key-slot, not pipeload, says which).
    const ids = []
    for (let id = 1; ids.length < 3; id++) if (keySlot(`w1:${id}`) % 4 !== keySlot(`w2:${id}`) % 4) ids.push(id)
    const [both, one, other] = ids
    await redis.set(`w1:${both}`, 'x')
    await redis.set(`w2:${both}`, 'x')
    await redis.set(`w1:${one}`, 'x')
    await redis.set(`w2:${other}`, 'x')
    const rows = Math.max(other, 3000)
    const lines = ['id']
    for (let id = 1; id <= rows; id++) lines.push(String(id))
    const file = path.join(tmp, 'fail.csv')
    fs.writeFileSync(file, lines.join('\n') + '\n')
    const rejects = path.join(tmp, 'fail.rejects')
    const res = await runCli(['import', file, '-u', srv.url, '-c', 'RPUSH w1:{id} x', '-c', 'RPUSH w2:{id} x', '--connections', '4', '-b', '100', '--on-error', 'skip', '--rejects', rejects, '--json'])
    const s = JSON.parse(res.stdout)
    expect(s).toMatchObject({ records: rows, loaded: rows - 3, errors: 3, errorReplies: 4 })
    const lineOf = id => id + 1 // the header is line 1
    expect(fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l).line)).toEqual([both, one, other].sort((a, b) => a - b).map(lineOf))
  }, scaledMs(60_000))
})

describe('--connections auto', () => {
  it('1 where the server has no I/O threads, min(io-threads, 4) where it has; CONFIG refused: 1, and the summary says what was assumed', async () => {
    const file = writeInput('in-auto.csv', 2000)
    const run = async (url, extra = []) => runCli(['import', file, '-u', url, ...COMMANDS, '--connections', 'auto', ...extra])
    const plain = await run(srv.url)
    expect(plain.stderr).toContain('connections: 1 per server (auto: io-threads 1)')
    await redis.call('ACL', 'SETUSER', 'noconfig', 'on', '>pw-noconfig', '~*', '+@all', '-config')
    const refused = await run(srv.url.replace('redis://', 'redis://noconfig:pw-noconfig@'))
    expect(refused.code).toBe(0)
    expect(refused.stderr).toMatch(/connections: 1 per server \(auto: CONFIG GET io-threads was refused \(NOPERM[^)]*\): assumed no I\/O threads\)/)
    const threaded = await startRedis({ args: ['--io-threads', '3'] })
    try {
      const res = await runCli(['import', file, '-u', threaded.url, ...COMMANDS, '--connections', 'auto', '--json'])
      expect(JSON.parse(res.stdout).connections).toEqual({ count: 3, auto: 'io-threads 3' })
      expect(JSON.parse(res.stdout).loaded).toBe(2000)
    } finally {
      await threaded.stop()
    }
  }, scaledMs(60_000))

  it('bad values: exit 2 with what is allowed', async () => {
    for (const bad of ['0', '65', 'many', '1.5']) {
      const res = await runCli(['import', path.join(tmp, 'none.csv'), '-u', srv.url, '-k', 'x:{id}', '--connections', bad])
      expect(res.code).toBe(2)
      expect(res.stderr).toContain(`--connections must be a number of connections from 1 to 64, or "auto", got "${bad}"`)
    }
  })

  it('with Sentinel: a number above 1 is refused, auto is 1', async () => {
    const { connectionCount } = require('../lib/send/io-threads')
    const control = { options: { sentinels: [{ host: '127.0.0.1', port: 26379 }] } }
    await expect(connectionCount(control, { connections: 2 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: "connections 2 cannot be used with Sentinel (a failover is checked against one connection's replication offset): use connections 1" })
    expect(await connectionCount(control, { connections: 'auto' })).toEqual({ count: 1, auto: 'with Sentinel one connection' })
  })
})
