'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Error policies against a private redis-server, parsing on the main thread and in the
// encode worker: --on-error abort (the default) stops at the first failed record of any
// kind and says exactly what was acknowledged and where the first unsent record starts;
// skip goes on, bounded by --max-errors; --rejects gets every failed record, input errors
// and error replies alike, with its raw input text.

const fs = require('node:fs')
const path = require('node:path')
const { Writable } = require('node:stream')
const { useServer } = require('./helpers/redis-server')
const { runCli: cli } = require('./helpers/run-cli')
const { load } = require('../lib')


let srv
let redis
let tmp
let n = 0
useServer('pipeload-policies-', s => { ({ srv, redis, tmp } = s) })

/** A CSV of `count` rows (id, v) with ids 1..count: id i is on line i + 1, at a known offset. */
function csvFile (count, bad = {}) {
  let text = 'id,v\n'
  const offsets = [null]
  for (let i = 1; i <= count; i++) {
    offsets.push(Buffer.byteLength(text))
    text += bad[i] !== undefined ? bad[i] + '\n' : `${i},v${i}\n`
  }
  const file = path.join(fs.mkdtempSync(path.join(tmp, 'd-')), 'data.csv')
  fs.writeFileSync(file, text)
  return { file, offsets, dir: path.dirname(file) }
}

async function ids (prefix) {
  const keys = await redis.keys(prefix + '*')
  return new Set(keys.map(k => Number(k.slice(prefix.length))))
}

function readRejects (file) {
  return fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(l => JSON.parse(l))
}

for (const worker of [false, true]) {
  describe(`error policies (worker: ${worker})`, () => {
    it('abort: an error reply stops the run; what was sent is acknowledged, nothing from stoppedAt on is sent', async () => {
      const prefix = `pa${++n}:`
      const { file, offsets, dir } = csvFile(2000)
      await redis.set(`${prefix}150`, 'a string')
      const rejects = path.join(dir, 'rejects.ndjson')
      const err = await load({ url: srv.url, input: file, command: `HSET ${prefix}{id} v {v}`, batchSize: 10, window: 2, workers: worker ? 1 : 0, rejects })
        .then(() => null, e => e)
      expect(err.code).toBe('PIPELOAD_RECORD_FAILED')
      expect(err.exitCode).toBe(1)
      expect(err.message).toBe(`${file}:151: WRONGTYPE Operation against a key holding the wrong kind of value (stopped: on-error abort)`)
      const s = err.summary
      expect(s.errors).toBe(1)
      expect(s.failures).toEqual([{ file, line: 151, offset: offsets[150], code: 'WRONGTYPE', message: 'WRONGTYPE Operation against a key holding the wrong kind of value', source: 'reply' }])
      // stoppedAt: the first record not sent; every record before it is acknowledged.
      const next = s.stoppedAt.line - 1 // the id on that line
      expect(next).toBeGreaterThan(150)
      expect(next).toBeLessThan(2000)
      expect(s.stoppedAt).toEqual({ file, line: next + 1, offset: offsets[next] })
      expect(s.recordsAcknowledged).toBe(next - 1)
      expect(s.loaded).toBe(next - 2)
      const got = await ids(prefix)
      for (let i = 1; i <= 2000; i++) expect(got.has(i), `id ${i}`).toBe(i < next)
      expect(await redis.get(`${prefix}150`)).toBe('a string')
      expect(readRejects(rejects)).toEqual([{ file, line: 151, offset: offsets[150], code: 'WRONGTYPE', reason: 'WRONGTYPE Operation against a key holding the wrong kind of value', source: 'reply', raw: '150,v150' }])
    })

    it('abort: a missing field stops before the record; the records before it in its batch are sent', async () => {
      const prefix = `pm${++n}:`
      const file = path.join(fs.mkdtempSync(path.join(tmp, 'm-')), 'm.ndjson')
      const lines = Array.from({ length: 100 }, (_, i) => JSON.stringify(i === 41 ? { id: 42 } : { id: i + 1, v: `v${i + 1}` }))
      fs.writeFileSync(file, lines.join('\n') + '\n')
      const err = await load({ url: srv.url, input: file, command: `HSET ${prefix}{id} v {v}`, batchSize: 1000, workers: worker ? 1 : 0 }).then(() => null, e => e)
      expect(err.code).toBe('PIPELOAD_RECORD_FAILED')
      expect(err.message).toBe(`${file}:42: field "v" is missing (stopped: on-error abort)`)
      const offset = Buffer.byteLength(lines.slice(0, 41).join('\n') + '\n')
      expect(err.summary).toMatchObject({ records: 42, loaded: 41, errors: 1, recordsAcknowledged: 41, stoppedAt: { file, line: 42, offset } })
      expect([...await ids(prefix)].sort((a, b) => a - b)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1))
    })

    it('skip: error replies and bad rows fail their record only; every other record loads; all go to the rejects file', async () => {
      const prefix = `ps${++n}:`
      const { file, offsets, dir } = csvFile(300, { 10: '10,a,extra', 200: '200,"x"y' })
      await redis.set(`${prefix}50`, 'a string')
      await redis.set(`${prefix}250`, 'a string')
      const rejects = path.join(dir, 'rejects.ndjson')
      const summary = await load({ url: srv.url, input: file, command: `HSET ${prefix}{id} v {v}`, batchSize: 7, workers: worker ? 1 : 0, onError: 'skip', rejects })
      expect(summary).toMatchObject({ records: 300, loaded: 296, errors: 4, errorReplies: 2, stoppedAt: null, rejects: { file: rejects, records: 4 } })
      const got = await ids(prefix)
      for (let i = 1; i <= 300; i++) expect(got.has(i), `id ${i}`).toBe(i !== 10 && i !== 200)
      const r = readRejects(rejects).sort((a, b) => a.line - b.line)
      expect(r.map(x => [x.line, x.offset, x.code, x.source, x.raw])).toEqual([
        [11, offsets[10], 'PIPELOAD_INPUT_INVALID', 'input', '10,a,extra'],
        [51, offsets[50], 'WRONGTYPE', 'reply', '50,v50'],
        [201, offsets[200], 'PIPELOAD_INPUT_INVALID', 'input', '200,"x"y'],
        [251, offsets[250], 'WRONGTYPE', 'reply', '250,v250']
      ])
      expect(r[0].reason).toBe('Invalid Record Length: the header has 2 fields, got 3')
    })

    it('skip with maxErrors: stops once more than maxErrors records failed, saying where', async () => {
      const prefix = `px${++n}:`
      const bad = {}
      for (const i of [100, 200, 300, 400, 500]) bad[i] = `${i}`
      const { file, offsets } = csvFile(1000, bad)
      const err = await load({ url: srv.url, input: file, command: `HSET ${prefix}{id} v {v}`, batchSize: 50, workers: worker ? 1 : 0, onError: 'skip', maxErrors: 2 })
        .then(() => null, e => e)
      expect(err.code).toBe('PIPELOAD_TOO_MANY_ERRORS')
      expect(err.exitCode).toBe(1)
      expect(err.message).toBe(`more than 2 records failed (max-errors 2); the last: ${file}:301: Invalid Record Length: the header has 2 fields, got 1`)
      const s = err.summary
      expect(s.errors).toBe(3)
      const next = s.stoppedAt.line - 1
      expect(s.stoppedAt.offset).toBe(offsets[next])
      expect(next).toBeGreaterThan(300)
      const got = await ids(prefix)
      for (let i = 1; i <= 1000; i++) expect(got.has(i), `id ${i}`).toBe(i < next && ![100, 200, 300].includes(i))
    })

    it('skip with maxErrors 0 is abort that still reads the failing batch', async () => {
      const prefix = `p0${++n}:`
      const { file } = csvFile(20, { 5: '5' })
      const err = await load({ url: srv.url, input: file, command: `HSET ${prefix}{id} v {v}`, workers: worker ? 1 : 0, onError: 'skip', maxErrors: 0 }).then(() => null, e => e)
      expect(err.code).toBe('PIPELOAD_TOO_MANY_ERRORS')
      expect(err.summary.errors).toBe(1)
    })
  })
}

describe('error policies: other inputs and options', () => {
  it('an iterable: rejects hold each failed record as JSON', async () => {
    const prefix = `pi${++n}:`
    const rejects = path.join(tmp, 'iter.ndjson')
    const records = [{ id: 1, v: 'a' }, { id: 2 }, { id: 3, v: 'c' }]
    const summary = await load({ url: srv.url, input: records, command: `HSET ${prefix}{id} v {v}`, onError: 'skip', rejects })
    expect(summary).toMatchObject({ records: 3, loaded: 2, errors: 1 })
    expect(readRejects(rejects)).toEqual([{ file: '<records>', line: 2, offset: null, code: 'PIPELOAD_FIELD_MISSING', reason: 'field "v" is missing', source: 'input', raw: '{"id":2}' }])
  })

  it('a dry run stops at a failed record in abort mode: nothing after it is written', async () => {
    const file = path.join(tmp, 'dry.ndjson')
    fs.writeFileSync(file, '{"id":1,"v":"a"}\n{"id":2}\n{"id":3,"v":"c"}\n')
    let out = ''
    const output = new Writable({ write (c, e, cb) { out += c; cb() } })
    const err = await load({ input: file, command: 'SET k:{id} {v}', dryRun: 'text', output, workers: 0 }).then(() => null, e => e)
    expect(err.code).toBe('PIPELOAD_RECORD_FAILED')
    expect(out).toBe('SET k:1 a\n')
    expect(err.summary.stoppedAt).toEqual({ file, line: 2, offset: 17 })
  })

  it('validates onError, maxErrors and rejects', async () => {
    const base = { input: [{ id: 1 }], command: 'SET k:{id} x', dryRun: 'text', output: new Writable({ write (c, e, cb) { cb() } }) }
    await expect(load({ ...base, onError: 'ignore' })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: 'onError must be one of abort, skip, got "ignore"' })
    await expect(load({ ...base, maxErrors: 3 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'maxErrors' })
    await expect(load({ ...base, onError: 'skip', maxErrors: -1 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'maxErrors' })
    await expect(load({ ...base, rejects: 5 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'rejects' })
    await expect(load({ ...base, rejects: path.join(tmp, 'no', 'such', 'dir', 'r.ndjson') }))
      .rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: expect.stringMatching(/^rejects .* cannot be written: the directory .* does not exist$/) })
  })
})

describe('error policies: CLI', () => {
  it('abort (default): exit 1, the failure, what was acknowledged and where the next unsent record starts; --json keeps the summary', async () => {
    const prefix = `pc${++n}:`
    const { file, offsets } = csvFile(50)
    await redis.set(`${prefix}3`, 'a string')
    const res = await cli(['import', file, '-c', `HSET ${prefix}{id} v {v}`, '-u', srv.url, '-b', '1', '-w', '1', '--json'])
    expect(res.code).toBe(1)
    expect(res.stderr.split('\n')[0]).toBe(`pipeload: ${file}:4: WRONGTYPE Operation against a key holding the wrong kind of value (stopped: on-error abort)`)
    expect(res.stderr).toMatch(/pipeload: stopped after \d+ records: \d+ loaded and acknowledged, 1 failed/)
    const s = JSON.parse(res.stdout)
    expect(s.error.code).toBe('PIPELOAD_RECORD_FAILED')
    expect(res.stderr).toContain(`pipeload: nothing from ${file}:${s.stoppedAt.line} (byte ${s.stoppedAt.offset}) on was sent`)
    expect(s.stoppedAt.offset).toBe(offsets[s.stoppedAt.line - 1])
    expect((await ids(prefix)).size).toBe(s.stoppedAt.line - 2) // ids 1..next-1, the failed 3 being a string
  })

  it('--max-errors without --on-error skip is a usage error', async () => {
    const { file } = csvFile(2)
    const res = await cli(['import', file, '-k', 'x:{id}', '--dry-run', 'text', '--max-errors', '3'])
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/^pipeload: --max-errors must be used with onError "skip"/)
  })
})

// Issue 34 item 9: a record whose command got an error reply may have its other commands
// applied (they are pipelined, not a MULTI). docs/errors.md says so and how to repair: the
// rejects file, loaded again with commands that give the same result when run twice.
describe('error policies: a failed record is not atomic', () => {
  it('-c A -c B, B refused: A stays applied, the record is a reject; the rejects loaded again repair it', async () => {
    const prefix = `pa${++n}:`
    const { file, dir } = csvFile(3)
    await redis.set(`${prefix}set:2`, 'a string') // SADD on it: WRONGTYPE
    const rejects = path.join(dir, 'rejects.ndjson')
    const cmds = ['-c', `SET ${prefix}v:{id} {v}`, '-c', `SADD ${prefix}set:{id} {v}`]
    const res = await cli(['import', file, ...cmds, '--on-error', 'skip', '--rejects', rejects, '-u', srv.url])
    expect(res.code, res.stderr).toBe(1)
    const rows = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(rows.map(r => [r.line, r.code, r.raw])).toEqual([[3, 'WRONGTYPE', '2,v2']])
    // The record failed, and its first command was applied all the same.
    expect(await redis.get(`${prefix}v:2`)).toBe('v2')
    // The repair docs/errors.md gives: fix the cause, load the rejects' raw texts again.
    await redis.del(`${prefix}set:2`)
    const retry = path.join(dir, 'retry.csv')
    fs.writeFileSync(retry, 'id,v\n' + rows.map(r => r.raw + '\n').join(''))
    const again = await cli(['import', retry, ...cmds, '-u', srv.url])
    expect(again.code, again.stderr).toBe(0)
    expect(await redis.get(`${prefix}v:2`)).toBe('v2')
    expect(await redis.smembers(`${prefix}set:2`)).toEqual(['v2'])
  })

  it('docs/errors.md says so, and how to repair', () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'errors.md'), 'utf8')
    const section = doc.slice(doc.indexOf('### A record is not atomic'), doc.indexOf('### The rejects file'))
    expect(section).toMatch(/the record's other commands may have been applied/)
    expect(section).toMatch(/rejects/)
    expect(section).toMatch(/--replace/)
  })
})
