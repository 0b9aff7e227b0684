'use strict'

// What a sink keeps of an encoded batch it sent, until every command has its reply: the
// bytes (to re-send) and, per record, what attributes a reply to it. Pipe's Batch (one
// server) and the cluster sink's Parent add their own reply state.

class SentBatch {
  constructor (encoded) {
    this.buf = encoded.buf
    this.release = encoded.release // its bytes are no longer needed: reuse them
    this.cmds = encoded.cmds
    this.ends = encoded.ends // cumulative command count after each record
    this.lines = encoded.lines // source position of each record
    this.offsets = encoded.offsets // byte offset of each record (null for iterables)
    this.elements = encoded.elements ?? null // a one-line JSON document's element numbers
    this.rowGroups = encoded.rowGroups ?? null // Parquet rows' row groups
    this.raws = encoded.raws // input text of each record, with a rejects file
    this.records = encoded.records // records read for this batch, failed ones included
    this.skipped = encoded.skipped || 0 // records map() skipped (returned null): neither loaded nor failed
    this.file = encoded.file // its input, when the run has several (a batch never spans two)
    this.fileIndex = encoded.fileIndex
    this.seq = encoded.seq // the run's number for it, which its failures are logged by
  }

  /** Index of the record that command number `c` belongs to. */
  recordOf (c) {
    const ends = this.ends
    let lo = 0
    let hi = ends.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (ends[mid] > c) hi = mid
      else lo = mid + 1
    }
    return lo
  }
}

module.exports = { SentBatch }
