'use strict'

/**
 * A record the reader could not parse, kept in the batch at its place (skip mode): the
 * encoder turns it into a failed record. `raw` is its input text when known.
 */
class Rejected {
  constructor (code, message, raw) {
    this.code = code
    this.message = message
    this.raw = raw
  }
}

/**
 * Collects parsed records with their positions into batches of at most `size` records.
 * Parsers call add() synchronously while they walk a chunk; the reader then takes the
 * batches and yields them. With `raw`, each batch also holds each record's input text
 * (`raws`), for the rejects file.
 */
class BatchSink {
  constructor (size, raw = false) {
    this.size = size
    this.raw = raw
    this.full = []
    this.records = []
    this.lines = []
    this.offsets = []
    this.raws = raw ? [] : null
  }

  add (record, line, offset, raw) {
    this.records.push(record)
    this.lines.push(line)
    this.offsets.push(offset)
    if (this.raws !== null) this.raws.push(raw)
    if (this.records.length === this.size) this.close()
  }

  /** A record that failed to parse (skip mode), from its PipeloadError. */
  reject (err) {
    this.add(new Rejected(err.code, err.message, err.raw), err.line, err.offset, err.raw)
  }

  close () {
    const batch = { records: this.records, lines: this.lines, offsets: this.offsets }
    if (this.raws !== null) batch.raws = this.raws
    this.full.push(batch)
    this.records = []
    this.lines = []
    this.offsets = []
    this.raws = this.raw ? [] : null
  }

  /** Every batch collected so far (full ones and the partial one), oldest first. */
  take () {
    if (this.records.length !== 0) this.close()
    const out = this.full
    this.full = []
    return out
  }
}

module.exports = { BatchSink, Rejected }
