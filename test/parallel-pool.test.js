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
const { respCommand } = require('./helpers/resp-model')
const { Worker } = require('node:worker_threads')
const { IDLE_MS, endIdleWorkers } = require('../lib/encode/parallel')
const { workerThreads } = require('./helpers/live-workers')

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
  rest.files = rest.files.map(({ fallback, ...f }) => f) // a fallback to one thread: test/parallel-fallback.test.js
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
    await endIdleWorkers() // a run of the file before this one, in this process, may have left some
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
    await endIdleWorkers() // the first test's, else taken (the next describe)
    const first = await nextThreadId()
    const got = await dryRun({ ...o, onError: 'abort', workers: 4 })
    expect((await nextThreadId()) - first - 1).toBe(4)
    expect(got.error).toEqual(base.error)
    expect(got.summary).toEqual(base.summary)
    expect(got.bytes.equals(base.bytes)).toBe(true)
  })
})

// A run leaves its parse workers idle for IDLE_MS; the process's next run takes them, with its
// own options, instead of starting new ones (a service calling load() again and again).
describe('parse workers across the runs of a process', () => {
  // 3 CSV files of 300 rows, each cut into several 2 KiB chunks.
  const rows = k => Array.from({ length: 300 }, (_, i) => ({ id: `${k}-${i}`, v: `value ${i} of ${k}` }))
  const files = [0, 1, 2].map(k => {
    const file = path.join(tmp, `run-${k}.csv`)
    fs.writeFileSync(file, 'id,v\n' + rows(k).map(r => `${r.id},${r.v}`).join('\n') + '\n')
    return file
  })
  const { running, referenced } = workerThreads()

  it("a run takes the workers of the run before it, and writes its own templates' commands; workers idle for IDLE_MS end", async () => {
    await endIdleWorkers()
    let first = await nextThreadId()
    const a = await dryRun({ input: files, commands: ['SET a:{id} {v}'], workers: 2, chunkSize: 2048 })
    expect(a.error).toBe(null)
    expect((await nextThreadId()) - first - 1).toBe(2)
    // Idle, they keep no process alive: a CLI exits once its run is done, not IDLE_MS later.
    expect([...running].length).toBe(2)
    expect([...referenced].length).toBe(0)
    // At once: the 2 idle workers are taken, 2 more started. Other templates, {$n} (records
    // kept until their number is known), on-error abort: the first run's options must not stay.
    first = await nextThreadId()
    const b = await dryRun({ input: files, commands: ['HSET b:{id} n {$n} v {v}'], workers: 4, chunkSize: 2048, onError: 'abort' })
    expect((await nextThreadId()) - first - 1).toBe(2)
    expect(b.error).toBe(null)
    expect(b.workers).toBe(4)
    // The commands as the RESP spec writes them (test/helpers/resp-model.js), from the rows as made here.
    let n = 0
    const want = Buffer.concat([0, 1, 2].flatMap(k => rows(k).map(r => respCommand(['HSET', `b:${r.id}`, 'n', String(++n), 'v', r.v]))))
    if (!b.bytes.equals(want)) expect.fail(`${b.bytes.length} bytes written, not the ${want.length} of HSET b:{id} n {$n} v {v} for 900 rows`)
    // Left idle, unreferenced: ended IDLE_MS later, and the next run starts its own.
    expect([...running].length).toBeGreaterThanOrEqual(4)
    await new Promise(resolve => setTimeout(resolve, IDLE_MS + 500))
    expect([...running].length).toBe(0)
    first = await nextThreadId()
    const c = await dryRun({ input: files, commands: ['SET c:{id} {v}'], workers: 2, chunkSize: 2048 })
    expect(c.error).toBe(null)
    expect((await nextThreadId()) - first - 1).toBe(2)
    await endIdleWorkers()
  })

  // For a cluster the workers hash each command's slot and, told each slot's master (owners),
  // group a batch's commands by master. A run's workers start from no slot map: taking over
  // the one of the cluster run before (another topology) they would lay batches out by it.
  // The sender routes by its own map whatever the layout (lib/encode/group.js), so what reaches
  // each master is the same either way: this checks the workers' state, not the wire.
  it('a run does not keep the slot map its workers were told by the run before', async () => {
    const { WorkerPool, openParallelBatches } = require('../lib/encode/parallel')
    const { normalizeLoadOptions } = require('../lib/run/options')
    const { describeInput } = require('../lib/read/input')
    const { SLOTS } = require('../lib/encode/slots')
    /** A cluster run's batches of files[0] in 2 workers, told `owners` once open (null: none). */
    async function clusterRead (owners) {
      const o = normalizeLoadOptions({ input: files[0], key: 'g:{id}', dryRun: 'resp', workers: 2, chunkSize: 512, batchSize: 20 })
      const pool = new WorkerPool(o)
      const src = await openParallelBatches(describeInput(o), o, 0, 2, true, 0, pool)
      if (owners) src.useSlots(owners)
      const batches = []
      for await (const b of src.batches) batches.push(b)
      await pool.end() // its workers left idle, for the next run
      return batches
    }
    await endIdleWorkers()
    const two = new Uint16Array(SLOTS).map((_, s) => s % 2) // two masters, every other slot
    const told = await clusterRead(two)
    expect(told.some(b => b.stops), 'batches grouped by master once the owners are told').toBe(true)
    const first = await nextThreadId()
    const next = await clusterRead(null)
    expect((await nextThreadId()) - first - 1).toBe(0) // the idle workers taken
    expect(next.length).toBeGreaterThan(5)
    expect(next.every(b => b.slots && b.slots.length === b.cmds), 'every batch hashed').toBe(true)
    expect(next.filter(b => b.stops).length, 'batches grouped by the run before\'s masters').toBe(0)
    await endIdleWorkers()
  })
})

// An input read whole by one worker (--workers 1; a JSON document, which cannot be cut) takes a
// worker of the run's pool too (lib/encode/worker-input.js), rather than starting one of its
// own per input: 200 small files took 17 s with --workers 1 against 0.5 s with --workers 0.
describe('inputs read whole by one parse worker', () => {
  // 30 JSON documents, each between two CSV files: 90 inputs; a bad record in the 5th document.
  const mixed = []
  for (let k = 0; k < 30; k++) {
    const docs = Array.from({ length: 15 + k }, (_, i) => ({ id: `j${k}-${i}`, v: `doc ${i}`, n: i }))
    const doc = path.join(tmp, `doc-${String(k).padStart(2, '0')}.json`)
    const text = JSON.stringify(docs, null, 2) // a record per line or more: {$line} tells them apart
    fs.writeFileSync(doc, k === 4 ? text.replace('"doc 7"', '"doc 7", oops') : text)
    const csv = k => path.join(tmp, `around-${String(k).padStart(2, '0')}.csv`)
    for (const c of [2 * k, 2 * k + 1]) fs.writeFileSync(csv(c), 'id,v\n' + Array.from({ length: 10 + c }, (_, i) => `c${c}-${i},"v, ${i}"`).join('\n') + '\n')
    mixed.push(csv(2 * k), doc, csv(2 * k + 1))
  }
  const o = { commands: ['SET w:{id} {$n}|{$line}|{v}|{$file}'], onError: 'skip', maxFailures: 1000 }

  /** Threads started by a dry run of `options` (the idle ones of earlier runs ended first), and its result. */
  async function counted (options) {
    await endIdleWorkers()
    const first = await nextThreadId()
    const got = await dryRun(options)
    return { started: (await nextThreadId()) - first - 1, ...got }
  }

  it('--workers 1 starts 1 thread for 60 inputs, and writes the bytes, counts and failures of --workers 0', async () => {
    const files = inputs()
    const base = await dryRun({ ...o, input: files, workers: 0 })
    expect(base.summary.errors).toBe(15)
    const got = await counted({ ...o, input: files, workers: 1 })
    expect(got.started).toBe(1)
    expect(got.workers).toBe(1)
    expect(got.error).toBe(null)
    expect(got.summary).toEqual(base.summary)
    if (!got.bytes.equals(base.bytes)) expect.fail(`${got.bytes.length} bytes written, not the ${base.bytes.length} of workers 0`)
  })

  for (const workers of [1, 2]) {
    it(`JSON documents between CSV files, --workers ${workers}: ${workers} thread(s) for 90 inputs, the bytes of --workers 0; on-error abort stops where it does`, async () => {
      for (const onError of ['skip', 'abort']) {
        const base = await dryRun({ ...o, input: mixed, workers: 0, onError })
        expect(base.error?.code ?? null).toBe(onError === 'abort' ? 'PIPELOAD_INPUT_INVALID' : null)
        const got = await counted({ ...o, input: mixed, workers, onError, chunkSize: 4096 })
        expect(got.started).toBe(workers)
        expect(got.error).toEqual(base.error)
        expect(got.summary).toEqual(base.summary)
        if (!got.bytes.equals(base.bytes)) expect.fail(`${got.bytes.length} bytes written, not the ${base.bytes.length} of workers 0 (on-error ${onError})`)
      }
    })
  }

  it('a run stopped in the middle of an input read whole leaves its worker to the next run, which reads its own input', async () => {
    const big = path.join(tmp, 'big.json')
    fs.writeFileSync(big, JSON.stringify(Array.from({ length: 20000 }, (_, i) => ({ id: i, v: i === 5000 ? null : `v${i}` }))))
    const stopped = await counted({ input: [big, ...mixed], commands: ['SET s:{id} {v}'], workers: 1, onError: 'abort', batchSize: 100 })
    expect(stopped.started).toBe(1)
    expect(stopped.error.code).toBe('PIPELOAD_RECORD_FAILED')
    expect(stopped.summary.records).toBe(5001)
    const first = await nextThreadId()
    const next = await dryRun({ ...o, input: mixed, workers: 1 })
    expect((await nextThreadId()) - first - 1).toBe(0) // the idle worker taken
    const base = await dryRun({ ...o, input: mixed, workers: 0 })
    expect(next.summary).toEqual(base.summary)
    expect(next.bytes.equals(base.bytes)).toBe(true)
    await endIdleWorkers()
  })
})
