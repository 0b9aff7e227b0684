'use strict'

// import --restore against real servers: dumps written here by hand in docs/export.md's NDJSON
// format (no export code), the keyspace then read back with the test's own ioredis client and
// compared key by key with what the dump says: every type, TTLs, bytes via base64, empty
// strings, big keys in many parts over many batches, a repeated restore, kill -9 then
// --resume, a 3-master cluster, Valkey 9.1.

const fs = require('node:fs')
const path = require('node:path')
const { useServer, startRedis, serverKinds } = require('./helpers/redis-server')
const { describeEachServer } = require('./helpers/servers')
const { startCluster } = require('./helpers/cluster')
const { spawnKillable } = require('./helpers/run-cli')
const { scaledMs } = require('./helpers/wait')

const TTL = 3_600_000
const b64 = bytes => ({ base64: Buffer.from(bytes).toString('base64') })

/**
 * The keyspace a dump describes, written by hand: key (Buffer) → { type, value, ttl }, values
 * as the test's reader gives them (below), and the dump's lines, big keys cut into parts of
 * `page` elements.
 */
function dataset (prefix, page = 100) {
  const keys = new Map()
  const lines = []
  const k = s => Buffer.concat([Buffer.from(prefix), Buffer.isBuffer(s) ? s : Buffer.from(s)])
  const dumpKey = key => { try { return new TextDecoder('utf-8', { fatal: true }).decode(key) } catch { return b64(key) } }
  const str = v => Buffer.isBuffer(v) ? b64(v) : v
  const add = (name, type, ttl, value, parts) => {
    const key = k(name)
    keys.set(key.toString('hex'), { key, type, ttl, value })
    parts.forEach((p, i) => lines.push({ key: dumpKey(key), type, ttl, ...(i ? { part: i + 1 } : {}), value: p }))
  }
  const pages = (arr, n = page) => { const out = []; for (let i = 0; i < arr.length; i += n) out.push(arr.slice(i, i + n)); return out.length ? out : [[]] }

  add('str', 'string', null, Buffer.from('hello'), ['hello'])
  add('str:empty', 'string', null, Buffer.alloc(0), [''])
  add('str:ttl', 'string', TTL, Buffer.from('soon'), ['soon'])
  add('str:utf8:é', 'string', null, Buffer.from('ü€😀'), ['ü€😀'])
  add(Buffer.from([0xff, 0x00, 0x0d, 0x0a]), 'string', null, Buffer.from([0x80, 0x00, 0xfe]), [b64([0x80, 0x00, 0xfe])])
  add('hash', 'hash', TTL, [['name', 'Ada'], ['', 'empty name'], ['empty', '']].map(p => p.map(Buffer.from)), [{ name: 'Ada', '': 'empty name', empty: '' }])
  add('hash:bin', 'hash', null, [[Buffer.from([0xc3]), Buffer.from([0xff, 0xfe])], [Buffer.from('a'), Buffer.from('b')]], [[[b64([0xc3]), b64([0xff, 0xfe])], ['a', 'b']]])
  const bigHash = Array.from({ length: 1050 }, (_, i) => [Buffer.from(`f${i}`), Buffer.from(`v${i}`)])
  add('hash:big', 'hash', TTL, bigHash, pages(bigHash).map(p => Object.fromEntries(p.map(([f, v]) => [f.toString(), v.toString()]))))
  const bigList = Array.from({ length: 2345 }, (_, i) => Buffer.from(i % 7 === 0 ? '' : `e${i % 50}`)) // repeats and empty strings
  add('list:big', 'list', TTL, bigList, pages(bigList).map(p => p.map(v => v.toString())))
  add('list:bin', 'list', null, [Buffer.from([0xff]), Buffer.from('x')], [[b64([0xff]), 'x']])
  const bigSet = Array.from({ length: 1234 }, (_, i) => Buffer.from(`m${i}`))
  add('set:big', 'set', null, bigSet, pages(bigSet).map(p => p.map(v => v.toString())))
  const zset = [['neg', '-inf'], ['a', '-1.5'], ['zero', '0'], ['b', '1.5'], ['big', '1e+20'], ['pos', 'inf']]
  add('zset', 'zset', null, zset.map(([m, s]) => [Buffer.from(m), s]), [zset])
  const bigZset = Array.from({ length: 1111 }, (_, i) => [Buffer.from(`z${i}`), String(i / 4)])
  add('zset:big', 'zset', TTL, bigZset, pages(bigZset).map(p => p.map(([m, s]) => [m.toString(), s])))
  const entries = Array.from({ length: 1500 }, (_, i) => ({ id: `${1_700_000_000_000 + Math.floor(i / 3)}-${i % 3}`, fields: i % 5 === 0 ? [['k', `${i}`], ['k', '']] : { kind: `e${i}`, n: String(i) } }))
  const entryOf = e => [e.id, (Array.isArray(e.fields) ? e.fields : Object.entries(e.fields)).flat().map(Buffer.from)]
  add('stream:big', 'stream', TTL, entries.map(entryOf), pages(entries))
  add('stream:empty', 'stream', null, [], [[]])
  add('stream:bin', 'stream', null, [['5-1', [Buffer.from([0xfe]), Buffer.from([0x00, 0xff])]]], [[{ id: '5-1', fields: [[b64([0xfe]), b64([0x00, 0xff])]] }]])
  // Lines after the big keys, so that a kill within their parts comes well before the end.
  const tail = Array.from({ length: 3000 }, (_, i) => Buffer.from(`t${i}`))
  add('set:tail', 'set', null, tail, pages(tail).map(p => p.map(v => v.toString())))
  // A key whose ttl is over by the time its line is restored: the PEXPIREAT removes it, as the source would have.
  lines.push({ key: dumpKey(k('gone')), type: 'hash', ttl: 0, value: { a: '1' } })
  return { keys, lines, text: lines.map(l => JSON.stringify(l)).join('\n') + '\n' }
}

/** A key as the test's own client reads it: { type, value, pttl }. */
async function readKey (c, key) {
  const type = await c.type(key)
  const pttl = await c.pttl(key)
  let value
  if (type === 'string') value = await c.getBuffer(key)
  else if (type === 'hash') value = pairs(await c.callBuffer('HGETALL', key)) // hgetallBuffer makes the field names strings
  else if (type === 'list') value = await c.lrangeBuffer(key, 0, -1)
  else if (type === 'set') value = await c.smembersBuffer(key)
  else if (type === 'zset') value = pairs(await c.zrangeBuffer(key, 0, -1, 'WITHSCORES')).map(([m, s]) => [m, s.toString()])
  else if (type === 'stream') value = (await c.xrangeBuffer(key, '-', '+')).map(([id, f]) => [id.toString(), f])
  return { type, value, pttl }
}

function pairs (x) {
  if (!Array.isArray(x)) return Object.entries(x).map(([f, v]) => [Buffer.from(f), v]) // ioredis hgetallBuffer: an object
  const out = []
  for (let i = 0; i < x.length; i += 2) out.push([x[i], x[i + 1]])
  return out
}

/** Values in an order-free, printable form for sets and hashes; others as they are. */
function canonical (type, value) {
  const hex = v => Buffer.isBuffer(v) ? v.toString('hex') : Array.isArray(v) ? v.map(hex) : v
  const out = hex(value)
  if (type === 'set' || type === 'hash') return out.map(x => JSON.stringify(x)).sort()
  if (type === 'zset') return out.map(([m, s]) => [m, Number(s)]) // scores as numbers: "1e+20" is printed "1e+20" by either
  return out
}

/** Compare the server's keys (prefix) with the dataset: every key, no other, values, TTLs. */
async function expectKeyspace (c, data, prefix, started, expiresFrom = null) {
  for (const { key, type, ttl, value } of data.keys.values()) {
    const read = Date.now()
    const got = await readKey(c, key)
    expect(got.type, key.toString()).toBe(type)
    expect(canonical(type, got.value), key.toString()).toEqual(canonical(type, value))
    if (ttl === null) expect(got.pttl, key.toString()).toBe(-1)
    else {
      // The restore's start + ttl: at most the ttl, and not before the test started + ttl.
      expect(got.pttl, key.toString()).toBeLessThanOrEqual(ttl)
      expect(got.pttl, key.toString()).toBeGreaterThanOrEqual(ttl - (Date.now() - started))
      // After a resume: the first run's start + ttl for every key, the resumed run's too.
      if (expiresFrom !== null) expect(got.pttl, key.toString()).toBeLessThanOrEqual(expiresFrom + ttl - read)
    }
  }
  expect(await c.exists(Buffer.from(prefix + 'gone'))).toBe(0)
  expect(await countKeys(c, prefix)).toBe(data.keys.size)
}

async function countKeys (c, prefix) {
  const nodes = c.nodes ? c.nodes('master') : [c]
  let n = 0
  for (const node of nodes) n += (await node.keys(prefix + '*')).length
  return n
}

/** `pipeload import …args`, spawned; `preload`: the kill hook's variables (helpers/run-cli.js spawnKillable). */
const start = (args, preload = null) => spawnKillable(['import', ...args], preload)

/**
 * What a kill -9 may leave: a checkpoint whose last write counts fewer lines than the server
 * has (those acknowledged after it). Made here for sure: a finished restore's checkpoint
 * rewound to 300 lines into the parts of `name` (parts of one element); the resume writes
 * the rest of that key's parts again.
 */
async function rewoundResume (url, client, dir, prefix, name, more = []) {
  const data = dataset(prefix, 1)
  const file = path.join(dir, `again-${prefix.slice(0, -1)}.ndjson`)
  fs.writeFileSync(file, data.text)
  const cp = path.join(dir, `again-${prefix.slice(0, -1)}.checkpoint`)
  const args = [file, '--restore', '-u', url, '--checkpoint', cp, '--batch-size', '10']
  const started = Date.now()
  const first = await start(args)
  expect(first.code, first.err).toBe(0)
  const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
  const back = data.lines.findIndex(l => l.key === prefix + name) + 300
  expect(data.lines[back].part).toBe(301)
  const { next, ...rest } = saved
  fs.writeFileSync(cp, JSON.stringify({ ...rest, records: back, loaded: back, line: back, commands: 0, complete: false, clean: false }))
  const r = await start([...args, ...more, '--resume', '--json'])
  expect(r.code, r.err).toBe(0)
  expect(JSON.parse(r.out)).toMatchObject({ errors: 0, uncleanStop: true, possibleDuplicates: false })
  await expectKeyspace(client, data, prefix, started, saved.restore.startedAt)
}

describe('import --restore into one server', () => {
  let srv, redis, dir
  useServer('pipeload-restore-', s => { srv = s.srv; redis = s.redis; dir = s.tmp })

  it('every type, TTLs, bytes, empty strings, big keys in parts over many batches; a second restore leaves the same keyspace', async () => {
    const data = dataset('r1:')
    const file = path.join(dir, 'r1.ndjson')
    fs.writeFileSync(file, data.text)
    // Keys there before, of other types and with other elements: replaced.
    await redis.set('r1:list:big', 'old')
    await redis.rpush('r1:str', 'old')
    await redis.xadd('r1:stream:big', '9999999999999-0', 'old', '1')
    const started = Date.now()
    const r = await start([file, '--restore', '-u', srv.url, '--batch-size', '20', '--json'])
    expect(r.code, r.err).toBe(0)
    expect(JSON.parse(r.out)).toMatchObject({ records: data.lines.length, errors: 0, possibleDuplicates: false })
    await expectKeyspace(redis, data, 'r1:', started)
    const again = await start([file, '--restore', '-u', srv.url, '--batch-size', '20', '--workers', '2'])
    expect(again.code, again.err).toBe(0)
    await expectKeyspace(redis, data, 'r1:', started)
  }, scaledMs(60_000))

  // Parts of one element: 10,000 part lines. Killed within list:big's parts (lines 1,060 to
  // 3,400), then within stream:big's (5,750 to 7,250): the resume starts at a part of that key.
  // One line a batch, one batch in flight: at 10 a batch a fast machine restored all 10,252
  // lines in 1.6 s, within ~3 checkpoint writes, none of them past line 6,200 before the end,
  // so the kill never came. At 1 a batch (~1,650 lines/s here, with the hook's slowing) the
  // run spans a dozen writes, each some 800 lines after the one before.
  it.each([['list', 2000], ['stream', 6200]])('kill -9 within the %s parts, then --resume: the exact keyspace', async (name, after) => {
    const prefix = `r2${name}:`
    const data = dataset(prefix, 1)
    const file = path.join(dir, `${name}.ndjson`)
    fs.writeFileSync(file, data.text)
    const cp = path.join(dir, `${name}.checkpoint`)
    const args = [file, '--restore', '-u', srv.url, '--checkpoint', cp, '--batch-size', '1', '--window', '1']
    const started = Date.now()
    const first = await start(args, { KILL_CHECKPOINT: cp, KILL_AFTER_RECORDS: String(after) })
    expect(first.signal, first.err).toBe('SIGKILL')
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved).toMatchObject({ complete: false, clean: false, restore: { startedAt: expect.any(Number) } })
    const r = await start([...args, '--resume'])
    expect(r.code, r.err).toBe(0)
    expect(r.err).not.toMatch(/warning/)
    await expectKeyspace(redis, data, prefix, started, saved.restore.startedAt)
  }, scaledMs(120_000))

  it.each(['list:big', 'stream:big'])('a resume that writes the parts of %s again: not pushed twice, entries already there counted as written', async name => {
    // The list's resume in a parse worker (--workers 2: one, as a restore reads in order).
    await rewoundResume(srv.url, redis, dir, `r3${name.split(':')[0]}:`, name, name === 'list:big' ? ['--workers', '2'] : [])
  }, scaledMs(60_000))

  it('load({ restore: true }): a file, and records already parsed', async () => {
    const { load } = require('..')
    const data = dataset('lib:')
    const file = path.join(dir, 'lib.ndjson')
    fs.writeFileSync(file, data.text)
    const started = Date.now()
    const summary = await load({ input: file, restore: true, url: srv.url, batchSize: 30 })
    expect(summary).toMatchObject({ records: data.lines.length, errors: 0, notIdempotent: [], possibleDuplicates: false })
    await expectKeyspace(redis, data, 'lib:', started)
    const records = dataset('rec:')
    await load({ input: records.lines, restore: true, url: srv.url })
    await expectKeyspace(redis, records, 'rec:', started)
    await expect(load({ input: file, restore: true, key: 'x:{id}', url: srv.url })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: expect.stringContaining('restore must be used without key') })
  }, scaledMs(60_000))

  it('a line that is not a dump line fails with file:line and why; --on-error skip goes on', async () => {
    const file = path.join(dir, 'bad.ndjson')
    fs.writeFileSync(file, [
      { key: 'bad:a', type: 'string', ttl: null, value: 'x' },
      { key: 'bad:b', type: 'json', ttl: null, value: 'x' },
      { key: 'bad:c', type: 'list', ttl: null, part: 2, value: ['x'] },
      { key: 'bad:d', type: 'string', ttl: null, value: 'y' }
    ].map(l => JSON.stringify(l)).join('\n') + '\n')
    const r = await start([file, '--restore', '-u', srv.url])
    expect(r.code).toBe(1)
    expect(r.err).toContain(`${file}:2: not a dump line (docs/export.md): "type" is "json", not one of string, hash, list, set, zset, stream`)
    const rejects = path.join(dir, 'bad.rejects')
    const skip = await start([file, '--restore', '-u', srv.url, '--on-error', 'skip', '--json', '--rejects', rejects])
    expect(skip.code).toBe(1)
    expect(JSON.parse(skip.out)).toMatchObject({ records: 4, errors: 2 })
    expect(fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l)).map(r => [r.line, r.code, JSON.parse(r.raw).key])).toEqual([[2, 'PIPELOAD_RECORD_INVALID', 'bad:b'], [3, 'PIPELOAD_RECORD_INVALID', 'bad:c']])
    expect(skip.err).toContain(':3: not a dump line (docs/export.md): "part": 2 does not follow a line of the same key')
    expect(await redis.get('bad:d')).toBe('y')
  }, scaledMs(30_000))

  it('refuses templates, other formats, and stdin without --format ndjson (exit 2)', async () => {
    const file = path.join(dir, 'r1.ndjson')
    const withKey = await start([file, '--restore', '--key', 'x:{id}', '-u', srv.url])
    expect(withKey.code).toBe(2)
    expect(withKey.err).toContain('--restore writes each key as its dump line says (key, type, value, ttl): it takes no --key')
    const csv = path.join(dir, 'a.csv')
    fs.writeFileSync(csv, 'a\n1\n')
    const r = await start([csv, '--restore', '-u', srv.url])
    expect(r.code).toBe(2)
    expect(r.err).toContain('restore reads the NDJSON dumps of pipeload export')
    const stdin = await start(['-', '--restore', '-u', srv.url])
    expect(stdin.code).toBe(2)
    expect(stdin.err).toContain('the format of <stdin> must be given: --format')
    const asCsv = await start(['-', '--restore', '--format', 'csv', '-u', srv.url])
    expect(asCsv.code).toBe(2)
    expect(asCsv.err).toContain('<stdin>: its format is csv')
  }, scaledMs(30_000))
})

describe('import --restore into a 3-master cluster', () => {
  let cluster, client, dir
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 })
    client = cluster.client()
    dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'pipeload-restore-cluster-'))
  }, scaledMs(120_000))
  afterAll(async () => {
    if (cluster) await cluster.stop()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('every key on its master, exact; twice gives the same', async () => {
    const data = dataset('c1:')
    const file = path.join(dir, 'c.ndjson')
    fs.writeFileSync(file, data.text)
    const started = Date.now()
    for (let i = 0; i < 2; i++) {
      const r = await start([file, '--restore', '-u', cluster.url, '--batch-size', '20'])
      expect(r.code, r.err).toBe(0)
      await expectKeyspace(client, data, 'c1:', started)
    }
  }, scaledMs(120_000))

  it('a resume that writes stream parts again', async () => {
    await rewoundResume(cluster.url, client, dir, 'c2:', 'stream:big')
  }, scaledMs(120_000))
})

describeEachServer('import --restore', kind => {
  let srv, redis, dir
  beforeAll(async () => {
    srv = await startRedis({ server: kind })
    redis = srv.client()
    dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'pipeload-restore-kind-'))
  })
  afterAll(async () => {
    if (srv) await srv.stop()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('the whole dataset, exact', async () => {
    const data = dataset('v9:')
    const file = path.join(dir, 'v.ndjson')
    fs.writeFileSync(file, data.text)
    const started = Date.now()
    const r = await start([file, '--restore', '-u', srv.url, '--batch-size', '50'])
    expect(r.code, r.err).toBe(0)
    await expectKeyspace(redis, data, 'v9:', started)
  }, scaledMs(60_000))

  it('a resume that writes stream parts again', async () => {
    await rewoundResume(srv.url, redis, dir, 'v9r:', 'stream:big')
  }, scaledMs(60_000))
}, serverKinds(['valkey9']))
