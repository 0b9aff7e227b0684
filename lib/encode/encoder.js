'use strict'

const { writeTextLines } = require('./resp')
const { ByteWriter } = require('./writer')
const { Rejected } = require('../read/sink')
const { SKIP } = require('./mapper')
const { markOf } = require('../read/row')
const { exactJson } = require('../read/json-number')

// Records -> encoded batches: the CPU-bound middle of the pipeline, free of I/O so it runs
// the same on the main thread and in the parse worker. A batch closes at `batchSize`
// commands or `maxBatchBytes` bytes and carries what the sender needs to attribute
// replies: per record, the command count at its end and its source line and offset.
//
// A record that cannot be encoded (a Rejected from the reader in skip mode, a missing
// field, a value the mapper refuses) becomes one of the batch's `failures`. With `abort`,
// the first one ends the stream: its batch holds only the records before it and `stop`
// says where it starts; nothing after it is read.

class BatchEncoder {
  /**
   * @param {object} o
   * @param {object} o.mapper from createMapper (null for an empty input)
   * @param {'resp'|'text'} o.mode RESP for a server or redis-cli --pipe; text for --dry-run text
   * @param {boolean} [o.abort] stop at the first failed record
   * @param {boolean} [o.keepRaw] keep each record's input text (`raws`) for a rejects file
   * @param {Buffer[]} [o.free] output buffers given back, shared with the encoders before and after this one
   */
  constructor ({ mapper, mode = 'resp', batchSize, maxBatchBytes, abort = false, keepRaw = false, before = 0, free }) {
    this.mapper = mapper
    // Records of the whole run so far, failed ones included: {$n} and map()'s ctx.n, the
    // same after --resume (the `before` records the checkpoint covers come first).
    this.seen = before
    this.text = mode === 'text'
    this.batchSize = batchSize
    this.maxBatchBytes = maxBatchBytes
    this.abort = abort
    this.keepRaw = keepRaw
    this.writer = new ByteWriter(undefined, free)
    this.stopped = false
    this.bytesRead = 0 // of the last reader batch (an empty input has none)
    this.reset()
  }

  reset () {
    this.cmds = 0
    this.records = 0
    this.ends = []
    this.lines = []
    this.offsets = []
    this.marks = null // what records' positions say besides line and offset, once one does (read/row.js markOf)
    this.raws = this.keepRaw ? [] : null
    this.failures = []
    this.skipped = 0 // records map() returned null for: not sent, not failed
    this.first = null // position of the first record read into this batch
    this.lastMark = null
  }

  /**
   * Encode a reader batch (lib/read/sink.js: `records`, their `lines`, and `offsets` and
   * `raws` where kept); returns the batches it completed (usually none or one).
   * `bytesRead`: the input's bytes read by the end of it.
   */
  add (batch, bytesRead) {
    const done = []
    if (this.stopped) return done
    const { records, lines, offsets, raws } = batch
    const mapper = this.mapper
    const w = this.writer
    for (let i = 0; i < records.length; i++) {
      const rec = records[i]
      if (this.records++ === 0) this.first = { line: lines[i], offset: offsets ? offsets[i] : null }
      const start = w.pos
      const num = ++this.seen
      let count
      try {
        if (rec instanceof Rejected) throw rec
        if (this.text) {
          const commands = mapper.args(rec, num, lines[i])
          if (commands === SKIP) {
            this.skipped++
            continue
          }
          writeTextLines(commands, w)
          count = commands.length
        } else {
          count = mapper.write(rec, w, num, lines[i])
          if (count === SKIP) {
            this.skipped++
            continue
          }
        }
      } catch (err) {
        // A template that cannot work for this input ({$line} over a one-line document) stops
        // the run before this reader batch's records are sent, not as a failed record.
        if (err.code === 'PIPELOAD_TEMPLATE_INVALID') throw err
        w.pos = start // drop the part of the record already written
        this.failures.push(this.failure(err, rec, batch, i))
        if (this.abort) {
          this.stopped = true
          const last = this.take(bytesRead)
          last.stop = { line: lines[i], offset: offsets ? offsets[i] : null }
          done.push(last)
          return done
        }
        continue
      }
      this.cmds += count
      this.ends.push(this.cmds)
      this.lines.push(lines[i])
      this.offsets.push(offsets ? offsets[i] : null)
      const mark = markOf(rec, this.lastMark)
      if (mark !== null || this.marks !== null) this.pushMark(mark)
      if (this.raws !== null) this.raws.push(raws ? raws[i] : rawOf(rec))
      if (this.cmds >= this.batchSize || w.pos >= this.maxBatchBytes) done.push(this.take(bytesRead))
    }
    this.bytesRead = bytesRead
    return done
  }

  /** The failure of record i of a reader batch (`rec`, or the Rejected the reader made of it). */
  failure (err, rec, batch, i) {
    const f = { line: batch.lines[i], offset: batch.offsets ? batch.offsets[i] : null, code: err.code || 'PIPELOAD_RECORD_INVALID', message: err.message }
    const mark = markOf(rec, null)
    if (mark !== null && mark.element !== undefined) f.element = mark.element
    if (mark !== null && mark.rowGroup !== undefined) f.rowGroup = mark.rowGroup // a Parquet row's: line is its row number
    if (err.code === 'ERR_STRING_TOO_LONG') { // V8, making a field's text for a template or a dry run
      f.code = 'PIPELOAD_RECORD_TOO_LARGE'
      f.message = "a value of this record is longer than a JavaScript string can be (V8's limit), whatever --max-record-size allows"
    } else if (!err.code) {
      // Not one of ours (a map() function's error, a value too deeply nested to write as JSON).
      f.message = `cannot encode the record: ${err && err.message}`
    }
    if (this.keepRaw) f.raw = err instanceof Rejected ? err.raw : batch.raws && batch.raws[i] !== undefined ? batch.raws[i] : rawOf(rec)
    return f
  }

  /** The batch being built, even if short or empty of commands (it may carry failures). */
  take (bytesRead = this.bytesRead) {
    const batch = {
      buf: this.writer.take(),
      cmds: this.cmds,
      ends: this.ends,
      lines: this.lines,
      offsets: this.offsets,
      records: this.records,
      failures: this.failures,
      skipped: this.skipped,
      first: this.first,
      bytesRead
    }
    if (this.raws !== null) batch.raws = this.raws
    if (this.marks !== null) batch.marks = this.marks
    // Lets the sender hand the bytes back once acknowledged (not across threads).
    Object.defineProperty(batch, 'release', { value: () => this.writer.recycle(batch.buf), enumerable: false })
    this.reset()
    return batch
  }

  /** The mark of the record just added (null: none), the records before it having none. */
  pushMark (mark) {
    if (this.marks === null) this.marks = new Array(this.lines.length - 1).fill(null)
    this.marks.push(mark)
    this.lastMark = mark
  }

  get pending () {
    return this.records > 0
  }
}

/**
 * A record of an iterable, or a Parquet row, as text for the rejects file: JSON where it can
 * be, numbers as their text (a 64-bit integer or a decimal, a JsonNumber: not rounded to a double).
 */
function rawOf (rec) {
  if (typeof rec === 'string') return rec
  try {
    const s = exactJson(rec)
    return s === undefined ? String(rec) : s
  } catch {
    return String(rec)
  }
}

/**
 * A BatchEncoder as load()'s options `o` ask for; `before` records of the run came before;
 * `free`: the output buffers given back to this thread (see ByteWriter).
 */
function encoderFor (mapper, o, before = 0, free) {
  return new BatchEncoder({
    mapper,
    mode: o.dryRun === 'text' ? 'text' : 'resp',
    batchSize: o.batchSize,
    maxBatchBytes: o.maxBatchBytes,
    abort: o.onError !== 'skip',
    keepRaw: Boolean(o.rejects),
    before,
    free
  })
}

module.exports = { BatchEncoder, encoderFor }
