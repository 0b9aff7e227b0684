'use strict'
/* global describe, it, expect, beforeEach */

// A checkpoint never restarts a run silently (issue 22): --resume with no checkpoint at the
// path (a typo) is refused instead of loading everything again, a run without --resume is
// refused over an unfinished run's checkpoint instead of overwriting it, and
// --resume-if-present says which of the two it did. RPUSH is the command, as it is where a
// silent restart shows: every record loaded twice is a list twice as long.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('..')
const { scaledMs } = require('./helpers/wait')

const ROWS = 3000
const BAD = 1500 // this row's list is a string key: WRONGTYPE stops the first run there

let server
let redis
let dir
let csv

useServer('pipeload-cp-restart-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

beforeEach(async () => {
  csv = path.join(dir, 'rows.csv')
  // Written line by line here, the oracle: ids 1..ROWS, each pushed once to rs:L.
  fs.writeFileSync(csv, 'id,list\n' + Array.from({ length: ROWS }, (_, i) => `${i + 1},${i + 1 === BAD ? 'bad' : 'L'}`).join('\n') + '\n')
  await redis.flushall()
})

const ids = (from, to, except = []) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i)).filter(id => !except.includes(id))
const args = cp => ['import', csv, '-u', server.url, '-c', 'RPUSH rs:{list} {id}', '-b', '100', '--checkpoint', cp]

/** A run stopped at row BAD (WRONGTYPE, on-error abort): its checkpoint is an unfinished run's. */
async function interrupted (cp) {
  await redis.set('rs:bad', 'a string')
  const first = await runCli(args(cp))
  expect(first.code, first.stderr).toBe(1)
  const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
  expect(saved).toMatchObject({ complete: false })
  expect(saved.records).toBeGreaterThanOrEqual(BAD)
  expect(saved.records).toBeLessThan(ROWS)
  return saved
}

describe('a checkpoint never restarts a run silently', () => {
  it('--resume with a mistyped checkpoint path is exit 2 naming the path; nothing is sent; the right path resumes', async () => {
    const cp = path.join(dir, 'run.ckpt')
    const saved = await interrupted(cp)
    const before = await redis.lrange('rs:L', 0, -1)
    const typo = path.join(dir, 'run.ckp')
    const r = await runCli([...args(typo), '--resume'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`pipeload: checkpoint ${typo}: no such file, so there is nothing to resume (--resume): check the path; to start from the first record, run without --resume, or pass --resume-if-present to resume when a checkpoint is there and start otherwise\n`)
    expect(await redis.lrange('rs:L', 0, -1)).toEqual(before)
    expect(fs.existsSync(typo)).toBe(false)

    const ok = await runCli([...args(cp), '--resume', '--json'])
    expect(ok.code, ok.stderr).toBe(1) // the failed row stays failed
    expect(JSON.parse(ok.stdout)).toMatchObject({ resumedFrom: saved.records, resumed: true, records: ROWS, errors: 1 })
    // Every other row pushed exactly once, in input order.
    expect(await redis.lrange('rs:L', 0, -1)).toEqual(ids(1, ROWS, [String(BAD)]))
  }, scaledMs(60_000))

  it('a run without --resume over an unfinished run\'s checkpoint is exit 2 naming both ways on; the checkpoint is kept', async () => {
    const cp = path.join(dir, 'unfinished.ckpt')
    const saved = await interrupted(cp)
    const text = fs.readFileSync(cp, 'utf8')
    const before = await redis.llen('rs:L')
    const r = await runCli(args(cp))
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`^pipeload: checkpoint ${cp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} holds an unfinished run \\(written [^)]+\\): ${saved.records.toLocaleString('en-US')} records of .*rows\\.csv loaded; run with --resume to continue it, or delete it \\(or choose another --checkpoint path\\) to start over\n$`))
    expect(await redis.llen('rs:L')).toBe(before)
    expect(fs.readFileSync(cp, 'utf8')).toBe(text)
  }, scaledMs(60_000))

  it('a finished run\'s checkpoint is replaced by a new run; an empty file at the path is taken', async () => {
    const cp = path.join(dir, 'finished.ckpt')
    const first = await runCli([...args(cp), '--json'])
    expect(first.code, first.stderr).toBe(0)
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ records: ROWS, complete: true })
    const again = await runCli([...args(cp), '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ resumedFrom: null, resumed: null, records: ROWS, loaded: ROWS })
    expect(await redis.llen('rs:L')).toBe(2 * (ROWS - 1)) // asked for twice, loaded twice

    const empty = path.join(dir, 'empty.ckpt')
    fs.writeFileSync(empty, '')
    const e = await runCli([...args(empty), '--json'])
    expect(e.code, e.stderr).toBe(0)
  }, scaledMs(60_000))

  it('--resume-if-present starts when there is no checkpoint and says so; resumes when there is one', async () => {
    const cp = path.join(dir, 'job.ckpt')
    const start = await runCli([...args(cp), '--resume-if-present'])
    expect(start.code, start.stderr).toBe(0)
    expect(start.stderr).toMatch(new RegExp(`^loaded 3,000 of 3,000 records \\(no checkpoint at ${cp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} to resume: started from the first record\\)`))
    const json = await runCli([...args(path.join(dir, 'job2.ckpt')), '--resume-if-present', '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ resumed: false, resumedFrom: null, records: ROWS })
    const again = await runCli([...args(cp), '--resume-if-present', '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ resumed: true, resumedFrom: ROWS, records: ROWS, recordsAcknowledged: 0 })
    expect(await redis.lrange('rs:L', 0, -1)).toEqual([...ids(1, ROWS, [String(BAD)]), ...ids(1, ROWS, [String(BAD)])]) // the two fresh runs, nothing from the resume
    const both = await runCli([...args(cp), '--resume', '--resume-if-present'])
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/^pipeload: --resume and --resume-if-present: use one of them/)
  }, scaledMs(60_000))

  it('the library: resume true with no checkpoint, and no resume over an unfinished one, reject with stable codes', async () => {
    const cp = path.join(dir, 'lib.ckpt')
    const opts = { url: server.url, input: csv, command: 'RPUSH rs:{list} {id}', batchSize: 100, checkpoint: cp }
    const missing = await load({ ...opts, resume: true }).catch(e => e)
    expect(missing).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_CHECKPOINT_NOT_FOUND', exitCode: 2, file: cp })
    await redis.set('rs:bad', 'a string')
    const stopped = await load(opts).catch(e => e)
    expect(stopped.code).toBe('PIPELOAD_RECORD_FAILED')
    const unfinished = await load(opts).catch(e => e)
    expect(unfinished).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_CHECKPOINT_UNFINISHED', exitCode: 2, file: cp })
    const auto = await load({ ...opts, resume: 'if-present' })
    expect(auto).toMatchObject({ resumed: true, records: ROWS, errors: 1 })
    expect(await redis.lrange('rs:L', 0, -1)).toEqual(ids(1, ROWS, [String(BAD)]))
    const bad = await load({ ...opts, resume: 'yes' }).catch(e => e)
    expect(bad).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'resume' })
  }, scaledMs(60_000))
})
