'use strict'

const { openRecords } = require('../read/input')
const { withoutFirst, tooFew } = require('../read/skip')
const { mapperFor } = require('./mapper')
const { encoderFor } = require('./encoder')
const { IDLE, orIdle } = require('./idle')

// The chain of one input: read → skip → map → encode, assembled here once. Every execution
// mode (lib/threads/) runs it: on the main thread, in one worker thread, over a chunk or a
// Parquet row group in n workers; they differ only in where the record batches come from and
// where the encoded ones go.
//
// Chain is its synchronous core (the templates compiled for the input's shape, the records a
// resumed run loaded already dropped, the encoder), for record batches already in memory (a
// parsed chunk, a row group); encodeChain drives it over an input read as it comes, and
// openChain opens the input first.

class Chain {
  /**
   * @param {object} o load options
   * @param {object} at where these record batches are in the run:
   *   `mapper` (compiled already) or `shape` (the input's, to compile it for; `empty`: an
   *   input with nothing to map); `skip`: their first records to drop (--resume); `skipBase`:
   *   records of the input before them (for the message when there are too few); `before`:
   *   records of the run before the first kept ({$n}); `free`: output buffers given back
   */
  constructor (o, { mapper, shape, empty = false, skip = 0, skipBase = 0, before = 0, free }) {
    this.o = o
    this.mapper = mapper ?? (empty ? null : mapperFor(o, shape))
    this.left = skip
    this.skip = skip
    this.skipBase = skipBase
    this.encoder = encoderFor(this.mapper, o, before, free)
  }

  /**
   * The encoded batches a record batch completes (usually none or one). `bytesRead`: the
   * batch's own, unless given.
   */
  add (batch, bytesRead = batch.bytesRead) {
    if (this.left > 0) {
      const k = Math.min(this.left, batch.records.length)
      this.left -= k
      // A restore's mapper follows the key being read through the lines an earlier run loaded.
      if (this.mapper?.observe) for (let i = 0; i < k; i++) this.mapper.observe(batch.records[i])
      batch = withoutFirst(batch, k)
    }
    return this.encoder.add(batch, bytesRead)
  }

  /** The batch being built, even if empty of commands (it may carry failures, or the last bytesRead). */
  take (bytesRead) {
    return this.encoder.take(bytesRead)
  }

  /** On-error abort: a record failed, nothing after it is encoded. */
  get stopped () {
    return this.encoder.stopped
  }

  /** Records encoded into the batch being built. */
  get pending () {
    return this.encoder.pending
  }

  /** Throws when the input ended before the records to skip did (a checkpoint of another input). */
  checkSkipped () {
    if (this.left > 0) throw tooFew(this.skip + this.skipBase, this.skip + this.skipBase - this.left, this.o.checkpoint)
  }
}

/**
 * Encoded batches of an input read as it comes (`batches`: its record batches), through a
 * Chain made with `at`. An input slow to come (a pipe, a stalled download) has what is
 * encoded sent now, not once a batch is full; on an input error, what was read before it
 * goes out first.
 */
async function * encodeChain (batches, o, at) {
  const chain = new Chain(o, at)
  try {
    for await (const batch of flaggingIdle(batches, () => chain.pending)) {
      if (batch === IDLE) { yield chain.take(); continue }
      yield * chain.add(batch)
      if (chain.stopped) return
    }
    chain.checkSkipped()
  } catch (err) {
    // A template refused for this input ({$line} over a one-line document) sends nothing more.
    if (chain.pending && err.code !== 'PIPELOAD_TEMPLATE_INVALID') yield chain.take()
    throw err
  }
  yield chain.take() // the rest, and the final bytesRead even when no record is left
}

/**
 * Open a described input (lib/read/input.js) and its chain; resolves once its header is read
 * and the templates are compiled against it, so that their errors come before anything is
 * sent. `at`: `start` (its bytes begin at a record in its middle), `skip`, `skipBase`,
 * `before`, `free` as for Chain, `shard` (the mapper's shape knows a --shard share).
 * @returns {Promise<{ batches: AsyncIterable<object>, shape: object, empty: boolean, resumeShape?: () => object }>}
 */
async function openChain (desc, o, at = {}) {
  const skip = at.skip ?? 0
  const src = await openRecords(desc, o, at.start ?? null, skip)
  const left = skip - (src.skipped ?? 0) // a Parquet input starts at the row itself
  const shape = at.shard ? { ...src.shape, shard: at.shard } : src.shape
  // Compiled now, so that template errors come before the first batch is asked for.
  const mapper = src.empty ? null : mapperFor(o, shape)
  const batches = encodeChain(src.batches, o, { ...at, mapper, empty: src.empty, skip: left })
  return { ...src, shape, batches }
}

/**
 * The batches of `source`, with IDLE in between where the next took over IDLE_MS (./idle.js) while
 * `waiting()` said something waits for it (once per wait: the next batch is then awaited).
 */
async function * flaggingIdle (source, waiting) {
  const it = source[Symbol.asyncIterator]()
  let done = false
  try {
    for (;;) {
      const next = it.next()
      let r
      if (waiting()) {
        r = await orIdle(next)
        if (r === IDLE) {
          yield IDLE
          r = await next
        }
      } else r = await next
      if (r.done) { done = true; return }
      yield r.value
    }
  } finally {
    if (!done) await it.return?.()
  }
}

module.exports = { Chain, encodeChain, openChain }
