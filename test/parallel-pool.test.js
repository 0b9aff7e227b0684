'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// The parse workers of a run (--workers n ≥ 2) are started once and given to each input in
// turn (lib/threads/pool.js WorkerPool, owned by the run), not started again for every input:
// 5,000 small files took 433 s with --workers 2 against 4.5 s without. Counted here by thread
// ids, which Node hands out one per thread started in the process, in order; a pool used for
// one run after another through its API (as a caller owning it would) takes each run's options.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { dryRunIntoMemory } = require('./helpers/dry-run')
const { respCommand } = require('./helpers/resp-model')
const { Worker } = require('node:worker_threads')
const { WorkerPool, liveWorkers } = require('../lib/threads/pool')
const { openParallelBatches } = require('../lib/threads/chunks')
const { openWorkerBatches } = require('../lib/threads/whole')
const { normalizeLoadOptions } = require('../lib/run/options')
const { describeInput, describeInputs } = require('../lib/read/input')

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

// A pool serves one run after another when its owner keeps it (through its API, as the CLI
// keeps one for every input of a run): each run's own options reach its workers, and nothing
// of the run before (its templates, its slot map) stays. load() owns a pool of its own and
// ends it with the run: nothing is left running for the next.
describe('a pool across runs, and the end of a run\'s pool', () => {
  // 3 CSV files of 300 rows, each cut into several 2 KiB chunks.
  const rows = k => Array.from({ length: 300 }, (_, i) => ({ id: `${k}-${i}`, v: `value ${i} of ${k}` }))
  const files = [0, 1, 2].map(k => {
    const file = path.join(tmp, `run-${k}.csv`)
    fs.writeFileSync(file, 'id,v\n' + rows(k).map(r => `${r.id},${r.v}`).join('\n') + '\n')
    return file
  })

  /** A run of `options` over `files` by n workers of `pool`, as load() runs them: the bytes encoded. */
  async function poolRun (pool, n, options) {
    const o = normalizeLoadOptions({ input: files, dryRun: 'resp', workers: n, chunkSize: 2048, ...options })
    const out = []
    let before = 0
    for (const desc of describeInputs(o).inputs) {
      const src = await openParallelBatches(desc, o, { n, before, pool })
      for await (const b of src.batches) {
        out.push(Buffer.from(b.buf))
        before += b.records
        b.release()
      }
    }
    return Buffer.concat(out)
  }

  it("a pool's second run takes its workers, with its own templates' commands; load() leaves no worker running", async () => {
    const pool = new WorkerPool()
    try {
      let first = await nextThreadId()
      const a = await poolRun(pool, 2, { commands: ['SET a:{id} {v}'] })
      expect((await nextThreadId()) - first - 1).toBe(2)
      expect(a.equals(Buffer.concat([0, 1, 2].flatMap(k => rows(k).map(r => respCommand(['SET', `a:${r.id}`, r.v])))))).toBe(true)
      // The 2 workers taken, 2 more started. Other templates, {$n} (records kept until their
      // number is known), on-error abort: the first run's options must not stay.
      first = await nextThreadId()
      const b = await poolRun(pool, 4, { commands: ['HSET b:{id} n {$n} v {v}'], onError: 'abort' })
      expect((await nextThreadId()) - first - 1).toBe(2)
      // The commands as the RESP spec writes them (test/helpers/resp-model.js), from the rows as made here.
      let n = 0
      const want = Buffer.concat([0, 1, 2].flatMap(k => rows(k).map(r => respCommand(['HSET', `b:${r.id}`, 'n', String(++n), 'v', r.v]))))
      if (!b.equals(want)) expect.fail(`${b.length} bytes written, not the ${want.length} of HSET b:{id} n {$n} v {v} for 900 rows`)
      expect(liveWorkers().size).toBeGreaterThanOrEqual(4)
    } finally {
      await pool.close()
    }
    expect(liveWorkers().size).toBe(0)
    // load() ends its own pool with the run: no worker is left running (a CLI exits at once).
    const c = await dryRun({ input: files, commands: ['SET c:{id} {v}'], workers: 2, chunkSize: 2048 })
    expect(c.error).toBe(null)
    expect(c.workers).toBe(2)
    expect(liveWorkers().size).toBe(0)
  })

  // For a cluster the workers hash each command's slot and, told each slot's master (owners),
  // group a batch's commands by master. A run's workers start from no slot map: taking over
  // the one of the cluster run before (another topology) they would lay batches out by it.
  // The sender routes by its own map whatever the layout (lib/encode/group.js), so what reaches
  // each master is the same either way: this checks the workers' state, not the wire.
  it('a run does not keep the slot map its workers were told by the run before', async () => {
    const { SLOTS } = require('../lib/encode/slots')
    const pool = new WorkerPool()
    /** A cluster run's batches of files[0] in 2 workers of the pool, told `owners` once open (null: none). */
    async function clusterRead (owners) {
      const o = normalizeLoadOptions({ input: files[0], key: 'g:{id}', dryRun: 'resp', workers: 2, chunkSize: 512, batchSize: 20 })
      const src = await openParallelBatches(describeInput(o), o, { n: 2, slots: true, pool })
      if (owners) src.useSlots(owners)
      const batches = []
      for await (const b of src.batches) batches.push(b)
      return batches
    }
    try {
      const two = new Uint16Array(SLOTS).map((_, s) => s % 2) // two masters, every other slot
      const told = await clusterRead(two)
      expect(told.some(b => b.stops), 'batches grouped by master once the owners are told').toBe(true)
      const first = await nextThreadId()
      const next = await clusterRead(null)
      expect((await nextThreadId()) - first - 1).toBe(0) // the pool's workers taken
      expect(next.length).toBeGreaterThan(5)
      expect(next.every(b => b.slots && b.slots.length === b.cmds), 'every batch hashed').toBe(true)
      expect(next.filter(b => b.stops).length, 'batches grouped by the run before\'s masters').toBe(0)
    } finally {
      await pool.close()
    }
  })
})

// An input read whole by one worker (--workers 1; a JSON document, which cannot be cut) takes a
// worker of the run's pool too (lib/threads/whole.js), rather than starting one of its
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

  /** Threads started by a dry run of `options`, and its result. */
  async function counted (options) {
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

  it('an input read whole and stopped in the middle leaves its worker to the next input, which reads its own; a stopped run ends its pool', async () => {
    const big = path.join(tmp, 'big.json')
    fs.writeFileSync(big, JSON.stringify(Array.from({ length: 20000 }, (_, i) => ({ id: i, v: i === 5000 ? null : `v${i}` }))))
    const stopped = await counted({ input: [big, ...mixed], commands: ['SET s:{id} {v}'], workers: 1, onError: 'abort', batchSize: 100 })
    expect(stopped.started).toBe(1)
    expect(stopped.error.code).toBe('PIPELOAD_RECORD_FAILED')
    expect(stopped.summary.records).toBe(5001)
    expect(liveWorkers().size).toBe(0)
    // The same through a pool kept by its owner: the big document left after 3 batches, then
    // the 90 inputs by the same worker, with the bytes of --workers 0.
    const pool = new WorkerPool()
    try {
      const ob = normalizeLoadOptions({ input: big, commands: ['SET s:{id} {v}'], dryRun: 'resp', workers: 1, batchSize: 100 })
      const src = await openWorkerBatches(describeInput(ob), ob, { pool })
      let taken = 0
      for await (const b of src.batches) {
        b.release()
        if (++taken === 3) break // the input closed in the middle of its read
      }
      const om = normalizeLoadOptions({ ...o, input: mixed, dryRun: 'resp', workers: 1 })
      const first = await nextThreadId()
      const out = []
      let before = 0
      for (const desc of describeInputs(om).inputs) {
        const next = await openWorkerBatches(desc, om, { before, pool })
        for await (const b of next.batches) {
          out.push(Buffer.from(b.buf))
          before += b.records
          b.release()
        }
      }
      expect((await nextThreadId()) - first - 1).toBe(0) // the pool's worker taken
      const base = await dryRun({ ...o, input: mixed, workers: 0 })
      expect(Buffer.concat(out).equals(base.bytes)).toBe(true)
    } finally {
      await pool.close()
    }
  })
})
