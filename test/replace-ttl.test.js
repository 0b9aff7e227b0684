'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Issue 13 items 12 and 13 against real servers: --replace deletes each record's first key
// before its commands (a re-import leaves no stale fields), and --ttl-keys all expires every
// key a record writes (index sets too), by the key positions @ioredis/commands gives.

const Redis = require('ioredis')
const { useServer } = require('./helpers/redis-server')
const { startCluster } = require('./helpers/cluster')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')

let srv
let redis
let write
useServer('pipeload-replace-', s => { ({ srv, redis, write } = s) })

const CSV = 'id,name,country\n1,Ann,DE\n2,Bob,FR\n3,Cem,DE\n'
const NDJSON = '{"id":1,"name":"Ann","country":"DE"}\n{"id":2,"name":"Bob","country":"FR"}\n{"id":3,"name":"Cem","country":"DE"}\n'

describe('--replace', () => {
  for (const [format, text, worker] of [['csv', CSV, '--workers=0'], ['csv', CSV, '--workers=1'], ['ndjson', NDJSON, '--workers=0']]) {
    it(`a re-import leaves no stale fields (${format}, ${worker})`, async () => {
      const p = `rp:${format}:${worker}:`
      const file = write(`r.${format}`, text)
      await redis.hset(p + '1', 'name', 'Old', 'stale', 'x')
      await redis.hset(p + '2', 'stale', 'y')
      const r = await runCli(['import', file, '-u', srv.url, '--key', `${p}{id}`, '--replace', worker, '--json'])
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout).commands).toBe(6) // DEL + HSET per record
      expect(await redis.hgetall(p + '1')).toEqual({ id: '1', name: 'Ann', country: 'DE' })
      expect(await redis.hgetall(p + '2')).toEqual({ id: '2', name: 'Bob', country: 'FR' })
    })
  }

  it('without --replace the stale field stays (what --replace is for)', async () => {
    const file = write('keep.csv', CSV)
    await redis.hset('keep:1', 'stale', 'x')
    const r = await runCli(['import', file, '-u', srv.url, '--key', 'keep:{id}'])
    expect(r.code).toBe(0)
    expect(await redis.hget('keep:1', 'stale')).toBe('x')
  })

  it('the library: replace with templates and with map()', async () => {
    await redis.hset('lr:1', 'stale', 'x')
    await load({ url: srv.url, input: [{ id: 1, v: 'a' }], command: 'HSET lr:{id} v {v}', replace: true })
    expect(await redis.hgetall('lr:1')).toEqual({ v: 'a' })
    await redis.sadd('lm:1', 'old')
    const s = await load({ url: srv.url, input: [{ id: 1, tags: ['a', 'b'] }], map: r => [['SADD', `lm:${r.id}`, ...r.tags]], replace: true })
    expect(s.commands).toBe(2)
    expect((await redis.smembers('lm:1')).sort()).toEqual(['a', 'b'])
  })

  it('--dry-run text shows the DEL before the record\'s commands', async () => {
    const file = write('dry.csv', CSV)
    const r = await runCli(['import', file, '--key', 'd:{id}', '--replace', '--dry-run', 'text'])
    expect(r.stdout.split('\n').slice(0, 2)).toEqual(['DEL d:1', 'HSET d:1 id 1 name Ann country DE'])
  })

  it('refuses a replace that is not a boolean', async () => {
    await expect(load({ url: srv.url, input: [], command: 'SET a b', replace: 'yes' })).rejects.toThrow(/replace must be true or false/)
  })
})

describe('--ttl-keys', () => {
  for (const [format, text, worker] of [['csv', CSV, '--workers=0'], ['csv', CSV, '--workers=1'], ['ndjson', NDJSON, '--workers=0']]) {
    it(`all: every key a record writes expires, index sets too (${format}, ${worker})`, async () => {
      const p = `ta:${format}:${worker}:`
      const file = write(`t.${format}`, text)
      const r = await runCli(['import', file, '-u', srv.url, '-c', `HSET ${p}u:{id} name {name}`, '-c', `SADD ${p}by:{country} {id}`,
        '-c', `MSET ${p}x:{id} 1 ${p}y:{id} 2`, '-c', `SADD ${p}all {id}`, '--ttl', '1h', '--ttl-keys', 'all', worker, '--json'])
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      for (const k of ['u:1', 'by:DE', 'by:FR', 'x:3', 'y:3', 'all']) {
        const ttl = await redis.ttl(p + k)
        expect(ttl, k).toBeGreaterThan(3500)
        expect(ttl, k).toBeLessThanOrEqual(3600)
      }
      // 4 commands + 6 EXPIREs (u, by, x, y, all; `all` once per record) per record
      expect(JSON.parse(r.stdout).commands).toBe(3 * (4 + 5))
    })
  }

  it('first (the default): only the first command\'s key expires', async () => {
    const file = write('f.csv', CSV)
    const r = await runCli(['import', file, '-u', srv.url, '-c', 'HSET tf:u:{id} name {name}', '-c', 'SADD tf:by:{country} {id}', '--ttl', '90s'])
    expect(r.code).toBe(0)
    expect(await redis.ttl('tf:u:1')).toBeGreaterThan(0)
    expect(await redis.ttl('tf:by:DE')).toBe(-1)
  })

  it('map() with ttlKeys all: the keys of every command it returns', async () => {
    await load({
      url: srv.url,
      input: [{ id: 7, tags: ['a'] }],
      map: r => [['HSET', `tm:${r.id}`, 'n', '1'], ['SADD', `tm:tags:${r.tags[0]}`, r.id], ['EVAL', "redis.call('SET', KEYS[1], 'v')", '1', `tm:e:${r.id}`]],
      ttl: '1h',
      ttlKeys: 'all'
    })
    for (const k of ['tm:7', 'tm:tags:a', 'tm:e:7']) expect(await redis.ttl(k), k).toBeGreaterThan(3500)
  })

  it('refuses ttlKeys without ttl, and a value other than first or all', async () => {
    await expect(load({ url: srv.url, input: [], command: 'SET a b', ttlKeys: 'all' })).rejects.toThrow(/ttlKeys must be used with ttl/)
    const r = await runCli(['import', write('x.csv', CSV), '-c', 'SET a {id}', '--ttl', '1', '--ttl-keys', 'some', '--dry-run', 'text'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/first, all/)
  })

  it('help lists --replace and --ttl-keys', async () => {
    const text = (await runCli(['import', '--help'])).stdout.replace(/\s+/g, ' ')
    expect(text).toMatch(/--ttl-keys <which> which keys --ttl expires: first = .* all = every key the record writes/)
    expect(text).toMatch(/--replace DEL each record's first key before its commands/)
  })
})

describe('--replace and --ttl-keys all in a 3-master cluster', () => {
  let cluster
  beforeAll(async () => { cluster = await startCluster({ masters: 3 }) })
  afterAll(async () => { await cluster?.stop() })

  it('the DEL and the EXPIREs go to the node of each key', async () => {
    const rows = ['id,country']
    for (let i = 1; i <= 200; i++) rows.push(`${i},${['DE', 'FR', 'IT'][i % 3]}`)
    const file = write('cl.csv', rows.join('\n') + '\n')
    const c = new Redis.Cluster([{ host: '127.0.0.1', port: cluster.nodes[0].port }])
    try {
      for (let i = 1; i <= 200; i++) await c.hset(`cu:${i}`, 'stale', 'x')
      const r = await runCli(['import', file, '-u', cluster.url, '--cluster', '-c', 'HSET cu:{id} country {country}', '-c', 'SADD cby:{country} {id}',
        '--replace', '--ttl', '1d', '--ttl-keys', 'all', '--json'])
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      for (const i of [1, 77, 200]) expect(await c.hgetall(`cu:${i}`)).toEqual({ country: ['DE', 'FR', 'IT'][i % 3] })
      for (const k of ['cu:1', 'cu:200', 'cby:DE', 'cby:FR', 'cby:IT']) expect(await c.ttl(k), k).toBeGreaterThan(86000)
      expect(await c.scard('cby:FR')).toBe(67)
    } finally {
      c.disconnect()
    }
  })
})
