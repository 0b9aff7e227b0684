'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Messages as a person reads them: the delimiter hint, what --on-error abort prints about
// the batches in flight, one number format, no rate for a run that loaded nothing, and
// where an aborted iterable stopped.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli: pipeload, ROOT } = require('./helpers/run-cli')
const { createMapper } = require('../lib/encode/mapper')
const { formatSummary } = require('../lib/run/reporter')
const { load } = require('..')

let srv
let redis
let tmp
useServer('pipeload-messages-', s => { ({ srv, redis, tmp } = s) })

function writeTmp (name, content) {
  const file = path.join(tmp, name)
  fs.writeFileSync(file, content)
  return file
}

describe('a header read with the wrong delimiter', () => {
  it('the semicolon example file without --delimiter: exit 2 and the hint', async () => {
    const file = path.join(ROOT, 'examples', 'data', 'cities-semicolon.csv')
    const res = await pipeload(['import', file, '--key', 'city:{id}', '--dry-run', 'text'])
    expect(res.code).toBe(2)
    // A one-column header is refused before the templates are looked at (issue 34 item 3).
    expect(res.stderr).toMatch(/cities-semicolon\.csv:1: the header split on ',' is one column, "id;name;country;population;lat;lon;note"; /)
    expect(res.stderr).toContain("the header contains ';': try --delimiter ';'")
    // The hint is right: with it the same file loads.
    const fixed = await pipeload(['import', file, '--key', 'city:{id}', '--dry-run', 'text', '--delimiter', ';'])
    expect(fixed.code, fixed.stderr).toBe(0)
  })

  it('tab and pipe get their own hint; a header without another delimiter gets none', () => {
    const missing = columns => {
      try {
        createMapper({ templates: ['SET k:{id} 1'], shape: { columns, file: 'f.csv' } })
      } catch (err) {
        expect(err.code).toBe('PIPELOAD_TEMPLATE_INVALID')
        return err.message
      }
      throw new Error('no error')
    }
    expect(missing(['id\tname'])).toMatch(/the header contains a tab: try --delimiter '\\t' or --format tsv$/)
    expect(missing(['id|name'])).toMatch(/the header contains '\|': try --delimiter '\|'$/)
    expect(missing(['key', 'name'])).toMatch(/\(columns are: key, name\)$/)
    // A header of several columns, one of them holding another delimiter: the template's message, same hint.
    expect(missing(['key', 'id;name'])).toMatch(/uses \{id\}, which is not a column of f\.csv \(columns are: key, id;name\); the header contains ';': try --delimiter ';'$/)
  })
})

describe('--on-error abort and the batches in flight', () => {
  it('prints the stopping failure once and counts the others, never lists them', async () => {
    const prefix = 'msg:abort:'
    // One batch of 10 records, every one a WRONGTYPE: all 10 replies are in when the run
    // stops, so the count is known (9 more), whatever the timing.
    for (let i = 1; i <= 10; i++) await redis.set(prefix + i, 'a string')
    const rows = ['id,v']
    for (let i = 1; i <= 10; i++) rows.push(`${i},x`)
    const file = writeTmp('abort.csv', rows.join('\n') + '\n')
    const res = await pipeload(['import', file, '-c', `HSET ${prefix}{id} v {v}`, '-u', srv.url, '-b', '100', '--json'])
    expect(res.code).toBe(1)
    const lines = res.stderr.split('\n')
    expect(lines[0]).toBe(`pipeload: ${file}:2: WRONGTYPE Operation against a key holding the wrong kind of value (stopped: on-error abort)`)
    expect(lines[1]).toBe('pipeload: and 9 more records in the batches already sent failed too')
    expect(res.stderr.match(/WRONGTYPE/g)).toHaveLength(1)
    const s = JSON.parse(res.stdout)
    expect(s.errors).toBe(10)
    expect(s.failures).toHaveLength(10) // machines still get every failure
  })

  it('says nothing more when the stopping failure is the only one', async () => {
    const prefix = 'msg:one:'
    await redis.set(prefix + '2', 'a string')
    const file = writeTmp('one.csv', 'id,v\n1,x\n2,x\n3,x\n')
    const res = await pipeload(['import', file, '-c', `HSET ${prefix}{id} v {v}`, '-u', srv.url, '-b', '100'])
    expect(res.code).toBe(1)
    expect(res.stderr).not.toMatch(/more records? in the batches/)
    expect(res.stderr).toMatch(/^pipeload: stopped after 3 records: 2 loaded and acknowledged, 1 failed$/m)
  })

  it('err.alsoFailed from the library', async () => {
    const prefix = 'msg:lib:'
    for (const i of [3, 4, 5]) await redis.set(prefix + i, 'a string')
    const records = Array.from({ length: 6 }, (_, i) => ({ id: i + 1 }))
    const err = await load({ url: srv.url, input: records, command: `HSET ${prefix}{id} v 1`, batchSize: 100 }).then(() => null, e => e)
    expect(err.code).toBe('PIPELOAD_RECORD_FAILED')
    expect(err.failure.line).toBe(3)
    expect(err.alsoFailed).toBe(2)
  })
})

describe('numbers', () => {
  it('counts have thousands separators in every human line; positions do not', async () => {
    const prefix = 'msg:num:'
    await redis.set(prefix + '1500', 'a string')
    const rows = ['id,v']
    for (let i = 1; i <= 3000; i++) rows.push(`${i},x`)
    const file = writeTmp('num.csv', rows.join('\n') + '\n')
    const res = await pipeload(['import', file, '-c', `HSET ${prefix}{id} v {v}`, '-u', srv.url, '-b', '1000', '-w', '1', '--json'])
    expect(res.code).toBe(1)
    const s = JSON.parse(res.stdout)
    expect(s.records).toBeGreaterThanOrEqual(2000)
    expect(typeof s.records).toBe('number') // JSON keeps raw numbers
    const stopped = res.stderr.split('\n').find(l => l.startsWith('pipeload: stopped after'))
    expect(stopped).toBe(`pipeload: stopped after ${s.records.toLocaleString('en-US')} records: ${s.loaded.toLocaleString('en-US')} loaded and acknowledged, 1 failed`)
    const summary = res.stderr.split('\n').find(l => l.startsWith('loaded '))
    expect(summary).toMatch(/^loaded \d{1,3}(,\d{3})+ of \d{1,3}(,\d{3})+ records \(\d{1,3}(,\d{3})+ commands\)/)
    // file:line stays as editors and sed -n want it.
    expect(res.stderr).toContain(`${file}:1501: WRONGTYPE`)
  })

  it('no rows/s for a run that loaded nothing', async () => {
    const prefix = 'msg:zero:'
    await redis.set(prefix + '1', 'a string')
    const file = writeTmp('zero.csv', 'id,v\n1,x\n')
    const res = await pipeload(['import', file, '-c', `HSET ${prefix}{id} v {v}`, '-u', srv.url])
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/^loaded 0 of 1 record /m)
    expect(res.stderr).not.toMatch(/rows\/s/)
    const base = { input: 'f.csv', target: 'h:1', dryRun: null, resumedFrom: null, commands: 0, errors: 0, durationMs: 3, batches: 0, rttMs: {} }
    expect(formatSummary({ ...base, records: 0, loaded: 0, recordsPerSec: 0 }).split('\n')[0]).toBe('loaded 0 of 0 records (0 commands) from f.csv into h:1 in 3 ms')
    expect(formatSummary({ ...base, records: 1, loaded: 1, commands: 1, recordsPerSec: 333 })).toMatch(/in 3 ms · 333 rows\/s\n/)
  })
})

// Issue 34 item 11: a resume of a finished load reads nothing; its "rate" was 0 rows/s.
describe('a resume with nothing left', () => {
  it('says nothing was left to load, with no rate', async () => {
    const prefix = 'msg:done:'
    const file = writeTmp('done.csv', 'id,v\n1,x\n2,y\n')
    const ckpt = file + '.ckpt'
    const first = await pipeload(['import', file, '-k', prefix + '{id}', '--checkpoint', ckpt, '-u', srv.url])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stderr).toMatch(/^loaded 2 of 2 records \(2 commands\) .* · [\d,]+ rows\/s$/m)
    const again = await pipeload(['import', file, '-k', prefix + '{id}', '--checkpoint', ckpt, '--resume', '-u', srv.url])
    expect(again.code, again.stderr).toBe(0)
    const line = again.stderr.split('\n')[0]
    expect(line).toMatch(/^loaded 2 of 2 records \(resumed after record 2\) \(2 commands\) from .* in [^·]+ · nothing was left to load$/)
    expect(again.stderr).not.toMatch(/rows\/s/)
    await redis.del(prefix + '1', prefix + '2')
  })
})

describe('stoppedAt after an abort', () => {
  it('an iterable input aborted by its signal: the number of the first record not sent', async () => {
    const controller = new AbortController()
    async function * records () {
      for (let i = 1; ; i++) {
        if (i === 2500) controller.abort()
        yield { id: i }
      }
    }
    const err = await load({ url: srv.url, input: records(), command: 'SET msg:sig:{id} 1', batchSize: 100, signal: controller.signal })
      .then(() => null, e => e)
    expect(err.code).toBe('PIPELOAD_ABORTED')
    const s = err.summary
    expect(s.stoppedAt).toEqual({ file: '<records>', line: s.records + 1, offset: null })
    // Every record before it is in Redis, none from it on.
    expect(await redis.exists(`msg:sig:${s.records}`)).toBe(1)
    expect(await redis.exists(`msg:sig:${s.records + 1}`)).toBe(0)
  })
})
