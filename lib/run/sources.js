'use strict'

const { openUrl } = require('../read/http-input')
const { openMode } = require('../threads/modes')
const { WorkerPool } = require('../threads/pool')

// The inputs of a run as one stream of encoded batches: each input opened in turn (its own
// format, header and mapper), its batches tagged with it, closed before the next is opened.
// One input at a time keeps memory and open files bounded whatever the list's length, and
// the result is the same as loading the inputs one after another.

/**
 * One input as encoded batches, parsed and encoded in worker threads or on this one
 * (lib/threads/modes.js). `at`: `skip`, its first records, dropped (--resume); `before`:
 * records of the run before its first ({$n} goes on from there); `pool`, `cluster`,
 * `masters` as openMode takes them. Resolves once its header is read and the templates are
 * compiled against it, so their errors come before anything of it is sent.
 * @returns {Promise<{ batches: AsyncIterable<object>, close: () => Promise<void> }>}
 */
async function openSource (input, o, at = {}) {
  let source
  try {
    source = await openMode(input, o, at)
  } catch (err) {
    if (input.http) input.stream?.destroy() // the response body is not read
    throw err
  }
  return {
    batches: source.batches,
    resumeShape: source.resumeShape, // where a ranged --resume can start (see Reader#resumeShape)
    useSlots: source.useSlots, // n workers: they hash the cluster slots
    workers: source.workers, // parse worker threads: 0 (this thread), 1, or n
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
 * The inputs from `plan.from` on, one after another. Batches get `file` (the input's name)
 * and `fileIndex`; `bytesRead` counts over the inputs read. `run` hears of each input
 * opened (a URL's response is its identity), started and read to its end.
 */
class InputSequence {
  /**
   * @param {object[]} inputs described inputs (lib/read/input.js)
   * @param {{ from: number, skip: number, before: number }} plan the first input to read, its records to skip, the run's records before it
   * @param {{ opened(i, input, skip), started(i), ended(i), fellBack(i, fallback) }} run
   */
  constructor (inputs, o, plan, run) {
    this.inputs = inputs
    this.o = o
    this.plan = plan
    this.run = run
    this.current = null // the open source
    this.cluster = undefined // whether the sink is a cluster, once known (workers 'auto')
    this.masters = undefined // and of how many masters
    this.slots = false // the sink is a cluster: workers that can hash the slots do
    this.pool = new WorkerPool() // parse workers (n ≥ 1), started once for every input, ended by close()
  }

  async open (i, skip, before) {
    const input = this.inputs[i]
    this.run.started(i) // from here its failures (a bad header) are its own
    if (input.kind === 'url') {
      await openUrl(input, this.o) // only now: a response waiting for its turn could time out
      try {
        this.run.opened(i, input, skip)
      } catch (err) {
        input.stream?.destroy() // not the response the checkpoint was written for: not read
        throw err
      }
    }
    this.current = await openSource(input, this.o, { skip, before, cluster: this.cluster, masters: this.masters, pool: this.pool })
    this.run.workers = Math.max(this.run.workers, this.current.workers)
    if (this.slots && this.current.useSlots) this.current.useSlots(this.owners)
    return this.current
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

  /** Open the first input to read: before connecting, so its header and templates are checked first. */
  async start () {
    try {
      if (this.plan.from < this.inputs.length) await this.open(this.plan.from, this.plan.skip, this.plan.before)
    } catch (err) {
      await this.close()
      throw err
    }
  }

  async * batches () {
    let before = this.plan.before
    let bytes = 0
    for (let i = this.plan.from; i < this.inputs.length; i++) {
      const source = i === this.plan.from ? this.current : await this.open(i, 0, before)
      const input = this.inputs[i]
      let read = 0
      try {
        for await (const batch of source.batches) {
          batch.file = input.name
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
