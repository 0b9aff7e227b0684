'use strict'

const { PoolInput } = require('./pool')
const { MSG, receiveBatch } = require('./protocol')
const { reviveError } = require('./errors')
const { AbortRace } = require('../read/abortable')

// An input read whole by one parse worker (--workers 1; a JSON document, which cannot be cut;
// a --shard share of stdin, gzip or a URL): the loader's side of ./whole-worker.js, an async
// iterable of encoded batches in input order, with at most AHEAD batches encoded but not yet
// taken (the worker waits for a credit per batch), so a fast parser cannot run ahead of a slow
// server. The worker is the run's (WorkerPool, ./pool.js), as for inputs cut into chunks:
// started once for every input, not once per input (200 small files: 17 s, now ~1 s). A byte
// stream (stdin, a URL's body) is fed to it from here.

const AHEAD = 4
const STREAM_CHUNKS_IN_FLIGHT = 8

/**
 * Take a worker of `pool` (null: one of its own) for the input; resolves once it has read the
 * header and compiled the templates (so template and header errors surface before connecting)
 * with { batches, close, resumeShape }. `at`: `skip`, the first records, dropped (--resume);
 * `before` records of the run came before this input's first ({$n}; `skip` by default).
 */
async function openWorkerBatches (desc, o, { skip = 0, before = skip, pool = null } = {}) {
  const input = new WorkerInput(desc, o, { skip, before, pool })
  try {
    await input.open()
  } catch (err) {
    await input.close()
    throw err
  }
  return { batches: input.batches(), close: () => input.close(), resumeShape: () => input.shape }
}

class WorkerInput extends PoolInput {
  constructor (desc, o, { skip, before, pool }) {
    super()
    this.desc = desc
    this.signal = o.signal
    this.queue = [] // the worker's messages about this input, in order
    this.unacked = 0 // chunks of a fed stream not yet consumed by the worker
    this.shape = null // the reader's resumeShape(), as of the last batch
    const fromParent = Boolean(desc.stream)
    const whole = {
      desc: { kind: desc.kind, name: desc.name, format: desc.format, path: desc.path, size: desc.size, start: desc.start, shard: desc.shard, fromParent },
      ahead: AHEAD,
      skip,
      before
    }
    this.takeWorkers(o, pool, 1, { name: desc.name, format: desc.format, skip, runBase: 0, slots: false, whole })
    this.worker = this.workers[0].worker
    if (fromParent) this.feeding = this.feed(desc.stream)
  }

  onMessage (w, msg) {
    if (this.closed || msg.gen !== this.gen) return // a message about an earlier input
    if (msg.type === MSG.BYTES_ACK) this.unacked--
    else this.queue.push(msg)
    this.notify()
  }

  post (msg) {
    this.worker.postMessage({ ...msg, gen: this.gen })
  }

  /** The worker's next message about this input; a worker that died fails it. */
  async next () {
    while (this.queue.length === 0 && this.failed === null) await this.changed()
    if (this.queue.length) return this.queue.shift()
    throw this.failed
  }

  /** Once the worker has read the header and compiled the templates (or failed to). */
  async open () {
    // A stream that stalls before its header is read (stdin, a FIFO) holds the first message
    // back: the run's abort ends the wait (close() then stops the worker's read).
    const race = new AbortRace(this.signal)
    try {
      const first = await race.wait(this.next())
      if (first.type === MSG.ERROR) throw reviveError(first.error)
    } finally {
      race.close()
    }
  }

  async * batches () {
    try {
      for (;;) {
        const msg = await this.next()
        if (msg.type === MSG.DONE) return
        if (msg.type === MSG.ERROR) throw reviveError(msg.error)
        const b = receiveBatch(msg.batch, this.worker)
        if (msg.shape) this.shape = msg.shape
        yield b
        this.post({ type: MSG.CREDIT })
      }
    } finally {
      await this.close()
    }
  }

  /** Forward a byte stream's chunks to the worker, at most a few unread at a time. */
  async feed (stream) {
    try {
      for await (const chunk of stream) {
        if (this.closed) return
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
        while (this.unacked >= STREAM_CHUNKS_IN_FLIGHT && !this.closed) await this.changed()
        if (this.closed) return
        this.unacked++
        this.post({ type: MSG.BYTES, chunk: bytes })
      }
      if (!this.closed) this.post({ type: MSG.BYTES_END })
    } catch (err) {
      // The chunks already sent are read first: the error then names the offset after them.
      while (this.unacked > 0 && !this.closed) await this.changed()
      if (!this.closed) this.post({ type: MSG.BYTES_ERROR, error: { message: err.message, code: err.code } })
    }
  }

  /** The worker stops reading this input (it is kept for the next one). */
  async close () {
    if (this.closed) return
    if (this.failed === null) this.post({ type: MSG.STOP })
    this.closed = true
    // A loader-fed stream still waiting for its next chunk (stdin) would keep the process alive.
    if (this.signal?.aborted) this.desc.stream?.destroy?.()
    this.notify()
    await this.releaseWorkers()
  }
}

module.exports = { openWorkerBatches }
