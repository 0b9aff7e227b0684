'use strict'
/* global describe, it, expect, beforeAll */

// Interrupted runs: the loader SIGKILLed or interrupted mid-load, then resumed from its
// checkpoint. Afterwards the data equals the input and the final counts add up.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { startRedis, useServer } = require('./helpers/redis-server')
const { pendingSignals, processState, scaledMs } = require('./helpers/wait')

const BIN = path.join(__dirname, '..', 'bin', 'pipeload.js')
const ROWS = 500_000
let server
let dir
let csv

useServer('pipeload-resume-', s => { server = s.srv; dir = s.tmp })

beforeAll(() => {
  csv = path.join(dir, 'rows.csv')
  const fd = fs.openSync(csv, 'w')
  let s = 'id,name,score\n'
  for (let i = 0; i < ROWS; i++) {
    s += `${i},name-${i},${(i * 7919) % 10007}\n`
    if (s.length > 1 << 20) { fs.writeSync(fd, s); s = '' }
  }
  fs.writeSync(fd, s)
  fs.closeSync(fd)
})

function start (args) {
  const child = spawn(process.execPath, [BIN, 'import', csv, '-u', server.url, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.out = ''
  child.err = ''
  child.stdout.on('data', d => { child.out += d })
  child.stderr.on('data', d => { child.err += d })
  child.done = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal })))
  return child
}

// Polls `ready` (sync or async); unlike helpers/wait.js, an error it throws (a torn
// checkpoint) fails the test at once.
async function waitFor (ready, ms = scaledMs(30_000)) {
  const end = Date.now() + ms
  while (!(await ready())) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

function checkpointRecords (file) {
  try { return JSON.parse(fs.readFileSync(file, 'utf8')).records } catch { return 0 }
}

/** Like checkpointRecords, but a checkpoint that is there and not whole JSON fails the test: writes are atomic. */
function checkpointRecordsWhole (file) {
  let text
  try { text = fs.readFileSync(file, 'utf8') } catch (err) { if (err.code === 'ENOENT') return 0; throw err }
  return JSON.parse(text).records
}

// The ids from ARGV[2] to ARGV[3] whose hash ARGV[1]..id has not its id and name (the first
// 10 found), checked on the server: one EVAL a range instead of an HGETALL a key.
const BAD_ROWS = `local bad = {}
for id = tonumber(ARGV[2]), tonumber(ARGV[3]) do
  local h = redis.call('HMGET', ARGV[1] .. id, 'id', 'name')
  if h[1] ~= tostring(id) or h[2] ~= 'name-' .. id then
    bad[#bad + 1] = id
    if #bad == 10 then break end
  end
end
return bad`

async function expectAllRows (prefix) {
  const redis = server.client()
  let n = 0
  for (let i = 0; i < ROWS; i += 25_000) {
    const last = Math.min(ROWS, i + 25_000) - 1
    const bad = await redis.eval(BAD_ROWS, 0, prefix, i, last)
    if (bad.length) expect.fail(`${prefix}${bad[0]} is ${JSON.stringify(await redis.hgetall(`${prefix}${bad[0]}`))}${bad.length > 1 ? `; ${prefix}${bad.slice(1).join(`, ${prefix}`)} are wrong too` : ''}`)
    n += last - i + 1
  }
  expect(n).toBe(ROWS)
}

describe('checkpoint and resume', () => {
  it('resumes after the loader is SIGKILLed; data and counts come out exact', async () => {
    const cp = path.join(dir, 'kill.checkpoint')
    const args = ['--key', 'k:{id}', '--checkpoint', cp, '--batch-size', '500', '--json']
    const first = start(args)
    await waitFor(() => checkpointRecords(cp) > 50_000)
    first.kill('SIGKILL')
    const { signal } = await first.done
    expect(signal).toBe('SIGKILL')
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved.records).toBeGreaterThan(50_000)
    expect(saved.records).toBeLessThan(ROWS)
    expect(saved.complete).toBe(false)

    const second = start([...args, '--resume'])
    const { code } = await second.done
    expect(second.err).toBe('')
    expect(code).toBe(0)
    const summary = JSON.parse(second.out)
    expect(summary).toMatchObject({ resumedFrom: saved.records, records: ROWS, loaded: ROWS, errors: 0 })
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ records: ROWS, loaded: ROWS, complete: true })
    await expectAllRows('k:')
  }, scaledMs(120_000))

  for (const [signal, exitCode] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    it(`on ${signal} waits for in-flight replies, writes the checkpoint, prints the summary and exits ${exitCode}`, async () => {
      const cp = path.join(dir, `${signal}.checkpoint`)
      const prefix = `${signal}:`
      const args = ['--key', `${prefix}{id}`, '--checkpoint', cp, '--batch-size', '500']
      const first = start(args)
      await waitFor(() => checkpointRecords(cp) > 20_000)
      first.kill(signal)
      const { code } = await first.done
      expect(code).toBe(exitCode)
      expect(first.err).toMatch(/aborted/)
      expect(first.err).toMatch(/loaded [\d,]+ of [\d,]+ records/)
      expect(first.err).toMatch(/--resume/)
      expect(first.err).not.toMatch(/\n\s+at /)
      const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
      // Everything the checkpoint claims is in Redis: nothing is claimed that was not acknowledged.
      const redis = server.client()
      expect(await redis.exists(`${prefix}${saved.records - 1}`)).toBe(1)

      const second = start([...args, '--resume', '--json'])
      expect((await second.done).code).toBe(0)
      expect(JSON.parse(second.out)).toMatchObject({ resumedFrom: saved.records, records: ROWS, loaded: ROWS })
      await expectAllRows(prefix)
    }, scaledMs(120_000))
  }

  it('a second Ctrl-C exits at once, even while replies are awaited', async () => {
    const frozen = await startRedis()
    const admin = frozen.client()
    try {
      const child = spawn(process.execPath, [BIN, 'import', csv, '-u', frozen.url, '--key', 'z:{id}'], { stdio: ['ignore', 'pipe', 'pipe'] })
      let err = ''
      child.stderr.on('data', d => { err += d })
      const done = new Promise(resolve => child.on('close', code => resolve(code)))
      // Keys arrive: the loader is past start-up (its signal handlers are in place) and loading.
      await waitFor(async () => await admin.dbsize() > 0)
      frozen.proc.kill('SIGSTOP') // replies stop: the first Ctrl-C waits for them
      await waitFor(() => processState(frozen.proc.pid) === 'T')
      child.kill('SIGINT')
      // Two signals sent back to back can merge into one; the second is sent once the
      // first has been delivered.
      await waitFor(() => !pendingSignals(child.pid).has(os.constants.signals.SIGINT))
      expect(child.exitCode).toBe(null)
      child.kill('SIGINT')
      // The server stays frozen, so no reply can arrive: an exit now is the second Ctrl-C's,
      // and it leaves at once, without the summary the first one would print after its replies.
      expect(await done).toBe(130)
      expect(err).not.toMatch(/loaded [\d,]+ of/)
      expect(processState(frozen.proc.pid)).toBe('T')
    } finally {
      frozen.proc.kill('SIGCONT')
      await frozen.stop()
    }
  }, scaledMs(30_000))

  it('refuses to resume over a different input', async () => {
    const cp = path.join(dir, 'other.checkpoint')
    fs.writeFileSync(cp, JSON.stringify({ version: 1, input: { name: 'other.csv', path: '/elsewhere/other.csv', size: 10, mtimeMs: 1 }, records: 5, loaded: 5, errors: 0, commands: 5, line: 6, complete: false }))
    const child = start(['--key', 'x:{id}', '--checkpoint', cp, '--resume'])
    const { code } = await child.done
    expect(code).toBe(2)
    expect(child.err).toMatch(/checkpoint .*other\.checkpoint: it was written for \/elsewhere\/other\.csv/)
  })

  it('--rejects across SIGINT, SIGKILL and --resume: one line per failed record, none twice, none torn', async () => {
    // Input failures (ragged rows) are known when a batch is sent, error replies (WRONGTYPE on
    // keys made strings beforehand) when it is answered: both kinds must follow the checkpoint.
    // Large enough that a run cannot finish between two checkpoint writes (500 ms apart) on a
    // fast machine: the loop kills a run at its first write past the last one, and at 300k
    // rows a run on a quiet machine finished the rest of the file before that (1 interrupt).
    const rows = 1_000_000
    const file = path.join(dir, 'rejects-input.csv')
    const expected = new Set()
    const redis = server.client()
    const strings = redis.pipeline()
    let s = 'id,v\n'
    for (let i = 0; i < rows; i++) {
      if (i % 997 === 5) { s += `${i},a,b\n`; expected.add(i); continue }
      if (i % 1009 === 3) { strings.set(`rj:${i}`, 'a string'); expected.add(i) }
      s += `${i},v${i}\n`
    }
    fs.writeFileSync(file, s)
    await strings.exec()
    const cp = path.join(dir, 'rejects.checkpoint')
    const rejects = path.join(dir, 'rejects.ndjson')
    const args = [file, '-u', server.url, '-c', 'HSET rj:{id} v {v}', '--on-error', 'skip', '--rejects', rejects, '--checkpoint', cp, '--batch-size', '200']
    const run = extra => {
      const child = spawn(process.execPath, [BIN, 'import', ...args, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
      child.err = ''
      child.stderr.on('data', d => { child.err += d })
      child.done = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal })))
      return child
    }
    let interrupted = 0
    let last
    for (let k = 0; ; k++) {
      const before = checkpointRecordsWhole(cp)
      const child = run(k === 0 ? [] : ['--resume'])
      let exited = false
      child.done.then(() => { exited = true })
      await waitFor(() => exited || checkpointRecordsWhole(cp) > before + 20_000, scaledMs(60_000))
      if (exited) { last = await child.done; break }
      child.kill(k % 2 === 0 ? 'SIGINT' : 'SIGKILL')
      await child.done
      interrupted++
      expect(k).toBeLessThan(40)
    }
    expect(interrupted).toBeGreaterThanOrEqual(2)
    expect(last.code).toBe(1)
    const text = fs.readFileSync(rejects, 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    const ids = text.slice(0, -1).split('\n').map(l => Number(JSON.parse(l).raw.split(',')[0]))
    expect(ids.length).toBe(new Set(ids).size) // no record twice
    expect(ids.slice().sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b))
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ records: rows, errors: expected.size, complete: true, rejects: { records: expected.size } })
  }, scaledMs(240_000))

  describe('a checkpoint that cannot be resumed is refused whole, before anything is sent', () => {
    const valid = () => ({ version: 1, input: { name: csv, path: path.resolve(csv), size: fs.statSync(csv).size, mtimeMs: fs.statSync(csv).mtimeMs }, records: 10, loaded: 9, errors: 1, commands: 9, line: 11, complete: false })
    const cases = [
      ['negative counts', c => ({ ...c, records: -5 }), /records is -5, not a whole number ≥ 0/],
      ['non-numeric counts', c => ({ ...c, loaded: 'many' }), /loaded is "many", not a whole number ≥ 0/],
      ['counts that do not add up', c => ({ ...c, loaded: 50 }), /add up to more than records/],
      ['a wrong version', c => ({ ...c, version: 7 }), /version 7 is not 1/],
      ['missing fields', c => { const { errors, commands, ...rest } = c; return rest }, /errors is missing; commands is missing/],
      ['not JSON', () => 'hello', /not JSON/],
      ['a truncated file', c => JSON.stringify(c).slice(0, 40), /not JSON/],
      ['an empty file', () => '', /not JSON: the file is empty/]
    ]
    for (const [what, edit, message] of cases) {
      it(what, async () => {
        const cp = path.join(dir, `bad-${what.replace(/\W+/g, '-')}.checkpoint`)
        const body = edit(valid())
        fs.writeFileSync(cp, typeof body === 'string' ? body : JSON.stringify(body))
        const child = start(['--key', 'never:{id}', '--checkpoint', cp, '--resume'])
        const { code } = await child.done
        expect(code).toBe(2)
        expect(child.err).toMatch(new RegExp(`^pipeload: checkpoint ${cp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a `))
        expect(child.err).toMatch(message)
        expect(child.err).not.toMatch(/NaN|--resume to continue|\n\s+at /)
        expect(child.err.trim().split('\n')).toHaveLength(1)
        expect(await server.client().exists('never:0')).toBe(0)
      })
    }

    it('a record count beyond the input', async () => {
      const cp = path.join(dir, 'beyond.checkpoint')
      fs.writeFileSync(cp, JSON.stringify({ ...valid(), records: ROWS + 10, loaded: ROWS + 10, errors: 0, commands: ROWS + 10, line: ROWS + 11 }))
      const child = start(['--key', 'beyond:{id}', '--checkpoint', cp, '--resume'])
      const { code } = await child.done
      expect(code).toBe(2)
      expect(child.err).toMatch(/checkpoint .*beyond\.checkpoint: it says 500,010 records were loaded, but the input has only 500,000/)
      expect(child.err).not.toMatch(/NaN|--resume to continue|\n\s+at /)
    })
  })
})

