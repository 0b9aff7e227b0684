'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// The export's reader of one master (lib/export/master.js) against a real server, with keys
// deleted or retyped by the test between SCAN and their read, or between two pages; and the
// NDJSON writer's lines (lib/export/ndjson.js) against lines written out by hand.

const { startRedis } = require('./helpers/redis-server')
const { connectData } = require('../lib/send/connection')
const { Requests } = require('../lib/export/requests')
const { MasterReader } = require('../lib/export/master')
const { ExportStats } = require('../lib/export/stats')
const { Writable } = require('node:stream')
const { line, createWriter } = require('../lib/export/ndjson')

describe('export reader: keys that change under it', () => {
  let srv, redis
  beforeAll(async () => {
    srv = await startRedis()
    redis = srv.client()
  })
  afterAll(async () => { await srv?.stop() })

  async function readAll (plan, onRecord, sent = []) {
    const conn = await connectData({ host: srv.host, port: srv.port, target: 'test' }, 5000, undefined, { buffers: true })
    const requests = new Requests(conn)
    const send = requests.send.bind(requests)
    // sent: the keys of each round trip first read (their PTTL: a page of a big key has none);
    // sent.pages: the round trips of pages only (nor TYPE nor PTTL).
    sent.pages = 0
    requests.send = (bytes, n) => {
      sent.push(bytes.toString('latin1').split('\r\nPTTL\r\n').length - 1)
      if (!bytes.includes('TYPE') && !bytes.includes('PTTL')) sent.pages++
      return send(bytes, n)
    }
    const stats = new ExportStats()
    const records = []
    const reader = new MasterReader({
      requests,
      stats,
      plan: { window: 1, batchSize: 10, pageSize: 100, scanCount: 1000, maxElements: 100_000, ...plan },
      emit: r => { records.push(r); return onRecord(r, records.length) }
    })
    try {
      await reader.run()
    } finally {
      requests.close()
    }
    return { records, stats }
  }

  it('a key deleted between SCAN and its read is skipped and counted', async () => {
    await redis.flushall()
    const keys = Array.from({ length: 200 }, (_, i) => `k:${i}`)
    await redis.mset(...keys.flatMap(k => [k, 'v']))
    // Window 1: while the first batch's records are handed over, the rest is not sent yet.
    const { records, stats } = await readAll({}, async (r, n) => { if (n === 1) await redis.del(...keys) })
    expect(records.length).toBe(10)
    expect(stats.keys).toBe(10)
    expect(stats.deleted).toBe(190)
  })

  it('a key of another type than guessed is read again, knowing its type', async () => {
    await redis.flushall()
    for (let i = 0; i < 30; i++) {
      if (i % 3 === 0) await redis.set(`m:${i}`, 's')
      else if (i % 3 === 1) await redis.rpush(`m:${i}`, 'a')
      else await redis.hset(`m:${i}`, 'f', 'v')
    }
    const { records, stats } = await readAll({}, () => {})
    expect(records.length).toBe(30)
    expect(stats.guessedWrong).toBeGreaterThan(0)
    const byType = Object.fromEntries(['string', 'list', 'hash'].map(t => [t, records.filter(r => r.type === t).length]))
    expect(byType).toEqual({ string: 10, list: 10, hash: 10 })
  })

  it('a big key whose type changes between pages is read again from its start', async () => {
    await redis.flushall()
    const fields = []
    for (let i = 0; i < 1000; i++) fields.push(`f${i}`, 'v')
    await redis.hset('big', ...fields)
    const { records, stats } = await readAll({}, async r => {
      if (r.type === 'hash' && r.part === 1) {
        await redis.del('big')
        await redis.rpush('big', 'a', 'b')
      }
    })
    expect(records.map(r => [r.type, r.part])).toEqual([['hash', 1], ['list', 1]])
    expect(records[1].value.map(String)).toEqual(['a', 'b'])
    expect(stats.restarted).toBe(1)
    expect(stats.keys).toBe(1) // its part 1 again: a restore's part 1 replaces the key
    expect(stats.types).toEqual({ list: 1 })
  })

  it('takes fewer keys a batch when keys are big (maxElements)', async () => {
    await redis.flushall()
    // 60 hashes of 300 fields: over 128, so not a listpack; a first page reads each whole.
    for (let k = 0; k < 60; k++) await redis.hset(`mid:${k}`, ...Array.from({ length: 300 }, (_, i) => [`f${i}`, 'v']).flat())
    const sent = []
    const { records, stats } = await readAll({ batchSize: 50, pageSize: 1000, maxElements: 2000, window: 2 }, () => {}, sent)
    expect(records.length).toBe(60)
    expect(records.every(r => r.value.length === 600)).toBe(true)
    // After the first batches, at most 2000 / 600 + 1 keys a batch (the first keys, guessed
    // strings, are read twice: the guess, then TYPE, then PTTL and a page knowing the type).
    const keysPerBatch = sent
    expect(keysPerBatch.length).toBeGreaterThan(15)
    expect(Math.max(...keysPerBatch.slice(7))).toBeLessThanOrEqual(4)
    expect(keysPerBatch.reduce((a, b) => a + b, 0)).toBe(60 + stats.guessedWrong)
  })

  it('a big key\'s pages come one after the other, among many small keys and several batches in flight', async () => {
    await redis.flushall()
    // 2000 small keys and 12 big ones (of 700 to 1030 elements: over the listpack limits, 7 to 11 pages of 100), written
    // interleaved so that SCAN returns big keys in batches full of small ones.
    const big = new Map()
    const p = redis.pipeline()
    for (let i = 0; i < 2000; i++) {
      p.set(`s:${i}`, String(i))
      if (i % 160 === 0) {
        const n = 700 + (i / 160) * 30
        const k = `big:${i}`
        const t = ['hash', 'list', 'set', 'zset'][(i / 160) % 4]
        const els = Array.from({ length: n }, (_, j) => `e${j}`)
        if (t === 'hash') p.hset(k, ...els.flatMap(e => [e, 'v']))
        if (t === 'list') p.rpush(k, ...els)
        if (t === 'set') p.sadd(k, ...els)
        if (t === 'zset') p.zadd(k, ...els.flatMap((e, j) => [String(j), e]))
        big.set(k, n)
      }
    }
    await p.exec()
    const { records } = await readAll({ window: 4, batchSize: 20, pageSize: 100 }, () => {})
    const keys = records.map(r => r.key.toString())
    expect(new Set(keys).size).toBe(2000 + big.size)
    // Each key's lines form one run: no other key between its parts, parts 1, 2, 3, … in order.
    const runs = []
    for (const r of records) {
      const k = r.key.toString()
      if (runs.length === 0 || runs[runs.length - 1].key !== k) runs.push({ key: k, parts: [] })
      runs[runs.length - 1].parts.push(r.part)
    }
    expect(runs.length).toBe(2000 + big.size)
    for (const run of runs) expect(run.parts).toEqual(run.parts.map((_, i) => i + 1))
    for (const [k, n] of big) {
      const parts = runs.find(r => r.key === k).parts
      expect(parts.length, k).toBeGreaterThan(2)
      const mine = records.filter(r => r.key.toString() === k)
      const step = mine[0].type === 'hash' || mine[0].type === 'zset' ? 2 : 1
      const names = new Set(mine.flatMap(r => r.value.filter((_, j) => j % step === 0).map(String)))
      expect(names.size, k).toBe(n)
    }
  })

  it('keys just over a page: one more round trip a batch, not one a key (pages read ahead)', async () => {
    await redis.flushall()
    const [, was] = await redis.config('GET', 'hash-max-listpack-entries')
    await redis.config('SET', 'hash-max-listpack-entries', '16') // a hashtable: HSCAN in pages
    try {
      const p = redis.pipeline()
      for (let k = 0; k < 300; k++) p.hset(`two:${k}`, ...Array.from({ length: 150 }, (_, i) => [`f${i}`, 'v']).flat())
      await p.exec()
      const sent = []
      const { records } = await readAll({ window: 2, batchSize: 50, pageSize: 100 }, () => {}, sent)
      const runs = records.reduce((acc, r) => {
        if (acc.length === 0 || !acc[acc.length - 1].key.equals(r.key)) acc.push({ key: r.key, fields: 0, parts: [] })
        acc[acc.length - 1].parts.push(r.part)
        acc[acc.length - 1].fields += r.value.length / 2
        return acc
      }, [])
      expect(runs.length).toBe(300)
      for (const run of runs) {
        expect(run.parts).toEqual(run.parts.map((_, i) => i + 1))
        expect(run.fields).toBe(150)
      }
      expect(records.length).toBeGreaterThanOrEqual(600)
      // 300 keys of 2 pages or more; 50 keys a batch (after the first, guessed strings, are
      // read again): a few page round trips a batch at most, far from one per key.
      const keyBatches = sent.length - sent.pages
      expect(sent.pages).toBeLessThanOrEqual(keyBatches * 3)
      expect(sent.pages).toBeLessThan(100)
    } finally {
      await redis.config('SET', 'hash-max-listpack-entries', was)
    }
  })

  it('a hash of fewer fields than a page comes whole from its first read; one of a page or more is read again from its start, every field once', async () => {
    await redis.flushall()
    // Page 100: hashes of 1 to 99 fields are whole in their first read; 100, 101 and 250
    // (a hashtable past hash-max-listpack-entries 128) are read again with HSCAN pages.
    const sizes = [1, 5, 99, 100, 101, 250]
    const want = new Map(sizes.map(n => [`h:${n}`, new Map(Array.from({ length: n }, (_, i) => [`f${i}`, `v${n}:${i}`]))]))
    for (const [key, fields] of want) await redis.hset(key, ...[...fields].flat())
    const { records, stats } = await readAll({ pageSize: 100, batchSize: 3 }, () => {})
    const got = new Map()
    for (const r of records) {
      const key = r.key.toString()
      if (!got.has(key)) got.set(key, { parts: [], pairs: [] })
      got.get(key).parts.push(r.part)
      for (let i = 0; i < r.value.length; i += 2) got.get(key).pairs.push([r.value[i].toString(), r.value[i + 1].toString()])
    }
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort())
    for (const [key, fields] of want) {
      const { parts, pairs } = got.get(key)
      expect(parts, key).toEqual(parts.map((_, i) => i + 1))
      // Every field once, with its value: HSCAN may split a hash anywhere, never repeat a field of a hash not written to.
      expect(pairs.length, key).toBe(fields.size)
      expect(new Map(pairs), key).toEqual(fields)
      if (fields.size < 100) expect(parts, key).toEqual([1])
    }
    expect(stats.keys).toBe(sizes.length)
  })

  it('pages of a big list and stream follow each other without a gap or a repeat', async () => {
    await redis.flushall()
    const items = Array.from({ length: 1050 }, (_, i) => `i${i}`)
    await redis.rpush('list', ...items)
    for (let i = 0; i < 250; i++) await redis.xadd('stream', `${i + 1}-0`, 'n', String(i))
    const { records } = await readAll({ pageSize: 100 }, () => {})
    const list = records.filter(r => r.type === 'list')
    expect(list.map(r => r.part)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1))
    expect(list.flatMap(r => r.value.map(String))).toEqual(items)
    const stream = records.filter(r => r.type === 'stream')
    expect(stream.flatMap(r => r.value.map(e => e.id))).toEqual(Array.from({ length: 250 }, (_, i) => `${i + 1}-0`))
  })
})

describe('NDJSON lines', () => {
  const b = s => Buffer.from(s)
  it('writes each type as docs/export.md says', () => {
    expect(line({ key: b('s'), type: 'string', ttl: 5, part: 1, value: b('') })).toBe('{"key":"s","type":"string","ttl":5,"value":""}\n')
    expect(line({ key: b('h'), type: 'hash', ttl: null, part: 1, value: [b('a'), b('1'), b('"q"'), b('é')] })).toBe('{"key":"h","type":"hash","ttl":null,"value":{"a":"1","\\"q\\"":"é"}}\n')
    // A repeated field name: pairs.
    expect(line({ key: b('h'), type: 'hash', ttl: null, part: 3, value: [b('a'), b('1'), b('a'), b('2')] })).toBe('{"key":"h","type":"hash","ttl":null,"part":3,"value":[["a","1"],["a","2"]]}\n')
    expect(line({ key: Buffer.from([0xff]), type: 'hash', ttl: null, part: 1, value: [Buffer.from([0xc3]), b('x')] })).toBe('{"key":{"base64":"/w=="},"type":"hash","ttl":null,"value":[[{"base64":"ww=="},"x"]]}\n')
    expect(line({ key: b('l'), type: 'list', ttl: null, part: 2, value: [b('a'), b('')] })).toBe('{"key":"l","type":"list","ttl":null,"part":2,"value":["a",""]}\n')
    expect(line({ key: b('z'), type: 'zset', ttl: null, part: 1, value: [b('ada'), b('1.5'), b('bob'), b('inf')] })).toBe('{"key":"z","type":"zset","ttl":null,"value":[["ada","1.5"],["bob","inf"]]}\n')
    expect(line({ key: b('x'), type: 'stream', ttl: null, part: 1, value: [{ id: '1-0', fields: [b('k'), b('v'), b('k'), b('w')] }, { id: '2-0', fields: [b('k'), b('v')] }] }))
      .toBe('{"key":"x","type":"stream","ttl":null,"value":[{"id":"1-0","fields":[["k","v"],["k","w"]]},{"id":"2-0","fields":{"k":"v"}}]}\n')
    const many = []
    for (let i = 0; i < 12; i++) many.push(b(`f${i % 11}`), b('v'))
    expect(Array.isArray(JSON.parse(line({ key: b('h'), type: 'hash', ttl: null, part: 1, value: many })).value)).toBe(true)
  })

  it('hands the lines over whole and in order, in pieces of the output\'s size, across values of up to 3 MB', async () => {
    // Lines of 60 B to 3 MB: pieces fill and the writer's Buffer is replaced many times, with
    // a line half written in it (a big value makes it grow).
    for (const piece of [undefined, 256 * 1024]) {
      const chunks = []
      const out = new Writable({ highWaterMark: 64 * 1024, write (c, e, cb) { chunks.push(c); setImmediate(cb) } })
      if (piece) out.piece = piece
      const w = createWriter(out)
      let want = ''
      for (let i = 0; i < 3000; i++) {
        const v = String(i % 10).repeat(i % 500 === 499 ? 3_000_000 : (i * 7919) % 4000)
        const ttl = i % 3 ? null : i
        want += `{"key":"k:${i}","type":"string","ttl":${ttl === null ? 'null' : ttl},"value":"${v}"}\n`
        const wait = w.write({ key: b(`k:${i}`), type: 'string', ttl, part: 1, value: b(v) })
        if (wait) await wait
      }
      await w.end()
      expect(chunks.length).toBeGreaterThan(20)
      expect(chunks.slice(0, -1).every(c => c.length >= (piece ?? 64 * 1024))).toBe(true)
      expect(Buffer.concat(chunks).toString('latin1') === want).toBe(true)
    }
  })
})
