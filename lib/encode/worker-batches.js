'use strict'

// What the loader and its parse workers (./parallel.js, ./worker-input.js) share about what
// crosses between them: the options a worker takes, and a batch as a worker posted it.

/**
 * Fields of load()'s options a parse worker needs (functions and streams cannot cross):
 * `o.workerFields`, which the option table marks (the checked options carry the list).
 */
function workerOptions (o) {
  return Object.fromEntries(o.workerFields.map(k => [k, o[k]]))
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
 * Also once its input is done (the sink releases the last batches after that): the worker
 * is kept for the next input and run (./parallel.js WorkerPool), and one that has exited
 * drops the message. Not given back then, the last batches of each input were new memory
 * for the next one: RSS grew with the number of inputs (9,000 files of 10 rows,
 * --workers 1: 205 MB peak, 136 MB given back).
 */
function receiveBatch (batch, worker) {
  batch.buf = Buffer.from(batch.buf.buffer, batch.buf.byteOffset, batch.buf.byteLength)
  const ab = batch.buf.buffer
  Object.defineProperty(batch, 'release', {
    value: () => {
      if (ab instanceof SharedArrayBuffer) worker.postMessage({ type: 'recycle', buf: ab })
    },
    enumerable: false
  })
  return batch
}

module.exports = { workerEligible, workerOptions, receiveBatch }
