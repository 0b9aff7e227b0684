'use strict'

/**
 * Collects parsed records with their positions into batches of at most `size` records.
 * Parsers call add() synchronously while they walk a chunk; the reader then takes the
 * batches and yields them.
 */
class BatchSink {
  constructor (size) {
    this.size = size
    this.full = []
    this.records = []
    this.lines = []
    this.offsets = []
  }

  add (record, line, offset) {
    this.records.push(record)
    this.lines.push(line)
    this.offsets.push(offset)
    if (this.records.length === this.size) {
      this.full.push({ records: this.records, lines: this.lines, offsets: this.offsets })
      this.records = []
      this.lines = []
      this.offsets = []
    }
  }

  /** Every batch collected so far (full ones and the partial one), oldest first. */
  take () {
    const out = this.full
    if (this.records.length !== 0) {
      out.push({ records: this.records, lines: this.lines, offsets: this.offsets })
      this.records = []
      this.lines = []
      this.offsets = []
    }
    this.full = []
    return out
  }
}

module.exports = { BatchSink }
