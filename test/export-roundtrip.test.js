'use strict'
/* global describe, it, expect, beforeEach */

// What docs/export.md says loads a CSV or Parquet export back does so: files written by the
// export writers (lib/export/csv.js, parquet.js) from records built by hand, loaded into a
// private server with `pipeload import` and the commands and map modules of the docs (taken
// from docs/export.md itself), then read back with the test's own ioredis client and compared
// with the records.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { prng } = require('./helpers/prng')

const B = s => Buffer.from(s)
const DOC = fs.readFileSync(path.join(__dirname, '..', 'docs', 'export.md'), 'utf8')

/**
 * The ```js block of docs/export.md whose first line names `file`, written to the tmpdir;
 * the package ships it as examples/map/<file>, the same text.
 */
function docModule (ctx, file) {
  const block = [...DOC.matchAll(/```js\n([^]*?)```/g)].map(m => m[1]).find(b => b.startsWith(`// ${file}:`))
  expect(block, file).toBeTruthy()
  expect(fs.readFileSync(path.join(__dirname, '..', 'examples', 'map', file), 'utf8'), file).toBe(block)
  return ctx.write(file, block)
}

async function writeFile (format, file, records, options = {}) {
  const { createWriter } = require(`../lib/export/${format}`)
  const out = fs.createWriteStream(file)
  const w = createWriter(out, options)
  for (const r of records) {
    const p = w.write(r)
    if (p) await p
  }
  await w.end()
  await new Promise((resolve, reject) => out.end(err => err ? reject(err) : resolve()))
}

/** n hashes of fields name/email/age, values with the characters CSV must quote. */
function hashes (n, prefix, { missing = false } = {}) {
  const r = prng(n)
  const text = ['plain', 'a,b', 'say "hi"', 'two\nlines', 'crlf\r\nx', 'lone\rcr', ' pad ', 'Ünï ✓']
  return Array.from({ length: n }, (_, i) => {
    const fields = { name: `${r.pick(text)} ${i}`, email: `u${i}@example.com`, age: String(i % 90) }
    if (missing && i % 3 === 1) delete fields.email
    if (missing && i % 5 === 2) fields.age = `${i}, "${r.pick(text)}"`
    return { key: `${prefix}${i}`, fields }
  })
}

const asRecord = h => ({ key: B(h.key), type: 'hash', ttl: null, part: 1, value: Object.entries(h.fields).flatMap(([f, v]) => [B(f), B(v)]) })

describe('export files load back with the commands docs/export.md gives', () => {
  const ctx = {}
  useServer('pipeload-export-roundtrip-', c => Object.assign(ctx, c))
  beforeEach(() => ctx.redis.flushall()) // the test's own server

  it('CSV, with the -c template: every hash as it was', async () => {
    const data = hashes(4000, 'csv:t:')
    const file = path.join(ctx.tmp, 'users.csv')
    await writeFile('csv', file, data.map(asRecord))
    const r = await runCli(['import', file, '-u', ctx.srv.url, '-c', 'HSET {key} name {name} email {email} age {age}', '-q'])
    expect(r.stderr.toString()).toBe('')
    expect(r.code).toBe(0)
    expect(await ctx.redis.dbsize()).toBe(4000)
    for (const h of data) expect(await ctx.redis.hgetall(h.key)).toEqual(h.fields)
  })

  it('CSV, with the map module: missing fields stay missing', async () => {
    const data = hashes(3000, 'csv:m:', { missing: true })
    const file = path.join(ctx.tmp, 'sparse.csv')
    await writeFile('csv', file, data.map(asRecord))
    const r = await runCli(['import', file, '-u', ctx.srv.url, '--map', docModule(ctx, 'restore-csv.cjs'), '-q'])
    expect(r.stderr.toString()).toBe('')
    expect(r.code).toBe(0)
    expect(await ctx.redis.dbsize()).toBe(3000)
    for (const h of data) expect(await ctx.redis.hgetall(h.key)).toEqual(h.fields)
  })

  it('Parquet, with the map module: strings and hashes, every byte, TTLs', async () => {
    const r = prng(7)
    const bytes = n => Buffer.from(Array.from({ length: n }, () => r.int(256)))
    const keys = []
    for (let i = 0; i < 5000; i++) {
      const key = i % 5 === 0 ? Buffer.concat([B('bin:'), bytes(6), B(`:${i}`)]) : B(`pq:${i}`)
      const ttl = i % 4 === 0 ? 3_600_000 + i : null
      if (i % 3 === 0) keys.push({ key, type: 'string', ttl, value: i % 2 ? bytes(r.int(30)) : B(i % 9 ? `v${i}` : '') })
      else keys.push({ key, type: 'hash', ttl, fields: [['name', B(`n${i}`)], ...(i % 2 ? [['blob', bytes(1 + r.int(20))]] : []), ['age', B(String(i))]] })
    }
    const records = keys.flatMap(k => k.type === 'string'
      ? [{ key: k.key, type: 'string', ttl: k.ttl, part: 1, value: k.value }]
      : [{ key: k.key, type: 'hash', ttl: k.ttl, part: 1, value: k.fields.slice(0, 1).flatMap(([f, v]) => [B(f), v]) }, // a big key's parts
          { key: k.key, type: 'hash', ttl: k.ttl, part: 2, value: k.fields.slice(1).flatMap(([f, v]) => [B(f), v]) }])
    const file = path.join(ctx.tmp, 'dump.parquet')
    await writeFile('parquet', file, records, { rowGroupSize: 700 })
    await ctx.redis.hset(keys[1].key, 'stale', 'x') // --replace removes what was there
    const run = await runCli(['import', file, '-u', ctx.srv.url, '--map', docModule(ctx, 'restore-parquet.cjs'), '--replace', '-q'])
    expect(run.stderr.toString()).toBe('')
    expect(run.code).toBe(0)
    expect(await ctx.redis.dbsize()).toBe(5000)
    for (const k of keys) {
      expect(await ctx.redis.type(k.key)).toBe(k.type)
      if (k.type === 'string') expect((await ctx.redis.getBuffer(k.key)).equals(k.value)).toBe(true)
      else {
        const got = await ctx.redis.hgetallBuffer(k.key)
        expect(Object.fromEntries(Object.entries(got).map(([f, v]) => [f, v.toString('hex')]))).toEqual(Object.fromEntries(k.fields.map(([f, v]) => [f, v.toString('hex')])))
      }
      const pttl = await ctx.redis.pttl(k.key)
      if (k.ttl === null) expect(pttl).toBe(-1)
      else expect(pttl > k.ttl - 600_000 && pttl <= k.ttl).toBe(true)
    }
  })
})
