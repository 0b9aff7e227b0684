'use strict'

// The one message protocol between the loader's thread and its parse workers (./worker.js),
// for every mode that uses them: an input cut into chunks (./chunks.js), a Parquet file's row
// groups (./row-groups.js), an input read whole by one worker (./whole.js). Both sides name
// messages by these kinds only. Every message out of a worker carries the `gen` of the input
// it is about, so the loader tells a late one (of an input it has left) from the current.
//
// To a worker:
//   INPUT   { gen, name, format, skip, runBase, slots, parquet?, whole?, options? } a new input:
//           what is left of the previous one is dropped; `options` (workerOptions) when the
//           pool serves a new run; `parquet` (./group-worker.js) or `whole` (./whole-worker.js)
//           for those modes, else chunks come
//   CHUNK   { index, buf, offset, columns, fields, shape? }  parse a chunk alone
//   BASES   { index, recordBase, lineBase, shape }  records and lines before a parsed chunk: encode it
//   GROUP   { index, g, drop, before }  read and encode row group g
//   SLOTS   { owners }  a cluster: hash each command's slot from now on (and group by master)
//   RECYCLE { buf }  a batch's SharedArrayBuffer, sent: written into again
//   CREDIT | BYTES { chunk } | BYTES_END | BYTES_ERROR { error } | STOP  an input read whole:
//           room for one more batch; a byte stream fed by the loader; the loader is done with it
// From a worker:
//   PARSED  { gen, index, records, lines, expected, columns, ok, reason }  a chunk's counts
//   BATCH   { gen, index?, batch, last?, shape? }  an encoded batch: of a chunk or row group
//           (`index`; `last`: it is done), or of an input read whole (`shape`: its reader's)
//   READY   { gen, empty }  an input read whole has its header read and templates compiled
//   DONE    { gen }  an input read whole is read to its end
//   ERROR   { gen, index?, error }  a row group that cannot be read (`index`), or else the
//           input's failure (a bug, in chunks: the run fails)
//   BYTES_ACK { gen }  a chunk of a byte stream fed by the loader was consumed

const MSG = Object.freeze({
  INPUT: 'input',
  CHUNK: 'chunk',
  BASES: 'bases',
  GROUP: 'group',
  SLOTS: 'slots',
  RECYCLE: 'recycle',
  CREDIT: 'credit',
  BYTES: 'bytes',
  BYTES_END: 'bytes-end',
  BYTES_ERROR: 'bytes-error',
  STOP: 'stop',
  PARSED: 'parsed',
  BATCH: 'batch',
  READY: 'ready',
  DONE: 'done',
  ERROR: 'error',
  BYTES_ACK: 'bytes-ack'
})

/**
 * Fields of load()'s options a parse worker needs (functions and streams cannot cross):
 * `o.workerFields`, which the option table marks (the checked options carry the list).
 */
function workerOptions (o) {
  return Object.fromEntries(o.workerFields.map(k => [k, o[k]]))
}

/**
 * A batch as a worker posted it, made a loader batch: its bytes as a Buffer again (a posted
 * Buffer arrives as a plain Uint8Array), and `release` (as the encoder's own batches have): once the sink is
 * done with its bytes, their SharedArrayBuffer goes back to the worker to be written into
 * again. Without it each batch is a fresh allocation freed only when this thread collects
 * garbage, which it seldom does (it allocates little itself): RSS grew with the input
 * (--workers 2: 278 MB peak at 1M rows, 406 MB at 3M; now 201 and 213 MB). The worker
 * takes RECYCLE { buf }. Shared, not moved: moving would detach the buffer here,
 * which slows every typed-array access of this thread from then on (lib/encode/writer.js).
 * Also once its input is done (the sink releases the last batches after that): the worker
 * is kept for the run's next input (./pool.js), and one that has exited drops the message.
 * Not given back then, the last batches of each input were new memory for the next one: RSS
 * grew with the number of inputs (9,000 files of 10 rows, --workers 1: 205 MB peak, 136 MB
 * given back).
 */
function receiveBatch (batch, worker) {
  batch.buf = Buffer.from(batch.buf.buffer, batch.buf.byteOffset, batch.buf.byteLength)
  const ab = batch.buf.buffer
  Object.defineProperty(batch, 'release', {
    value: () => {
      if (ab instanceof SharedArrayBuffer) worker.postMessage({ type: MSG.RECYCLE, buf: ab })
    },
    enumerable: false
  })
  return batch
}

module.exports = { MSG, workerOptions, receiveBatch }
