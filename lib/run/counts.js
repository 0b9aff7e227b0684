'use strict'

const { FileCounts, addAcked, totals } = require('./file-counts')

// The counts of one run: what it read, skipped and saw fail before sending (as it happens),
// what the server acknowledged in input order (`done`: the checkpoint's part), per input
// (./file-counts.js), and what the runs it resumes did (`base`, from the checkpoint).

class Counts {
  /**
   * @param {{ inputs: object[], state: object|null }} a the run's inputs, and the checkpoint it resumes
   */
  constructor ({ inputs, state }) {
    const st = state
    this.base = { records: st?.records ?? 0, loaded: st?.loaded ?? 0, errors: st?.errors ?? 0, commands: st?.commands ?? 0, skipped: st?.skipped ?? 0 }
    // Per input; of one input, the checkpoint's totals are its own.
    this.files = inputs.map((d, i) => new FileCounts(d.name, inputs.length === 1 ? st : st?.files?.[i] ?? null))
    this.done = { records: 0, loaded: 0, errors: 0, commands: 0, skipped: 0, line: st?.line ?? null, next: st?.next ?? null } // acknowledged prefix
    this.records = 0 // read, this run
    this.skipped = 0 // records map() returned null for
    this.mapFailures = 0 // records that failed before they were sent
    this.bytesRead = 0
  }

  /** A batch read, about to be sent; `offset`: where the bytes read start in the input (a ranged body's). */
  read (batch, offset) {
    this.records += batch.records
    this.skipped += batch.skipped || 0
    const file = this.files[batch.fileIndex]
    file.read += batch.records
    file.skipped += batch.skipped || 0
    this.bytesRead = offset + batch.bytesRead
  }

  /** A record of input `i` that could not be read: read, and failed. */
  unreadable (i) {
    this.records++
    this.files[i].read++
  }

  /** A failed record of input `i`; `mapped`: it failed before it was sent (not an error reply). */
  failed (i, mapped) {
    if (mapped) this.mapFailures++
    this.files[i].errors++
  }

  /** A batch fully acknowledged (in input order). */
  acked (b) {
    const mapFailed = b.records - b.ends.length - (b.skipped || 0)
    addAcked(this.done, b, mapFailed)
    if (b.lines.length) this.done.line = b.lines[b.lines.length - 1]
    this.files[b.fileIndex ?? 0].acked(b, mapFailed)
  }

  /** The acknowledged prefix reaches a batch start: a resumed run reads on from there. */
  passed (start) {
    this.done.next = { records: this.base.records + start.at, offset: start.offset, line: start.line }
  }

  /** The checkpoint's counts: the runs resumed and this one's acknowledged prefix. */
  totals () {
    return totals(this.base, this.done)
  }
}

module.exports = { Counts }
