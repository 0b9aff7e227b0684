'use strict'

const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { reviveError } = require('./errors')
const { MSG, workerOptions, receiveBatch } = require('./protocol')
const { ChunkMemory } = require('./chunk-memory')
const { readerFields } = require('../read/input')

// The parse workers, owned by whoever runs the load (lib/run/sources.js InputSequence: one pool
// for every input of a run, closed when the run ends), and what an input read by them shares
// (./chunks.js: inputs cut into chunks; ./row-groups.js: Parquet row groups; ./whole.js: an
// input read whole by one worker). Nothing is kept between pools: a pool's workers end with it.

const WORKER = path.join(__dirname, 'worker.js')
// Each worker's young generation, at most. V8 makes each of its two semi-spaces a third of it,
// rounded up to a power of two: 8 gives semi-spaces of 4 MB (8 MB of RSS at most), where 16
// gave 8 MB ones (16 MB), which each busy worker filled. V8's default (48 MB) costs each worker
// ~30 MB more. Measured on the 3M-row CSV, dry run, --workers 2: 16 MB -> 8 MB cut the peak RSS
// by ~20 MB at the same speed and CPU; 6 (semi-spaces of 2 MB) by ~5 MB more, at ~2% more CPU;
// 3 (1 MB) was slower and no smaller (more survivors promoted to the old generation).
const YOUNG_GENERATION_MB = 8

// Every parse worker started in this process and not yet exited, whatever its pool: what
// liveWorkers() tells (a run must leave none behind: it would keep a process from exiting).
const live = new Set()

/**
 * Parse workers, started when an input first needs them and given to each input in turn (an
 * INPUT message resets a worker's state: ./worker.js); the options of the run they serve go
 * with each worker's first input of it (use()). Starting n workers costs ~60-80 ms, which for
 * many small inputs was most of the run. close() ends them.
 */
class WorkerPool {
  constructor () {
    this.workers = [] // { worker, load, pool, told }
    this.owner = null // the input reading now
    this.memory = null // the inputs' chunk memory (ChunkMemory), one after another
    this.run = null // the options of the run served now
    this.options = null // and what of them the workers take
    this.gen = 0 // inputs given workers so far: messages carry the one they were sent for
    this.closed = false
  }

  /** Serve the run of options `o`: each worker is told them with its next input. */
  use (o) {
    if (this.run === o) return
    this.run = o
    this.options = { ...workerOptions(o), fields: readerFields(o) }
    for (const w of this.workers) w.told = false
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

  /** n workers for `owner`'s input, told it first; as many as are missing started. */
  take (n, owner, input) {
    if (this.closed) throw new Error('the parse workers\' pool is closed')
    this.owner = owner
    const gen = ++this.gen
    while (this.workers.length < n) this.workers.push(this.start())
    const workers = this.workers.slice(0, n)
    for (const w of workers) {
      w.load = 0
      w.worker.postMessage({ type: MSG.INPUT, gen, ...input, options: w.told ? undefined : this.options })
      w.told = true
    }
    return { gen, workers }
  }

  /** A new parse worker; what it posts goes to the input reading now, if any. */
  start () {
    const worker = new Worker(WORKER, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } })
    live.add(worker)
    const w = { worker, load: 0, pool: this, told: false }
    worker.on('message', msg => w.pool?.owner?.onMessage(w, msg))
    worker.on('error', err => w.pool?.lost(w, reviveError(err)))
    worker.on('exit', code => {
      live.delete(worker)
      if (code !== 0) w.pool?.lost(w, new Error(`a parse worker stopped with code ${code}`))
    })
    return w
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

  /** The run is done: its workers end. */
  async close () {
    this.closed = true
    this.owner = null
    const workers = this.workers
    this.workers = []
    for (const w of workers) w.pool = null // their exit is no failure
    await Promise.all(workers.map(w => w.worker.terminate()))
  }
}

/** The parse workers of this process not yet exited, whatever their pool (for tests: a run leaves none). */
function liveWorkers () {
  return new Set(live)
}

/**
 * What an input read by the parse workers shares, as CSV/TSV/NDJSON chunks, Parquet row
 * groups or read whole by one: the workers it takes from the run's pool (or from a pool of
 * its own, closed with it), the waits for what they post, a worker's failure, and giving
 * them back.
 */
class PoolInput {
  constructor () {
    this.failed = null // a worker's unexpected error
    this.closed = false
    this.waiters = []
    this.turn = 0 // the worker leastBusy() looks at first
  }

  /** n workers of `pool` (null: a pool of this input's own) for the run of options `o`, told about this input first. */
  takeWorkers (o, pool, n, input) {
    this.ownPool = pool === null
    this.pool = pool ?? new WorkerPool()
    this.pool.use(o)
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

  /**
   * The least busy of this input's workers, given one more item; of those as busy, the next
   * after the one given the last item. Its batches come back to this thread and wait for
   * their turn, so a worker given every item while the sink is the limit (the first one:
   * each had parsed and encoded all it was given) had all of them out at once, and kept as
   * many output buffers for ever after (--workers 8 into one server: one worker held 12, the
   * others 2 to 4).
   */
  leastBusy () {
    const n = this.workers.length
    const from = this.turn
    let w = this.workers[from % n]
    for (let i = 1; i < n; i++) {
      const x = this.workers[(from + i) % n]
      if (x.load < w.load) w = x
    }
    this.turn = this.workers.indexOf(w) + 1
    w.load++
    return w
  }

  /**
   * A BATCH about `item` (a chunk or a row group that worker `w` was given), kept until the
   * item's turn; its last one (`last`) makes the item done and the worker less busy.
   */
  keepBatch (w, item, msg) {
    item.batches.push(receiveBatch(msg.batch, w.worker))
    if (msg.last) {
      item.done = true
      w.load--
    }
  }

  /** For a cluster: the workers hash each command's slot (and group by master, given the owners). */
  useSlots (owners = null) {
    for (const w of this.workers) w.worker.postMessage({ type: MSG.SLOTS, owners })
  }

  /** The pool's messages are no longer this input's; its own pool is closed. */
  async releaseWorkers () {
    this.pool.release(this)
    if (this.ownPool) await this.pool.close()
  }
}

module.exports = { WorkerPool, PoolInput, liveWorkers }
