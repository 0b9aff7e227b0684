'use strict'

const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { reviveError, serializeError } = require('./thread-errors')
const { AbortRace } = require('../read/abortable')

// The loader's side of the encode worker: an async iterable of encoded batches, in input
// order, with at most `ahead` batches encoded but not yet taken (the worker waits for a
// credit per batch), so a fast parser cannot run ahead of a slow server.

const WORKER = path.join(__dirname, 'worker.js')
const AHEAD = 4
const STREAM_CHUNKS_IN_FLIGHT = 8

/** Fields of load()'s options a worker thread needs (this one, the chunk workers); functions and streams cannot cross. */
function workerOptions (o) {
  const pick = ['header', 'columns', 'delimiter', 'relaxQuotes', 'jsonPath', 'maxRecordSize', 'templates', 'ttl', 'ttlKeys', 'replace', 'vectors', 'batchSize', 'maxBatchBytes', 'dryRun', 'onError', 'rejects', 'checkpoint']
  return Object.fromEntries(pick.map(k => [k, o[k]]))
}

/** Can this input be encoded in a worker? Files and byte streams with templates can. */
function workerEligible (desc, o) {
  return desc.kind === 'bytes' && desc.format !== 'parquet' && !o.map
}

/**
 * A batch as a worker posted it, made a loader batch: its bytes as a Buffer again (a posted
 * Buffer arrives as a plain Uint8Array), and `release` (as the encoder's own batches have): once the sink is
 * done with its bytes, their SharedArrayBuffer goes back to the worker to be written into
 * again. Without it each batch is a fresh allocation freed only when this thread collects
 * garbage, which it seldom does (it allocates little itself): RSS grew with the input
 * (--workers 2: 278 MB peak at 1M rows, 406 MB at 3M; now 201 and 213 MB). The worker
 * takes { type: 'recycle', buf }. Shared, not moved: moving would detach the buffer here,
 * which slows every typed-array access of this thread from then on (lib/encode/writer.js).
 */
function receiveBatch (batch, worker, closed) {
  batch.buf = Buffer.from(batch.buf.buffer, batch.buf.byteOffset, batch.buf.byteLength)
  const ab = batch.buf.buffer
  Object.defineProperty(batch, 'release', {
    value: () => {
      if (!closed() && ab instanceof SharedArrayBuffer) worker.postMessage({ type: 'recycle', buf: ab })
    },
    enumerable: false
  })
  return batch
}

/**
 * Start the worker; resolves once it has read the header and compiled the templates (so
 * template and header errors surface before connecting) with { batches, resumeShape }. The
 * first `skip` records are dropped (--resume); `before` records of the run came before this
 * input's first ({$n}).
 */
async function openWorkerBatches (desc, o, skip = 0, before = skip) {
  const fromParent = Boolean(desc.stream)
  const workerDesc = { kind: desc.kind, name: desc.name, format: desc.format, path: desc.path, size: desc.size, start: desc.start, shard: desc.shard, fromParent }
  const worker = new Worker(WORKER, { workerData: { desc: workerDesc, options: workerOptions(o), ahead: AHEAD, skip, before } })
  const queue = new MessageQueue(worker)
  if (fromParent) feedStream(desc.stream, worker, queue)
  // A stream that stalls before its header is read (stdin, a FIFO) holds the first message
  // back: the run's abort ends the wait. Closing ends the stream too: a read of it still
  // waiting would keep the process alive (stdin).
  const close = () => {
    desc.stream?.destroy?.()
    return worker.terminate()
  }
  const race = new AbortRace(o.signal)
  let first
  try {
    first = await race.wait(queue.next())
  } catch (err) {
    await close()
    throw err
  } finally {
    race.close()
  }
  if (first.type === 'error') {
    await close()
    throw reviveError(first.error)
  }
  const seen = { shape: null } // the reader's resumeShape(), as of the last batch
  return { batches: batchesFrom(worker, queue, seen), close, resumeShape: () => seen.shape }
}

async function * batchesFrom (worker, queue, seen) {
  let closed = false
  try {
    for (;;) {
      const msg = await queue.next()
      if (msg.type === 'done') return
      if (msg.type === 'error') throw reviveError(msg.error)
      const b = receiveBatch(msg.batch, worker, () => closed)
      if (msg.shape) seen.shape = msg.shape
      yield b
      worker.postMessage({ type: 'credit' })
    }
  } finally {
    closed = true
    await worker.terminate()
  }
}

/** Forward a byte stream's chunks to the worker, at most a few unread at a time. */
async function feedStream (stream, worker, queue) {
  try {
    for await (const chunk of stream) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      if (queue.unacked >= STREAM_CHUNKS_IN_FLIGHT) await queue.acked()
      queue.unacked++
      worker.postMessage({ type: 'chunk', chunk: bytes })
    }
    worker.postMessage({ type: 'end' })
  } catch (err) {
    // The chunks already sent are read first: the error then names the offset after them.
    while (queue.unacked > 0) await queue.acked()
    worker.postMessage({ type: 'stream-error', error: { message: err.message, code: err.code } })
  }
}

/** The worker's messages as a queue that can be awaited; chunk-acks are counted aside. */
class MessageQueue {
  constructor (worker) {
    this.items = []
    this.waiting = null
    this.unacked = 0
    this.ackWaiter = null
    worker.on('message', msg => {
      if (msg.type === 'chunk-ack') {
        this.unacked--
        if (this.ackWaiter) { this.ackWaiter(); this.ackWaiter = null }
        return
      }
      this.push(msg)
    })
    worker.on('error', err => this.push({ type: 'error', error: serializeError(err) }))
    worker.on('exit', code => {
      if (code !== 0) this.push({ type: 'error', error: { message: `the encode worker stopped with code ${code}` } })
    })
  }

  push (msg) {
    if (this.waiting) { const w = this.waiting; this.waiting = null; w(msg) } else this.items.push(msg)
  }

  next () {
    if (this.items.length) return Promise.resolve(this.items.shift())
    return new Promise(resolve => { this.waiting = resolve })
  }

  acked () {
    return new Promise(resolve => { this.ackWaiter = resolve })
  }
}

module.exports = { openWorkerBatches, workerEligible, workerOptions, receiveBatch }
