'use strict'

// The counts of one input of a run: what this run read, skipped and saw fail (as they
// happen), what the server acknowledged (in input order: the checkpoint's part), and what
// the runs it resumes did (`base`, the checkpoint's entry for the input). A batch never
// spans two inputs, so each batch's counts belong to one input.

const ZERO = Object.freeze({ records: 0, loaded: 0, errors: 0, commands: 0, skipped: 0 })

/** Add an acknowledged batch to acknowledged counts `d` (of a run, or of one of its inputs). */
function addAcked (d, b, mapFailed) {
  d.records += b.records
  d.skipped += b.skipped || 0
  d.loaded += b.ends.length - b.failed
  d.errors += mapFailed + b.failed
  d.commands += b.cmds
}

/** The runs resumed (`base`) and this one's acknowledged counts (`done`), added up. */
function totals (base, done) {
  return {
    records: base.records + done.records,
    loaded: base.loaded + done.loaded,
    errors: base.errors + done.errors,
    commands: base.commands + done.commands,
    skipped: base.skipped + done.skipped
  }
}

class FileCounts {
  /**
   * @param {string} name the input's name
   * @param {{ records, loaded, errors, commands, skipped?, line?, complete? } | null} base the checkpoint's entry
   */
  constructor (name, base = null) {
    this.input = name
    this.base = base ? { records: base.records, loaded: base.loaded, errors: base.errors, commands: base.commands, skipped: base.skipped ?? 0 } : { ...ZERO }
    this.done = { ...ZERO } // acknowledged, this run
    this.line = base?.line ?? null // of the last record acknowledged
    this.read = 0 // records read, this run
    this.skipped = 0 // records map() returned null for, this run
    this.errors = 0 // records failed, this run
    this.ended = base?.complete ?? false // read to its end
    // Opened by this run or an earlier one: a run stopped before an input says so, not "0 of 0".
    this.started = base !== null && (base.complete === true || base.records > 0)
    this.fallback = null // its n parse workers handed over to one thread: { from, line, offset, reason }
  }

  /** A batch of this input is acknowledged: `mapFailed` of its records failed before sending. */
  acked (b, mapFailed) {
    addAcked(this.done, b, mapFailed)
    if (b.lines.length) this.line = b.lines[b.lines.length - 1]
  }

  /** Read to its end and every record read acknowledged: a resumed run need not read it again. */
  get complete () {
    return this.ended && this.done.records === this.read
  }

  /** Its entry in the checkpoint: the acknowledged prefix. */
  state () {
    return { ...totals(this.base, this.done), line: this.line, complete: this.complete }
  }

  /** Its entry in the summary's `files`. */
  summary () {
    const { base, done } = this
    return {
      input: this.input,
      started: this.started,
      records: base.records + this.read,
      loaded: base.loaded + done.loaded,
      errors: base.errors + this.errors,
      skipped: base.skipped + this.skipped,
      ...(this.fallback !== null ? { fallback: this.fallback } : {})
    }
  }
}

module.exports = { FileCounts, addAcked, totals }
