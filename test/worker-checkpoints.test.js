'use strict'
/* global describe, it, expect, beforeAll */

// What the parse workers (--workers n) put in and take from a checkpoint, checked against
// the input the test wrote, not against another run:
// - a run resumed with the checkpoint's count in the middle of a CSV chunk or of a Parquet
//   row group numbers its records ({$n}) as the whole run does: record i (0-based) is i + 1,
//   in the chunk or group holding the first record not skipped and in every one after it;
// - the checkpoint's `next` (where a resumed run may start reading: an http(s) input's Range
//   request) and the summary's `stoppedAt` (where the first record not sent starts) name the
//   byte offset and line of one record, for a record in a chunk other than the first.
// Each case has many chunks or row groups and several workers, so that the records to check
// are in chunks and groups other than the first.

const fs = require('node:fs')
const path = require('node:path')
const { PassThrough } = require('node:stream')
const { useServer } = require('./helpers/redis-server')
const { writeQuery, rowGroupsOf } = require('./helpers/parquet')
const { load } = require('..')

let server
let redis
let dir

useServer('pipeload-worker-checkpoints-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

/** values[i]: the value of `${prefix}${i}` (null when absent), 10,000 keys per MGET. */
async function values (prefix, rows) {
  const out = []
  for (let i = 0; i < rows; i += 10_000) {
    const keys = Array.from({ length: Math.min(10_000, rows - i) }, (_, j) => `${prefix}${i + j}`)
    out.push(...await redis.mget(keys))
  }
  return out
}

/**
 * A checkpoint of `file` as a run that had `records` of it acknowledged would leave: the one a
 * whole run wrote (its format and the file's identity), cut back to `records`.
 */
let checkpoints = 0
async function checkpointAt (file, records, options) {
  const cp = path.join(dir, `${path.basename(file)}-${++checkpoints}.checkpoint`)
  const whole = await load({ url: server.url, input: file, command: 'SET whole:{id} 1', checkpoint: cp, ...options })
  expect(whole.records).toBeGreaterThan(records)
  const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
  const { next, line, ...rest } = saved // where to read on from: the whole run's, not this prefix's
  fs.writeFileSync(cp, JSON.stringify({ ...rest, records, loaded: records, commands: records, errors: 0, complete: false }))
  return cp
}

/** Resumes from `cp` with SET <prefix>{id} {$n}; every record before `from` skipped, each after it numbered i + 1. */
async function expectNumberedFrom (file, cp, from, rows, prefix, options) {
  const command = `SET ${prefix}{id} {$n}`
  // As a run with this command would have left it: a resume with other commands is refused.
  fs.writeFileSync(cp, JSON.stringify({ ...JSON.parse(fs.readFileSync(cp, 'utf8')), templates: [command] }))
  const summary = await load({ url: server.url, input: file, command, checkpoint: cp, resume: true, ...options })
  expect(summary).toMatchObject({ resumedFrom: from, records: rows, errors: 0 })
  expect(summary.workers).toBe(options.workers)
  const got = await values(prefix, rows)
  for (let i = 0; i < rows; i++) {
    const want = i < from ? null : String(i + 1)
    if (got[i] !== want) expect.fail(`record ${i}: {$n} is ${got[i]}, expected ${want} (resumed from ${from})`)
  }
}

describe('--resume in parse workers: {$n} goes on from the checkpoint', () => {
  it('CSV: the checkpoint in the middle of a chunk (many chunks, 2 and 3 workers)', async () => {
    const rows = 8_000
    const file = path.join(dir, 'numbered.csv')
    fs.writeFileSync(file, 'id,v\n' + Array.from({ length: rows }, (_, i) => `${i},v${i}`).join('\n') + '\n')
    const chunkSize = 2048 // ~200 records a chunk: 40 chunks
    const from = 3_333 // not at a chunk's start: the chunk holding it drops its first records
    const cp = await checkpointAt(file, from, { workers: 2, chunkSize })
    const copy = cp + '.copy'
    fs.copyFileSync(cp, copy) // the same checkpoint for the second resume
    await expectNumberedFrom(file, cp, from, rows, 'c2:', { workers: 2, chunkSize, batchSize: 100 })
    await expectNumberedFrom(file, copy, from, rows, 'c3:', { workers: 3, chunkSize: 700, batchSize: 100 })
  })

  it('Parquet: the checkpoint in the middle of a row group (row groups after it numbered on)', async () => {
    const rows = 5 * 2048
    const file = path.join(dir, 'numbered.parquet')
    await writeQuery(file, `SELECT i::BIGINT AS id, 'v' || i AS v FROM range(${rows}) t(i)`, 'COMPRESSION zstd, ROW_GROUP_SIZE 2048')
    const groups = await rowGroupsOf(file)
    expect(groups.length).toBeGreaterThanOrEqual(4)
    const from = groups[0].rows + 1000 // 1,000 rows into the second group: they are dropped, the groups after it are read whole
    const cp = await checkpointAt(file, from, { workers: 2 })
    await expectNumberedFrom(file, cp, from, rows, 'p2:', { workers: 2, batchSize: 100 })
  })
})

describe('where a run in parse workers may resume, or stopped', () => {
  // Records of one line each, of different lengths: record i starts at line i + 2.
  const rows = 20_000
  const lines = Array.from({ length: rows }, (_, i) => `${i},${'x'.repeat(i % 13)}`)
  const starts = [] // byte offset of record i, counted here
  let at = Buffer.byteLength('id,v\n')
  for (const l of lines) { starts.push(at); at += Buffer.byteLength(l) + 1 }

  it('the checkpoint\'s `next` names the offset and line where its record starts, in a chunk after the first', async () => {
    const file = path.join(dir, 'next.csv')
    fs.writeFileSync(file, 'id,v\n' + lines.join('\n') + '\n')
    for (const workers of [2, 3]) {
      const cp = path.join(dir, `next-${workers}.checkpoint`)
      // No {$n} nor {$line}: chunks are encoded as soon as they are parsed, their lines moved after.
      const s = await load({ url: server.url, input: file, command: 'SET n:{id} {v}', checkpoint: cp, workers, chunkSize: 4096, batchSize: 100 })
      expect(s.workers).toBe(workers)
      const { next } = JSON.parse(fs.readFileSync(cp, 'utf8'))
      expect(next.records).toBeGreaterThan(rows / 2) // the last batch's start: far past the first chunk
      expect(next, `--workers ${workers}`).toMatchObject({ offset: starts[next.records], line: next.records + 2 })
    }
  })

  it('a run stopped by max-errors: the summary\'s stoppedAt is the offset and line of one record', async () => {
    const bad = 15_000 // a field too many: rejected, and with max-errors 0 the run stops after it
    const file = path.join(dir, 'stop.csv')
    fs.writeFileSync(file, 'id,v\n' + lines.map((l, i) => i === bad ? l + ',extra' : l).join('\n') + '\n')
    const shifted = starts.map((s, i) => i > bad ? s + ','.length + 'extra'.length : s)
    const err = await load({ input: file, key: 's:{id}', dryRun: 'resp', output: new PassThrough().resume(), onError: 'skip', maxErrors: 0, workers: 2, chunkSize: 4096, batchSize: 100 }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_TOO_MANY_ERRORS')
    const { stoppedAt } = err.summary
    const r = shifted.indexOf(stoppedAt.offset)
    expect(r, `stoppedAt ${JSON.stringify(stoppedAt)}: the start of a record after the failed one`).toBeGreaterThan(bad)
    expect(stoppedAt.line).toBe(r + 2)
  })
})
