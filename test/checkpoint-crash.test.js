'use strict'
/* global describe, it, expect */

// A crash while the checkpoint is being written. The README promises the checkpoint is
// "replaced atomically (write, then rename)": a kill -9 at any moment leaves the previous
// checkpoint or the next one, never a torn file, and --resume then loads every record,
// those the checkpoint counts exactly once. The kill is made to land inside a checkpoint
// write every time by a preloaded fs hook (helpers/crash-at-checkpoint.js), not by timing.
// Each record is an INCR of its own counter, so the counters show how often it was sent.

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { BIN, BASE_ENV } = require('./helpers/run-cli')
const { recordCounts } = require('./helpers/counters')
const { scaledMs } = require('./helpers/wait')

const HOOK = path.join(__dirname, 'helpers', 'crash-at-checkpoint.js')
const ROWS = 60_000
let server
let redis
let dir
let csv

useServer('pipeload-cp-crash-', s => {
  server = s.srv
  redis = s.redis
  dir = s.tmp
  csv = path.join(dir, 'rows.csv')
  fs.writeFileSync(csv, 'id,v\n' + Array.from({ length: ROWS }, (_, i) => `${i},v${i}`).join('\n') + '\n')
})

function pipeload (args, { preload, env = {} } = {}) {
  const argv = [...(preload ? ['--require', preload] : []), BIN, 'import', csv, '-u', server.url, ...args]
  const child = spawn(process.execPath, argv, { env: { ...BASE_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', d => { out += d })
  child.stderr.on('data', d => { err += d })
  return new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal, out, err })))
}

const counts = prefix => recordCounts(redis, prefix, ROWS)

describe('SIGKILL while the checkpoint is written, then --resume', () => {
  // The worker thread skips the checkpointed records with its own copy of the loop.
  const cases = [
    ['half-way through writing it', 'write', []],
    ['after writing it, before the rename', 'rename', []],
    ['half-way through writing it, resumed with --worker', 'write', ['--workers', '1']],
    // The parallel parse drops the checkpointed records in each chunk's worker (the
    // checkpoint falls mid-chunk: 100-record batches, ~1,400-record chunks).
    ['half-way through writing it, loaded and resumed with --workers 2', 'write', ['--workers', '2'], ['--workers', '2', '--chunk-size', '16KiB']]
  ]
  for (const [when, at, resumeWith, loadWith = []] of cases) {
    it(`killed ${when}: the checkpoint on disk is the previous one, whole; the resumed run loads every record, the checkpointed ones exactly once`, async () => {
      const name = at + resumeWith.join('') + loadWith.join('')
      const cp = path.join(dir, `${name}.checkpoint`)
      const log = path.join(dir, `${name}.log`)
      const prefix = `${name}:`
      // Batches of 100 with window 1: the first checkpoint comes after the first batch, so
      // the second (the one killed) is never the first and always has one before it.
      const args = ['-c', `INCR ${prefix}{id}`, '--checkpoint', cp, '--batch-size', '100', '--window', '1', '--json', ...loadWith]
      const first = await pipeload(args, { preload: HOOK, env: { CRASH_CHECKPOINT: cp, CRASH_NTH: '2', CRASH_AT: at, CRASH_LOG: log } })
      expect(first.signal, first.err).toBe('SIGKILL')
      const bodies = JSON.parse(fs.readFileSync(log, 'utf8'))
      expect(bodies).toHaveLength(2) // the hook crashed in the second write, not later
      const previous = JSON.parse(bodies[0])
      const next = JSON.parse(bodies[1])
      expect(previous.records).toBeGreaterThan(0)
      expect(next.records).toBeGreaterThan(previous.records)

      // Never a torn checkpoint: the file holds exactly the previous state.
      expect(fs.readFileSync(cp, 'utf8')).toBe(bodies[0])
      // The kill did land inside the write: what it was writing is on disk beside it.
      const tmps = fs.readdirSync(dir).filter(f => f.startsWith(`.${path.basename(cp)}`))
      expect(tmps).toHaveLength(1)
      const torn = fs.readFileSync(path.join(dir, tmps[0]), 'utf8')
      if (at === 'write') expect(torn).toBe(bodies[1].slice(0, Buffer.byteLength(bodies[1]) >> 1))
      else expect(torn).toBe(bodies[1])
      // Nothing the checkpoint counts was left unsent.
      const before = await counts(prefix)
      for (let i = 0; i < previous.records; i++) if (before[i] !== 1) expect.fail(`record ${i} ran ${before[i]} times before the resume`)

      const second = await pipeload([...args, '--resume', ...resumeWith])
      expect(second.err).toBe('')
      expect(second.code).toBe(0)
      expect(JSON.parse(second.out)).toMatchObject({ resumedFrom: previous.records, records: ROWS, loaded: ROWS, errors: 0 })
      expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ records: ROWS, loaded: ROWS, errors: 0, complete: true })
      // Every record loaded; those the checkpoint counted exactly once; the rest at least
      // once and at most twice (acknowledged after the checkpoint, then re-sent: at-least-once).
      const after = await counts(prefix)
      for (let i = 0; i < ROWS; i++) {
        const ok = i < previous.records ? after[i] === 1 : after[i] === 1 || after[i] === 2
        if (!ok) expect.fail(`record ${i} ran ${after[i]} times (checkpoint at ${previous.records})`)
      }
    }, scaledMs(60_000))
  }
})
