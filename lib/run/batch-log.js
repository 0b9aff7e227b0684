'use strict'

// The batches a run sent, in order, by their sequence numbers (each batch gets the next as
// it is sent; the sinks keep it on the batch they acknowledge or fail a record of), for
// what is written in step with the acknowledged prefix:
// - the checkpoint's `next`: where a batch's first record starts ({ at: this run's records
//   before it, offset, line }). Once the records before one are acknowledged, a resumed run
//   can start reading there. Kept only where a run can resume mid-input (`starts`).
// - the rejects file: a batch's failures once the batch is acknowledged, in input order, so
//   the file always matches the checkpoint: the failures of the acknowledged prefix, nothing
//   after it. `late`: failures of no batch sent (the input error that stopped the run),
//   written last, with those of batches never acknowledged.

class BatchLog {
  /**
   * @param {{ starts: boolean, rejects: import('./rejects').RejectsFile|null }} o
   */
  constructor ({ starts, rejects }) {
    this.seq = 0 // the next batch's
    this.starts = starts ? [] : null
    this.rejects = rejects
    this.unacked = new Map() // seq → { end: this run's records through the batch, failures }, in seq order
    this.late = []
  }

  /** A batch about to be sent, `at` records of this run before it: numbered (`batch.seq`) and logged. */
  sent (batch, at) {
    batch.seq = this.seq++
    if (this.starts !== null && batch.records && batch.first && Number.isSafeInteger(batch.first.offset)) {
      this.starts.push({ at, offset: batch.first.offset, line: batch.first.line })
    }
    if (this.rejects) this.unacked.set(batch.seq, { end: at + batch.records, failures: [] })
  }

  /** A failed record, of batch number `seq` (undefined: of none), with its input text `raw`. */
  failed (seq, failure) {
    if (!this.rejects) return
    const entry = seq === undefined ? undefined : this.unacked.get(seq)
    ;(entry ? entry.failures : this.late).push(failure)
  }

  /**
   * This run's first `records` records are acknowledged: the failures of the batches they
   * hold go to the rejects file. Returns the last batch start they reach (null: none new).
   */
  acked (records) {
    let start = null
    if (this.starts !== null) while (this.starts.length && this.starts[0].at <= records) start = this.starts.shift()
    if (this.rejects) {
      for (const [seq, e] of this.unacked) {
        if (e.end > records) break
        this.unacked.delete(seq)
        // Input failures are known when the batch is sent, error replies later: input order.
        for (const f of e.failures.sort(byPosition)) this.rejects.add(f)
      }
    }
    return start
  }

  /**
   * The failures of batches never acknowledged (the connection was lost) and of no batch go
   * to the file too, after the checkpoint was written: a resumed run cuts them off and
   * produces them again. Then the file is closed.
   */
  close () {
    if (!this.rejects) return
    for (const e of this.unacked.values()) for (const f of e.failures.sort(byPosition)) this.rejects.add(f)
    for (const f of this.late) this.rejects.add(f)
    this.unacked.clear()
    this.late = []
    this.rejects.close()
  }
}

/** Input order of two failures: by line, then byte offset (several records on one line). */
function byPosition (a, b) {
  const end = Number.MAX_SAFE_INTEGER
  return (a.line ?? end) - (b.line ?? end) || (a.offset ?? 0) - (b.offset ?? 0)
}

module.exports = { BatchLog }
