'use strict'

const { openUrl } = require('../read/http-input')
const { openMode, autoWorkers, modeOf } = require('../threads/modes')
const { WorkerPool } = require('../threads/pool')

// The inputs of a run as one stream of encoded batches: each input opened in turn (its own
// format, header and mapper), its batches tagged with it, closed before the next is opened.
// One input at a time keeps memory and open files bounded whatever the list's length, and
// the result is the same as loading the inputs one after another.

/**
 * One input as encoded batches, parsed and encoded in worker threads or on this one
 * (lib/threads/modes.js). `at.skip`: its first records, dropped (--resume); `at.before`:
 * records of the run before its first ({$n} goes on from there). `where`: { mode } (modeOf's),
 * and `cluster` (whether the sink is a cluster, when known) and `pool` (the run's parse
 * workers). Resolves once its header is read and the templates are compiled against it, so
 * their errors come before anything of it is sent.
 * @returns {Promise<{ batches: AsyncIterable<object>, close: () => Promise<void> }>}
 */
async function openSource (input, o, at, where) {
  let source
  try {
    source = await openMode(input, o, { ...at, ...where })
  } catch (err) {
    if (input.http) input.stream?.destroy() // the response body is not read
    throw err
  }
  return {
    batches: source.batches,
    resumeShape: source.resumeShape, // where a ranged --resume can start (see Reader#resumeShape)
    useSlots: source.useSlots, // n workers: they hash the cluster slots
    workers: where.mode.workers, // parse worker threads: 0 (this thread), 1, or n
    fallback: source.fallback ?? (() => null), // n workers: where and why this thread read on ({ from, line, offset, reason }), or null
    close: async () => {
      try {
        await source.close()
      } finally {
        if (input.http) input.stream?.destroy() // a run stopped early must not keep the download open
      }
    }
  }
}

/**
 * The inputs of a plan (run/plan.js) from `resume.from` on, one after another. Batches get
 * `file` (the input's name) and `fileIndex`; `bytesRead` counts over the inputs read. `run`
 * hears of each input opened (a URL's response is its identity: a new description, which it
 * is given), started and read to its end. `connect()` opens the sink, once (load.js): called
 * here only when an input's mode waits for the target (workers 'auto', on a cluster or not).
 */
class InputSequence {
  /**
   * @param {{ plan: object, run: { opened(i, input, skip), started(i), ended(i), fellBack(i, fallback), workers: number }, connect: () => Promise<{ sink }> }} a
   */
  constructor ({ plan, run, connect }) {
    this.plan = plan
    this.inputs = plan.inputs
    this.o = plan.options
    this.run = run
    this.connect = connect
    this.current = null // the open source
    this.cluster = plan.target === 'dry-run' ? false : undefined // whether the sink is a cluster, once known (workers 'auto')
    this.masters = undefined // and of how many masters
    this.slots = false // the sink is a cluster: workers that can hash the slots do
    this.owners = null
    this.pool = new WorkerPool() // parse workers (n ≥ 1), started once for every input, ended by close()
  }

  async open (i, at) {
    let input = this.inputs[i]
    // workers 'auto' may depend on the target being a cluster: then the sink first.
    if (this.cluster === undefined && this.waitsForTarget(input)) this.target((await this.connect()).sink)
    this.run.started(i) // from here its failures (a bad header) are its own
    if (input.kind === 'url') {
      input = await openUrl(input, this.o) // only now: a response waiting for its turn could time out
      try {
        this.run.opened(i, input, at.skip)
      } catch (err) {
        input.stream?.destroy() // not the response the checkpoint was written for: not read
        throw err
      }
    }
    const mode = this.plan.modes[i] ?? modeOf(input, this.o, this.workersFor(input))
    this.current = await openSource(input, this.o, at, { mode, cluster: this.cluster, pool: this.pool })
    this.run.workers = Math.max(this.run.workers, this.current.workers)
    if (this.slots && this.current.useSlots) this.current.useSlots(this.owners)
    return this.current
  }

  /** Whether workers 'auto' could start workers for `input` on a cluster: its mode waits for the target. */
  waitsForTarget (input) {
    return this.o.workers === 'auto' && !this.o.dryRun && autoWorkers({ cluster: true, bytes: input.size }) > 0
  }

  /** The parse workers for `input`: workers 'auto' decides per input, by its size and the target. */
  workersFor (input) {
    if (this.o.workers !== 'auto') return this.o.workers
    return autoWorkers({ cluster: this.cluster, masters: this.masters, dryRun: Boolean(this.o.dryRun), bytes: input.size })
  }

  /** The sink is known: whether it is a cluster, and of how many masters (workers 'auto'). */
  target (sink) {
    this.cluster = Boolean(sink.cluster)
    this.masters = sink.cluster ? sink.masters().length : undefined
  }

  /**
   * The sink is a cluster: the sources whose workers can hash the slots do, from now on,
   * and group each batch's commands by master as `owners` (each slot's) says.
   */
  useSlots (owners = null) {
    this.slots = true
    this.owners = owners
    if (this.current && this.current.useSlots) this.current.useSlots(owners)
  }

  /** Open the first input to read: before connecting (unless its mode waits for the target), so its header and templates are checked first. */
  async start () {
    const { from, skip, before } = this.plan.resume
    try {
      if (from < this.inputs.length) await this.open(from, { skip, before })
    } catch (err) {
      await this.close()
      throw err
    }
  }

  async * batches () {
    const { from } = this.plan.resume
    let before = this.plan.resume.before
    let bytes = 0
    for (let i = from; i < this.inputs.length; i++) {
      const source = i === from ? this.current : await this.open(i, { skip: 0, before })
      const name = this.inputs[i].name
      let read = 0
      try {
        for await (const batch of source.batches) {
          batch.file = name
          batch.fileIndex = i
          read = batch.bytesRead
          batch.bytesRead = bytes + read
          before += batch.records
          yield batch
          if (batch.stop) return // on-error abort: nothing after the failed record is read
        }
      } finally {
        this.current = null
        const fallback = source.fallback()
        if (fallback !== null) this.run.fellBack(i, fallback)
        await source.close()
      }
      bytes += read
      this.run.ended(i)
    }
  }

  async close () {
    const source = this.current
    this.current = null
    try {
      if (source) await source.close()
    } finally {
      await this.pool.close()
    }
  }
}

module.exports = { openSource, InputSequence }
