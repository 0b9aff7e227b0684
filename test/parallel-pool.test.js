'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// The parse workers of a run (--workers n ≥ 2) are started once and given to each input in
// turn (lib/encode/parallel.js WorkerPool), not started again for every input: 5,000 small
// files took 433 s with --workers 2 against 4.5 s without. Counted here by thread ids, which
// Node hands out one per thread started in the process, in order.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { dryRunIntoMemory } = require('./helpers/dry-run')
const { Worker } = require('node:worker_threads')

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-pool-'))

/** The id the next thread started in this process gets. */
async function nextThreadId () {
  const w = new Worker('', { eval: true })
  const id = w.threadId
  await w.terminate()
  return id + 1
}

/** A dry run into memory: { bytes, summary, error }. */
async function dryRun (options) {
  const { bytes, summary, error } = await dryRunIntoMemory(options)
  const { durationMs, recordsPerSec, peakRssBytes, batches, workers, ...rest } = summary
  return { bytes, summary: rest, workers, error: error && { code: error.code, message: error.message } }
}

/**
 * 60 inputs: CSV, TSV and NDJSON, some with rejected records, one whose header comes after
 * more than a chunk of blank lines (the parallel parse reads it on this thread from its
 * start: its workers' late messages must not reach the next input), one read by 2 chunks.
 */
function inputs () {
  const files = []
  for (let k = 0; k < 60; k++) {
    const format = ['csv', 'tsv', 'ndjson'][k % 3]
    const rows = []
    for (let i = 0; i < 20 + k; i++) {
      const id = `${k}-${i}`
      const bad = i === 7 && k % 4 === 1
      if (format === 'ndjson') rows.push(bad ? '{"id": oops}' : JSON.stringify({ id, v: `v ${i}` }))
      else if (format === 'tsv') rows.push(bad ? `${id}\tx\ty` : `${id}\tv ${i}`)
      else rows.push(bad ? `${id},x,y` : `${id},"v, ${i}${i % 5 === 0 ? '\nsecond line' : ''}"`)
    }
    const lead = k === 30 ? '\n'.repeat(5000) : ''
    const head = format === 'csv' ? 'id,v\n' : format === 'tsv' ? 'id\tv\n' : ''
    const file = path.join(tmp, `in-${String(k).padStart(2, '0')}.${format}`)
    fs.writeFileSync(file, lead + head + rows.join('\n') + '\n')
    files.push(file)
  }
  return files
}

describe('parse workers across the inputs of a run', () => {
  const files = inputs()
  const o = { input: files, commands: ['SET r:{id} {$n}|{$line}|{v}|{$file}'], onError: 'skip', chunkSize: 4096, maxFailures: 1000 }

  it('--workers 2 starts 2 threads for 60 inputs, and writes the bytes, counts and failures of --workers 0', async () => {
    const base = await dryRun({ ...o, workers: 0 })
    expect(base.error).toBe(null)
    expect(base.summary.errors).toBe(15)
    const first = await nextThreadId()
    const got = await dryRun({ ...o, workers: 2 })
    const started = (await nextThreadId()) - first - 1 // less the probe's own
    expect(started).toBe(2)
    expect(got.workers).toBe(2)
    expect(got.error).toBe(null)
    expect(got.summary).toEqual(base.summary)
    if (!got.bytes.equals(base.bytes)) expect.fail(`${got.bytes.length} bytes written, not the ${base.bytes.length} of workers 0`)
  })

  it('on-error abort stops at the first bad record with the same bytes; the next run starts its own 4 threads', async () => {
    const base = await dryRun({ ...o, onError: 'abort', workers: 0 })
    expect(base.error.code).toBe('PIPELOAD_INPUT_INVALID')
    const first = await nextThreadId()
    const got = await dryRun({ ...o, onError: 'abort', workers: 4 })
    expect((await nextThreadId()) - first - 1).toBe(4)
    expect(got.error).toEqual(base.error)
    expect(got.summary).toEqual(base.summary)
    expect(got.bytes.equals(base.bytes)).toBe(true)
  })
})
