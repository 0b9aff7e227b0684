'use strict'
/* global describe, it, expect, beforeEach, afterEach */

// The rejects file across a resume, when the first run wrote failures past its checkpoint.
// A run that loses its server for good writes the failures of the batches never
// acknowledged to the rejects file after its last checkpoint (lib/run/load.js
// closeRejects): the checkpoint says how many bytes of the file it covers. A resumed run
// reads those records again, so with the same --rejects it must cut the file back to
// that size before appending (else those lines are there twice), and with another
// --rejects path it starts that file afresh (docs/resume.md "Rejects across resumes").
//
// The first run's server answers the first 1,000 commands and then nothing (it keeps the
// connections open): --timeout ends the run with batches in flight. The resume goes to the
// same server (a resume into another is refused), answering everything by then. Every 37th row is
// ragged (three fields for two), an input failure known when its batch is sent.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startFakeRedis, ordinaryReply } = require('./helpers/fake-redis')
const { load } = require('..')

const N = 3000
const ANSWERED = 1000
const ragged = i => i % 37 === 5

let dir
const closers = []
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-rejects-resume-')) })
afterEach(async () => {
  while (closers.length) await closers.pop()()
  fs.rmSync(dir, { recursive: true, force: true })
})

async function fake (answer) {
  const f = await startFakeRedis(answer)
  closers.push(() => f.close())
  return f
}

/** The first run, stopped by a server gone silent: returns the checkpoint it left; the server answers again from then on. */
async function firstRun (csv, cp, rejects) {
  let sets = 0
  let back = false
  const silent = await fake(args => back || args[0] !== 'SET' ? ordinaryReply(args) : ++sets <= ANSWERED ? '+OK\r\n' : null)
  const o = { input: csv, command: 'SET k:{id} {v}', onError: 'skip', checkpoint: cp, rejects, batchSize: 100, window: 4, port: silent.port }
  const err = await load({ ...o, timeout: '300ms', retryTimeout: '300ms' }).catch(e => e)
  back = true
  expect(err.code).toBe('PIPELOAD_TIMEOUT')
  const state = JSON.parse(fs.readFileSync(cp, 'utf8'))
  expect(state.complete).toBe(false)
  // The state to repair: failures written past what the checkpoint covers.
  expect(state.rejects.bytes).toBeGreaterThan(0)
  expect(fs.statSync(rejects).size).toBeGreaterThan(state.rejects.bytes)
  return { o, state }
}

/** Row ids in a rejects file, in order. */
function ids (file) {
  const text = fs.readFileSync(file, 'utf8')
  expect(text.endsWith('\n')).toBe(true)
  return text.slice(0, -1).split('\n').map(l => Number(JSON.parse(l).raw.split(',')[0]))
}

describe('--rejects with --resume after a run that lost its server', () => {
  let csv
  beforeEach(() => {
    csv = path.join(dir, 'rows.csv')
    fs.writeFileSync(csv, 'id,v\n' + Array.from({ length: N }, (_, i) => ragged(i) ? `${i},a,b` : `${i},v${i}`).join('\n') + '\n')
  })
  // The oracle: the ragged rows, from the rule the file was written by.
  const raggedFrom = from => Array.from({ length: N }, (_, i) => i).filter(i => i >= from && ragged(i))

  it('the same --rejects: cut back to the checkpoint, then each failure once, in order', async () => {
    const cp = path.join(dir, 'run.checkpoint')
    const rejects = path.join(dir, 'rejects.ndjson')
    const { o } = await firstRun(csv, cp, rejects)
    const summary = await load({ ...o, resume: true })
    expect(summary).toMatchObject({ records: N, errors: raggedFrom(0).length, loaded: N - raggedFrom(0).length })
    expect(ids(rejects)).toEqual(raggedFrom(0))
  })

  it('another --rejects path: a new file with the failures of the records read again only', async () => {
    const cp = path.join(dir, 'run.checkpoint')
    const { o, state } = await firstRun(csv, cp, path.join(dir, 'first.ndjson'))
    const second = path.join(dir, 'second.ndjson')
    const summary = await load({ ...o, resume: true, rejects: second })
    expect(summary).toMatchObject({ records: N, errors: raggedFrom(0).length })
    expect(ids(second)).toEqual(raggedFrom(state.records))
  })
})
