'use strict'

const { formatOf } = require('../read/formats')
const { mapperFor } = require('../encode/mapper')
const { MSG } = require('./protocol')
const { reviveError } = require('./errors')
const { PoolInput } = require('./pool')

// --workers n (n ≥ 1) for a Parquet input: the loader reads the footer, checks the templates
// against the schema, and hands out row groups to the run's parse workers (./pool.js;
// ./worker.js with ./group-worker.js), which read, decode,
// convert, map and encode them side by side. Batches are yielded here in file order, so the
// bytes sent are the sequential path's, byte for byte, with the same failures, stop and
// counts. Unlike a CSV chunk a row group needs no cutting nor a first pass to count its
// records: the footer says where each one is and how many rows it holds.
//
// A row group that cannot be read fails where the sequential reader would: once every group
// before it is yielded, its error is thrown (the groups after it are not sent).
//
// Memory: at most n + 1 row groups are given out and not yet yielded (one being read per
// worker, and the one being sent), each as its projected columns while a worker decodes it;
// its batches are posted as they are encoded and wait here until their group's turn.

/** Row groups handed out and not yet fully yielded, at most: one per worker and the head. */
function maxGroups (n) {
  return n + 1
}

/**
 * Open a Parquet input for n workers; resolves once the footer is read and the templates are
 * compiled against it (their errors come before connecting), with { batches, close, useSlots,
 * resumeShape }. `at`: `n` workers of `pool` (null: a pool of its own); `skip`: rows of it
 * already loaded (--resume), whose row groups are not read; `before`: records of the run
 * before its first row read ({$n}; `skip` by default); `slots`: the target is a cluster.
 */
async function openParquetParallel (desc, o, { n, skip = 0, before = skip, slots = false, pool = null }) {
  const src = await formatOf(desc.format).entry().openRecords(desc, o, skip)
  const pf = src.parquet
  let p
  try {
    mapperFor(o, src.shape) // compiled here only so that its errors come now
    p = new ParquetParallel(desc, o, src, { n, slots, before, pool })
  } finally {
    // Footer read: the workers read the row groups with their own descriptors.
    await pf.close()
  }
  return { batches: p.batches(), close: () => p.close(), useSlots: owners => p.useSlots(owners), resumeShape: src.resumeShape }
}

class ParquetParallel extends PoolInput {
  constructor (desc, o, src, { n, slots, before, pool }) {
    super()
    const pf = src.parquet
    this.max = maxGroups(n)
    // The groups to read, each with the rows to drop and the records of the run before it.
    this.items = []
    let records = before
    for (let g = src.plan.from; g < src.plan.to; g++) {
      const drop = g === src.plan.from ? src.plan.drop : 0
      this.items.push({ g, drop, before: records, batches: [], done: false, error: null, worker: null })
      records += pf.rowGroups[g].rows - drop
    }
    this.head = 0 // the item whose batches are yielded next
    this.dispatched = 0
    const parquet = { name: desc.name, path: desc.path, metadata: pf.metadata, columns: src.columns, shape: src.shape }
    this.takeWorkers(o, pool, n, { name: desc.name, format: 'parquet', skip: 0, runBase: 0, slots, parquet })
    this.dispatch()
  }

  /** Give out row groups, to the least busy workers, while fewer than `max` are out. */
  dispatch () {
    while (!this.closed && this.dispatched < this.items.length && this.dispatched - this.head < this.max) {
      const index = this.dispatched++
      const item = this.items[index]
      const w = this.leastBusy()
      item.worker = w
      w.worker.postMessage({ type: MSG.GROUP, index, g: item.g, drop: item.drop, before: item.before })
    }
  }

  onMessage (w, msg) {
    if (this.closed || msg.gen !== this.gen) return // a message about an earlier input
    if (msg.type === MSG.ERROR && msg.index === undefined) return this.fail(reviveError(msg.error))
    const item = this.items[msg.index]
    if (item === undefined) return
    if (msg.type === MSG.ERROR) { // a row group that cannot be read: thrown in its turn
      item.error = reviveError(msg.error)
      item.done = true
      w.load--
    } else if (msg.type === MSG.BATCH) {
      this.keepBatch(w, item, msg)
    }
    this.notify()
  }

  /** Encoded batches in file order. */
  async * batches () {
    try {
      while (this.head < this.items.length) {
        if (this.failed !== null) throw this.failed
        const item = this.items[this.head]
        if (item.batches.length) {
          const b = item.batches.shift() // bytesRead: how far through the file its rows are
          yield b
          if (b.stop) return // abort: nothing after the failed record is sent
          continue
        }
        if (item.done) {
          if (item.error !== null) throw item.error
          this.items[this.head++] = null // its batches are sent: let them go
          this.dispatch()
          continue
        }
        await this.changed()
      }
    } finally {
      await this.close()
    }
  }

  async close () {
    if (this.closed) return
    this.closed = true
    this.notify()
    await this.releaseWorkers()
  }
}

module.exports = { openParquetParallel }
