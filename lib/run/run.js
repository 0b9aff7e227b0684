'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError, callbackError } = require('../errors')
const { notIdempotent } = require('../encode/idempotent')
const { checkUrlResumable, inputIdentity } = require('./checkpoint')
const { formatFailure, count } = require('./reporter')
const { FileCounts, addAcked, totals } = require('./file-counts')
const { abortable } = require('../read/abortable')
const { formatOf } = require('../read/formats')

// One load's state as load() (load.js) runs it: counters, failures and the error policy,
// the checkpoint and the rejects file kept in step with the acknowledged batches, progress,
// and the summary. Run#pump sends the encoded batches to the sink.

/** Call a caller's callback on the run's own path: what it throws rejects load() as PIPELOAD_CALLBACK_FAILED. */
function call (fn, name, arg) {
  try {
    return fn(arg)
  } catch (err) {
    throw callbackError(name, err)
  }
}

/** The state of one load: counters, failures, progress. */
class Run {
  /**
   * @param {object[]} inputs the described inputs, loaded in this order
   * @param {string|null} label the summary's `input` for several inputs (one: its name)
   */
  constructor (o, inputs, startedAt, resume = {}, rejects = null, label = null) {
    this.o = o
    this.inputs = inputs
    this.label = label ?? inputs[0].name
    this.startedAt = startedAt
    this.checkpointer = resume.checkpointer || null
    // Totals of the runs this one resumes; this run's counts add to them.
    const st = resume.state
    this.resumeState = st
    this.base = { records: st?.records ?? 0, loaded: st?.loaded ?? 0, errors: st?.errors ?? 0, commands: st?.commands ?? 0, skipped: st?.skipped ?? 0 }
    this.resumedFrom = st ? st.records : null
    this.resumed = o.resume ? st !== null : null // with resume 'if-present': whether there was a checkpoint
    this.from = resume.plan?.from ?? 0 // the first input this run reads: those before it are done
    // Per input; of one input, the checkpoint's totals are its own.
    this.files = inputs.map((d, i) => new FileCounts(d.name, inputs.length === 1 ? st : st?.files?.[i] ?? null))
    this.current = 0 // the input being read
    this.workers = 0 // the most parse worker threads an input used (workers 'auto' decides per input)
    this.done = { records: 0, loaded: 0, errors: 0, commands: 0, skipped: 0, line: st?.line ?? null, next: st?.next ?? null } // acknowledged prefix
    // Of one input: where batches sent start ({ at: this run's records before it, offset,
    // line }), oldest first: once the records before one are acknowledged, a resumed run can
    // start reading there (the checkpoint's `next`). A JSON document is only read from its start.
    const only = inputs.length === 1 ? inputs[0] : null
    this.starts = this.checkpointer && only && only.kind === 'bytes' && formatOf(only.format).midway ? [] : null
    this.resumeShape = null // the source's: header, fields per record, gzip (see Reader#resumeShape)
    this.offset = only && only.range ? only.range.offset : 0 // a ranged body's first byte in the input
    this.records = 0
    this.skipped = 0 // records map() returned null for
    this.mapFailures = 0
    this.failures = []
    this.bytesRead = 0
    this.lastProgress = startedAt
    this.target = null
    // Error policy (onError, maxErrors): the failure that stops the run, and where the first
    // record not sent starts (null when everything read was sent).
    this.stop = null
    this.stoppedAt = null
    this.sink = null
    // The rejects file gets a batch's failures once the batch is acknowledged, in input
    // order, so the file always matches the checkpoint: the failures of the acknowledged
    // prefix, nothing after it. `unacked`: per batch sent and not acknowledged, the records
    // read up to its end and its failures so far; found again by the batch's `lines`
    // array, which the sinks keep. `late`: failures of no batch sent (the input error
    // that stopped the run), written last.
    this.rejects = rejects
    this.unacked = []
    this.byLines = new Map()
    this.late = []
    // A checkpoint or rejects file that could not be written: the run stops at the next batch.
    this.outputError = null
  }

  /** A batch is fully acknowledged (in input order): the checkpoint may move past it. */
  acked (b) {
    const d = this.done
    const mapFailed = b.records - b.ends.length - (b.skipped || 0)
    addAcked(d, b, mapFailed)
    if (b.lines.length) d.line = b.lines[b.lines.length - 1]
    if (this.starts !== null) this.passStarts()
    this.files[b.fileIndex ?? 0].acked(b, mapFailed)
    // Called from a socket's reply handler: a write failure must not be thrown from here.
    try {
      if (this.rejects) this.writeAckedRejects()
      if (this.checkpointer && this.checkpointer.due()) this.writeCheckpoint(false)
    } catch (err) {
      this.outputFailed(err)
    }
  }

  /** The last batch start the acknowledged prefix reaches is where a resumed run reads on. */
  passStarts () {
    let s = null
    while (this.starts.length && this.starts[0].at <= this.done.records) s = this.starts.shift()
    if (s !== null) this.done.next = { records: this.base.records + s.at, offset: s.offset, line: s.line }
  }

  /** The checkpoint's `next`: a record start and what a reader needs to begin there. */
  nextState () {
    const next = this.done.next
    if (next === null) return null
    const shape = this.resumeShape ? this.resumeShape() : null
    if (!shape) return next
    return {
      records: next.records,
      offset: next.offset,
      line: next.line,
      ...(shape.gzip ? { gzip: true } : {}),
      ...(shape.columns ? { columns: shape.columns } : {}),
      ...(shape.fields ? { fields: shape.fields } : {})
    }
  }

  /** Batch entries whose records are all acknowledged: their failures go to the file. */
  writeAckedRejects () {
    while (this.unacked.length && this.unacked[0].end <= this.done.records) {
      const e = this.unacked.shift()
      this.byLines.delete(e.key)
      // Input failures are known when the batch is sent, error replies later: input order.
      for (const f of e.failures.sort(byPosition)) this.rejects.add(f)
    }
  }

  outputFailed (err) {
    if (this.outputError === null) this.outputError = err
  }

  checkpointState (complete) {
    const { base, done } = this
    const state = {
      ...totals(base, done),
      line: done.line,
      ...(done.next !== null ? { next: this.nextState() } : {}),
      complete
    }
    // Of several inputs: which are done (a resumed run does not read them again), and how
    // far the others are.
    if (this.inputs.length > 1) state.files = this.files.map(f => f.state())
    return state
  }

  /** A URL of several inputs got its response: its identity is complete now. */
  opened (i, input, skip) {
    if (!this.checkpointer) return
    const identity = inputIdentity(input)
    // Records of it are skipped: it must be what the checkpoint counted them in.
    if (skip > 0) checkUrlResumable(this.o.checkpoint, this.resumeState.inputs[i], identity)
    this.checkpointer.identity[i] = identity
  }

  started (i) {
    this.current = i
    this.files[i].started = true
  }

  /** Input i was read to its end. */
  ended (i) {
    this.files[i].ended = true
  }

  /** Input i's n parse workers handed over to this thread ({ from, line, offset, reason }). */
  fellBack (i, fallback) {
    this.files[i].fallback = fallback
  }

  /**
   * Write the checkpoint, with the rejects file's size on disk at that point. Not after an
   * output failed: the checkpoint must not move past failures the rejects file lacks.
   */
  writeCheckpoint (complete) {
    if (this.outputError !== null) return
    const state = this.checkpointState(complete)
    if (this.rejects) state.rejects = this.rejects.sync()
    this.checkpointer.write(state)
  }

  /** Write the checkpoint as it stands (end of run, abort, failure). */
  saveCheckpoint (complete) {
    if (!this.checkpointer) return
    try {
      this.writeCheckpoint(complete)
    } catch (err) {
      this.outputFailed(err)
    }
  }

  // onReconnect and onFailure run inside the sink's reply handling: what they throw stops the
  // run as a failed output does (no more reading, the replies awaited), never an uncaught throw.
  reconnected (event) {
    if (this.o.onReconnect) this.callback(this.o.onReconnect, 'onReconnect', event)
  }

  callback (fn, name, arg) {
    try {
      fn(arg)
    } catch (err) {
      this.outputFailed(callbackError(name, err))
    }
  }

  /** A failed record; `batch`: the batch it was sent in (or the sink's copy of it), if any. */
  fail (failure, batch) {
    const raw = failure.raw
    delete failure.raw // kept out of the summary: it can be large
    if (failure.offset === undefined) delete failure.offset
    if (failure.element === undefined) delete failure.element
    if (failure.rowGroup === undefined) delete failure.rowGroup
    if (this.failures.length < this.o.maxFailures) this.failures.push(failure)
    this.files[batch?.fileIndex ?? this.current].errors++
    if (this.rejects) {
      const entry = batch ? this.byLines.get(batch.lines) : undefined
      const list = entry ? entry.failures : this.late
      list.push({ ...failure, raw })
    }
    if (this.o.onFailure) this.callback(this.o.onFailure, 'onFailure', failure)
    if (this.stop === null && (this.o.onError === 'abort' || (this.o.maxErrors !== null && this.errorCount() > this.o.maxErrors))) {
      this.stop = failure
    }
  }

  errorCount () {
    return this.mapFailures + (this.sink ? this.sink.stats.failedRecords : 0)
  }

  /** Why the run stopped early under the error policy, as the error load() rejects with. */
  stopError () {
    const f = this.stop
    if (this.o.onError === 'abort') {
      // alsoFailed: records of the batches already in flight that failed after it (this run's).
      return new PipeloadError('PIPELOAD_RECORD_FAILED', `${formatFailure(f)} (stopped: on-error abort)`,
        { file: f.file, line: f.line, offset: f.offset, failure: f, alsoFailed: Math.max(0, this.errorCount() - 1) })
    }
    return new PipeloadError('PIPELOAD_TOO_MANY_ERRORS', `more than ${count(this.o.maxErrors, 'record')} failed (max-errors ${this.o.maxErrors}); the last: ${formatFailure(f)}`,
      { file: f.file, line: f.line, offset: f.offset, failure: f })
  }

  /** Where the first record not sent starts (in the input being read). */
  stopAt (pos, file = this.inputs[this.current].name) {
    this.stoppedAt = pos ? { file, line: pos.line ?? null, offset: pos.offset ?? null } : null
  }

  /** Send every encoded batch; on a failure, wait for what was sent, then rethrow. */
  async pump (batches, sink) {
    const { signal } = this.o
    this.sink = sink
    try {
      // Each wait for the next batch ends when the signal aborts: an input that stalls (stdin,
      // a FIFO, a stream, an iterable, a parse worker reading one) does not hold the abort back.
      for await (const batch of signal ? abortable(batches, signal, () => this.aborted()) : batches) {
        // The window's room first (one server): an error reply that comes while this batch
        // waits for it is seen below, and the batch is not sent.
        if (batch.cmds && sink.room) await sink.room()
        // An error reply (abort), one failure too many, or an output that cannot be
        // written: send nothing more.
        if (this.stop !== null || this.outputError !== null) {
          this.stopAt(batch.records ? batch.first : null, batch.file)
          break
        }
        if (this.starts !== null && batch.records && batch.first && Number.isSafeInteger(batch.first.offset)) {
          this.starts.push({ at: this.records, offset: batch.first.offset, line: batch.first.line })
        }
        this.records += batch.records
        this.skipped += batch.skipped || 0
        const file = this.files[batch.fileIndex]
        file.read += batch.records
        file.skipped += batch.skipped || 0
        this.bytesRead = this.offset + batch.bytesRead
        if (this.rejects) this.track(batch)
        for (const f of batch.failures) {
          this.mapFailures++
          this.fail({ file: batch.file, line: f.line, offset: f.offset ?? undefined, element: f.element, rowGroup: f.rowGroup, code: f.code, message: f.message, source: 'input', raw: f.raw }, batch)
        }
        await sink.send(batch)
        if (batch.stop) { // abort: the failed record and all after it are not sent
          this.stopAt(batch.stop, batch.file)
          break
        }
        this.progress(sink, false)
        if (signal?.aborted) throw this.aborted()
      }
    } catch (err) {
      this.inputFailed(err)
      // Whatever was read before the failure is still loaded: wait for its replies.
      if (!sink.fatal) await sink.finish().catch(() => {})
      this.saveCheckpoint(false)
      this.closeRejects()
      throw err
    }
    let finished = false
    try {
      await sink.finish()
      finished = this.stop === null // a run stopped by its error policy is not finished: --resume goes on
    } finally {
      this.saveCheckpoint(finished)
      this.closeRejects()
    }
    if (this.outputError !== null) throw this.outputError
    this.progress(sink, true)
    if (this.stop !== null) throw this.stopError()
  }

  /** The signal aborted: nothing more is sent. */
  aborted () {
    // An iterable's records are numbered: the first not sent is the next one. A file's next
    // record starts at a position only reading it would tell (a quoted CSV field may span
    // lines): left null.
    if (this.inputs[this.current].kind === 'records') this.stopAt({ line: this.base.records + this.records + 1 })
    return new PipeloadError('PIPELOAD_ABORTED', 'the load was aborted')
  }

  /** A batch about to be sent: its failures wait for its acknowledgement (see constructor). */
  track (batch) {
    const e = { end: this.records, key: batch.lines, failures: [] }
    this.unacked.push(e)
    this.byLines.set(batch.lines, e)
  }

  /** Input the reader could not get past: a failed record too, and where the run stopped. */
  inputFailed (err) {
    if (err instanceof PipeloadError && err.code === 'PIPELOAD_INPUT_FAILED') { // the record could not be produced: not read, not failed
      if (err.line != null || err.offset != null) this.stopAt({ line: err.line, offset: err.offset })
      return
    }
    if (!(err instanceof PipeloadError) || !err.file || (err.code !== 'PIPELOAD_INPUT_INVALID' && err.code !== 'PIPELOAD_RECORD_TOO_LARGE')) return
    if (err.line == null && err.offset == null) return // the file cannot be read at all
    this.records++ // the record that could not be read
    this.files[this.current].read++
    this.mapFailures++
    this.fail({ file: err.file, line: err.line ?? null, offset: err.offset ?? undefined, code: err.code, message: err.message, source: 'input', raw: err.raw })
    this.stopAt({ line: err.line, offset: err.offset })
  }

  /**
   * The failures of batches never acknowledged (the connection was lost) and of no batch
   * go to the file too, after the checkpoint was written: a resumed run cuts them off
   * and produces them again.
   */
  closeRejects () {
    if (!this.rejects) return
    try {
      for (const e of this.unacked) for (const f of e.failures.sort(byPosition)) this.rejects.add(f)
      for (const f of this.late) this.rejects.add(f)
      this.unacked = []
      this.late = []
      this.rejects.close()
    } catch (err) {
      this.outputFailed(err)
    }
  }

  progress (sink, force) {
    if (!this.o.onProgress) return
    const now = performance.now()
    if (!force && now - this.lastProgress < this.o.progressInterval) return
    this.lastProgress = now
    const elapsedMs = now - this.startedAt
    call(this.o.onProgress, 'onProgress', {
      records: this.records,
      commands: sink.stats.commands,
      errors: this.mapFailures + sink.stats.failedRecords,
      bytesRead: this.bytesRead,
      totalBytes: this.totalBytes(),
      elapsedMs,
      recordsPerSec: elapsedMs > 0 ? (this.records * 1000) / elapsedMs : 0
    })
  }

  /** The sizes of the inputs this run reads, added up; null when one is not known (yet). */
  totalBytes () {
    let total = 0
    for (let i = this.from; i < this.inputs.length; i++) {
      const size = shareSize(this.inputs[i])
      if (size == null) return null
      total += size
    }
    return total
  }

  summary (sink) {
    const durationMs = performance.now() - this.startedAt
    const s = sink.stats
    const base = this.base
    return {
      input: this.label,
      shard: this.o.shard ? `${this.o.shard.index}/${this.o.shard.count}` : null,
      target: this.o.dryRun ? null : this.target,
      dryRun: this.o.dryRun || null,
      resumedFrom: this.resumedFrom,
      resumed: this.resumed,
      checkpoint: this.o.checkpoint || null,
      records: base.records + this.records,
      loaded: base.loaded + s.ackedRecords - s.failedRecords,
      skipped: base.skipped + this.skipped,
      commands: base.commands + s.commands,
      acknowledged: base.commands + s.acked,
      errors: base.errors + this.mapFailures + s.failedRecords,
      errorReplies: s.errorReplies,
      failures: this.failures,
      durationMs: Math.round(durationMs * 1000) / 1000,
      recordsPerSec: durationMs > 0 ? Math.round((this.records * 1000) / durationMs) : 0,
      batches: s.batches,
      workers: this.workers,
      workersReason: this.o.map ? 'map' : null, // why the parse stayed on this thread
      reconnects: s.reconnects || 0,
      resentBatches: s.resentBatches || 0,
      ...resent(s.resentCommands || 0, this.o.templates),
      rttMs: sink.rtt ? sink.rtt.summary() : { p50: null, p99: null, max: null },
      ...(sink.cluster ? { cluster: sink.cluster() } : {}),
      bytesRead: this.bytesRead,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      onError: this.o.onError,
      recordsAcknowledged: s.ackedRecords,
      stoppedAt: this.stoppedAt,
      rejects: this.rejects ? { file: this.rejects.path, records: this.rejects.count } : null,
      files: this.files.map(f => f.summary())
    }
  }

  /** Give a failure the summary of what was done before it, and a PipeloadError shape. */
  attach (err, sink) {
    const e = err instanceof PipeloadError ? err : wrapUnexpected(err)
    e.summary = this.summary(sink)
    return e
  }
}

/**
 * Commands sent again after a lost or silent connection, the template commands that are not
 * idempotent (null: a map() function's, unknown), and whether any re-sent one may have run twice.
 */
function resent (commands, templates) {
  const names = notIdempotent(templates)
  return { resentCommands: commands, notIdempotent: names, possibleDuplicates: commands > 0 && (names === null || names.length > 0) }
}

/** The bytes this run reads: a shard's byte range, else the input's size (if known). */
function shareSize (input) {
  const range = input.shard?.range
  return range ? range.end - range.start : input.size ?? null
}

/** Input order of two failures: by line, then byte offset (several records on one line). */
function byPosition (a, b) {
  const end = Number.MAX_SAFE_INTEGER
  return (a.line ?? end) - (b.line ?? end) || (a.offset ?? 0) - (b.offset ?? 0)
}

function wrapUnexpected (err) {
  if (err && err.code === 'EPIPE') return new PipeloadError('PIPELOAD_OUTPUT_CLOSED', 'the output was closed', { cause: err })
  return err
}

module.exports = { Run, call }
