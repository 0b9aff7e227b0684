'use strict'

const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { reviveError } = require('./thread-errors')
const { workerOptions } = require('./worker-batches')
const { readerFields } = require('../read/input')

// The parse workers of a run and what an input read by them shares (./parallel.js: inputs cut
// into chunks; ./parquet-parallel.js: Parquet row groups; ./worker-input.js: an input read
// whole by one worker), and the chunk memory they are handed without a copy.

const WORKER = path.join(__dirname, 'chunk-worker.js')
// Each worker's young generation, at most. V8's default (48 MB) grows into after a couple of
// seconds and costs each worker ~30 MB of RSS more for no measurable speed (1M-row CSV,
// --workers 2: 233 MB peak RSS with the default, 205 MB with 16; the same times).
const YOUNG_GENERATION_MB = 16

// Parse workers a run has ended are kept this long for the process's next run (a service
// calling load() over and over, a test suite), then ended. They keep the process alive no
// longer than that: an idle worker is unref()'d (a CLI exits as soon as its run is done).
// Starting a worker costs ~60-90 ms of CPU; an idle one ~10-15 MB of RSS.
const IDLE_MS = 1000
const idle = [] // workers ({ worker, load, pool, idleTimer }) of ended runs, the most recently ended last
let inputs = 0 // inputs given workers so far, by every run: messages carry the one they were sent for

/**
 * The parse workers of a run: taken when an input first needs them (workers an earlier run
 * of the process left idle first, then new ones), given to each input in turn (an 'input'
 * message resets a worker's state: chunk-worker.js; a worker's first input of a run also
 * brings the run's options), left idle for the next run when the run ends.
 * Starting n workers costs ~60-80 ms, which for many small inputs was most of the run.
 */
class WorkerPool {
  constructor (o) {
    this.options = { ...workerOptions(o), fields: readerFields(o) }
    this.workers = []
    this.owner = null // the Parallel reading now
    this.memory = null // the inputs' chunk memory (ChunkMemory), one after another
  }

  /**
   * Chunk memory for an input cut into chunks of `chunkSize`, `max` of them at most in flight:
   * the pool's, used by one input after another. Each input's own was dropped with it, and
   * its SharedArrayBuffers freed only when this thread's garbage collector (which seldom runs
   * here) got round to them: RSS grew with the number of inputs.
   */
  chunkMemory (chunkSize, max) {
    if (this.memory === null || this.memory.chunkSize !== chunkSize) this.memory = new ChunkMemory(chunkSize, max)
    this.memory.max = Math.max(this.memory.max, max)
    return this.memory
  }

  /** n workers for `owner`'s input, told it first; as many as are missing taken or started. */
  take (n, owner, input) {
    this.owner = owner
    const gen = ++inputs
    for (const w of this.workers.slice(0, n)) {
      w.load = 0
      w.worker.postMessage({ type: 'input', gen, ...input })
    }
    while (this.workers.length < n) this.adopt({ gen, ...input, options: this.options })
    return { gen, workers: this.workers.slice(0, n) }
  }

  /** A worker for this run: an idle one (told the run's options with its first input), else a new one. */
  adopt (input) {
    let w = idle.pop()
    if (w) {
      clearTimeout(w.idleTimer)
      w.worker.ref()
      w.worker.postMessage({ type: 'input', ...input })
    } else {
      w = start(input)
    }
    w.pool = this
    w.load = 0
    this.workers.push(w)
  }

  /** A worker died: the input reading fails; a later input starts a fresh one. */
  lost (w, err) {
    const i = this.workers.indexOf(w)
    if (i !== -1) this.workers.splice(i, 1)
    this.owner?.fail(err)
  }

  /** `owner` is done: messages still coming for it are dropped. */
  release (owner) {
    if (this.owner === owner) this.owner = null
  }

  /** The run is done: its workers are left idle for the process's next run (IDLE_MS). */
  async end () {
    this.owner = null
    const workers = this.workers
    this.workers = []
    for (const w of workers) {
      w.pool = null
      w.worker.unref()
      w.idleTimer = setTimeout(() => { if (unkeep(w)) w.worker.terminate() }, IDLE_MS).unref()
      idle.push(w)
    }
  }
}

/** A new parse worker; what it posts goes to the run it works for (`w.pool`), if any. */
function start (input) {
  const worker = new Worker(WORKER, { workerData: { input }, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } })
  const w = { worker, load: 0, pool: null }
  worker.on('message', msg => w.pool?.owner?.onMessage(w, msg))
  worker.on('error', err => gone(w, reviveError(err)))
  worker.on('exit', code => { if (code !== 0) gone(w, new Error(`a parse worker stopped with code ${code}`)) })
  return w
}

/** A worker that failed or stopped: its run's input fails; an idle one is no longer kept. */
function gone (w, err) {
  if (w.pool) return w.pool.lost(w, err)
  unkeep(w)
}

/** Takes `w` out of the idle workers (its timer cleared); false if it was not one. */
function unkeep (w) {
  const i = idle.indexOf(w)
  if (i === -1) return false
  clearTimeout(w.idleTimer)
  idle.splice(i, 1)
  return true
}

/** Ends the workers kept idle now, not IDLE_MS after their run (for tests). */
async function endIdleWorkers () {
  const kept = idle.slice()
  for (const w of kept) unkeep(w)
  await Promise.all(kept.map(w => w.worker.terminate()))
}

/**
 * What an input read by the parse workers shares, as CSV/TSV/NDJSON chunks (Parallel) or as
 * Parquet row groups (./parquet-parallel.js): the workers it takes from the run's pool (or from
 * a pool of its own, ended with it), the waits for what they post, a worker's failure, and
 * giving them back.
 */
class PoolInput {
  constructor () {
    this.failed = null // a worker's unexpected error
    this.closed = false
    this.waiters = []
  }

  /** n workers of `pool` (null: a pool of this input's own), told about this input first. */
  takeWorkers (o, pool, n, input) {
    this.ownPool = pool === null
    this.pool = pool ?? new WorkerPool(o)
    const { gen, workers } = this.pool.take(n, this, input)
    this.gen = gen
    this.workers = workers
  }

  /** Something changed: a chunk parsed or encoded, room to cut, a failure. */
  changed () {
    return new Promise(resolve => this.waiters.push(resolve))
  }

  notify () {
    const w = this.waiters
    this.waiters = []
    for (const resolve of w) resolve()
  }

  fail (err) {
    if (this.failed === null) this.failed = err
    this.notify()
  }

  /** For a cluster: the workers hash each command's slot (and group by master, given the owners). */
  useSlots (owners = null) {
    for (const w of this.workers) w.worker.postMessage({ type: 'slots', owners })
  }

  /** The pool's messages are no longer this input's; its own pool is ended. */
  async releaseWorkers () {
    this.pool.release(this)
    if (this.ownPool) await this.pool.end()
  }
}

/**
 * Chunk memory shared with the workers: posted without a copy, kept here for a fallback,
 * and used again for a later chunk once its chunk is done (parsed, encoded and yielded).
 * Fresh SharedArrayBuffers, one per chunk, were freed only when this thread's garbage
 * collector got round to them: RSS grew with the input. A buffer is a little larger than
 * a chunk (which ends at the first record end after the chunk size) so most chunks fit one.
 */
class ChunkMemory {
  constructor (chunkSize, max) {
    this.chunkSize = chunkSize
    this.size = chunkSize + (chunkSize >> 2)
    this.max = max
    this.free = []
  }

  alloc (n) {
    const i = this.free.findIndex(ab => ab.byteLength >= n)
    const ab = i === -1 ? new SharedArrayBuffer(Math.max(n, this.size)) : this.free.splice(i, 1)[0]
    return Buffer.from(ab, 0, n)
  }

  /** A chunk no thread reads any more. */
  release (buf) {
    if (this.free.length < this.max) this.free.push(buf.buffer)
  }
}

module.exports = { WorkerPool, PoolInput, IDLE_MS, endIdleWorkers }
