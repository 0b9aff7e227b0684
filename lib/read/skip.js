'use strict'

const { PipeloadError } = require('../errors')

// --resume: the records an earlier run loaded are read again (a quoted CSV field may
// span lines, so only reading tells where record n ends) and dropped before mapping.

/**
 * Record batches without the first `n` records (already loaded by an earlier run).
 * `before`: records of the input before these batches (read from the middle of it).
 */
async function * skipRecords (batches, n, file, before = 0) {
  let left = n
  for await (const batch of batches) {
    if (left === 0) { yield batch; continue }
    const k = Math.min(left, batch.records.length)
    left -= k
    if (k === batch.records.length) {
      yield { ...batch, records: [], lines: [], offsets: [], raws: batch.raws && [] }
      continue
    }
    yield withoutFirst(batch, k)
  }
  if (left > 0) throw tooFew(n + before, n + before - left, file)
}

/** A record batch without its first `k` records (and their lines, offsets, input text). */
function withoutFirst (batch, k) {
  return { ...batch, records: batch.records.slice(k), lines: batch.lines.slice(k), offsets: batch.offsets?.slice(k), raws: batch.raws?.slice(k) }
}

/** The checkpoint says more records were loaded than the input has. */
function tooFew (n, has, file) {
  const reason = `it says ${n.toLocaleString('en-US')} ${n === 1 ? 'record was' : 'records were'} loaded, but the input has only ${has.toLocaleString('en-US')}: it was not written for this input; remove it to start over`
  return new PipeloadError('PIPELOAD_CHECKPOINT_INVALID', `checkpoint ${file}: ${reason}`, { file })
}

module.exports = { skipRecords, withoutFirst, tooFew }
