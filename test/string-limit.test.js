'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// A record longer than V8's string limit (~512 MiB; --max-record-size above it) fails that
// record, naming file and line, under --on-error as any bad record does; it was an internal
// error (exit 70) from Buffer#toString. The limit is lowered here (lib/read/text.js `limit`,
// this process only: workers 0) so 300 KB records reach the path; a 544 MiB record was run by
// hand (see the commit). Expected ids come from the generator, not from a reader.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { load } = require('../lib')
const text = require('../lib/read/text')

let server
let redis
let tmp

useServer('pipeload-strlim-', s => { server = s.srv; redis = s.redis; tmp = s.tmp })

const saved = text.limit.chars
beforeAll(() => { text.limit.chars = 100_000 })
afterAll(() => { text.limit.chars = saved })

const ROWS = 40
const BIG = new Set([3, 17]) // records of ~300 KB: over the lowered limit
const big = i => 'x'.repeat(300_000 + i)

/** NDJSON with nested values (read by JSON.parse, as a string), and a JSON array of the same. */
function files () {
  const recs = Array.from({ length: ROWS }, (_, k) => ({ id: k + 1, v: { s: BIG.has(k + 1) ? big(k + 1) : `v${k + 1}` } }))
  const nd = path.join(tmp, 'n.ndjson')
  fs.writeFileSync(nd, recs.map(r => JSON.stringify(r)).join('\n') + '\n')
  const js = path.join(tmp, 'a.json')
  fs.writeFileSync(js, '[\n' + recs.map(r => JSON.stringify(r)).join(',\n') + '\n]\n')
  return { nd, js }
}

async function ids (prefix) {
  const keys = await redis.keys(`${prefix}*`)
  return keys.map(k => Number(k.slice(prefix.length))).sort((a, b) => a - b)
}

describe('a record longer than a string can be', () => {
  it('NDJSON and JSON: skip rejects it with file and line, every other record loads; abort stops there', async () => {
    const { nd, js } = files()
    const good = Array.from({ length: ROWS }, (_, k) => k + 1).filter(i => !BIG.has(i))
    for (const [file, what, line] of [[nd, 'line', i => i], [js, 'array element', i => i + 1]]) {
      const prefix = `sl:${path.extname(file)}:`
      const rejects = file + '.rejects'
      const summary = await load({ input: file, commands: [`SET ${prefix}{id} {v}`], url: server.url, workers: 0, maxRecordSize: 1 << 20, onError: 'skip', rejects })
      expect(summary.errors).toBe(BIG.size)
      expect(await ids(prefix)).toEqual(good)
      const rej = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
      expect(rej.map(r => [r.line, r.code])).toEqual([...BIG].map(i => [line(i), 'PIPELOAD_RECORD_TOO_LARGE']))
      expect(rej[0].reason).toMatch(new RegExp(`^${what} of \\d+ bytes is longer than a JavaScript string can be \\(100000 characters, V8's limit\\)`))

      const aprefix = `sla:${path.extname(file)}:`
      const err = await load({ input: file, commands: [`SET ${aprefix}{id} {v}`], url: server.url, workers: 0, maxRecordSize: 1 << 20 }).catch(e => e)
      expect(err.code).toBe('PIPELOAD_RECORD_TOO_LARGE')
      expect(err.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${line(3)}: ${what} of \\d+ bytes is longer than a JavaScript string can be`))
      expect(err.line).toBe(line(3))
      expect(await ids(aprefix)).toEqual([1, 2])
    }
  })

  it("a value V8 cannot make a string of while the template is filled fails its record with our code, not V8's", async () => {
    const tooLong = () => { throw Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), { code: 'ERR_STRING_TOO_LONG' }) }
    const recs = [{ id: 1, v: 'a' }, { id: 2, get v () { return tooLong() } }, { id: 3, v: 'c' }]
    const failures = []
    const summary = await load({ input: recs, commands: ['SET slt:{id} {v}'], url: server.url, onError: 'skip', onFailure: f => failures.push(f) })
    expect(summary.errors).toBe(1)
    expect(failures.map(f => [f.line, f.code, f.message])).toEqual([[2, 'PIPELOAD_RECORD_TOO_LARGE', "a value of this record is longer than a JavaScript string can be (V8's limit), whatever --max-record-size allows"]])
    expect(await ids('slt:')).toEqual([1, 3])
  })

  it('CSV: a long record loads as bytes; its text for a rejects file is null, not a crash', async () => {
    const csv = path.join(tmp, 'c.csv')
    let s = 'id,v\n'
    for (let i = 1; i <= ROWS; i++) s += BIG.has(i) ? `${i},${big(i)}\n` : i === 5 ? `${i},${big(i)},extra\n` : `${i},v${i}\n`
    fs.writeFileSync(csv, s)
    const rejects = path.join(tmp, 'c.rejects')
    const summary = await load({ input: csv, commands: ['SET slc:{id} {v}'], url: server.url, workers: 0, maxRecordSize: 1 << 20, onError: 'skip', rejects })
    expect(summary.errors).toBe(1)
    expect(await ids('slc:')).toEqual(Array.from({ length: ROWS }, (_, k) => k + 1).filter(i => i !== 5))
    expect(await redis.strlen('slc:3')).toBe(300_003)
    const rej = JSON.parse(fs.readFileSync(rejects, 'utf8'))
    expect([rej.line, rej.code, rej.raw]).toEqual([6, 'PIPELOAD_INPUT_INVALID', null])
  })
})
