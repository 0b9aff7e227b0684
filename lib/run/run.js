'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError, callbackError } = require('../errors')
const { notIdempotent } = require('../encode/idempotent')
const { ALREADY_WRITTEN } = require('../encode/restore')
const { checkUrlResumable, inputIdentity } = require('./checkpoint')
const { Counts } = require('./counts')
const { ErrorPolicy } = require('./error-policy')
const { BatchLog } = require('./batch-log')
const { abortable } = require('../read/abortable')
const { formatOf } = require('../read/formats')
const { timeLeftMs } = require('./reporter')

// One load's run of its plan (run/plan.js), as load() (load.js) drives it: the counts
// (./counts.js), the error policy (./error-policy.js), the batches sent in order for the
// checkpoint and the rejects file (./batch-log.js), the writing of both in step with the
// acknowledged batches, progress, and the summary. Run#pump sends the encoded batches to the sink.

/** Call a caller's callback on the run's own path: what it throws rejects load() as PIPELOAD_CALLBACK_FAILED. */
function call (fn, name, arg) {
  try {
    return fn(arg)
  } catch (err) {
    throw callbackError(name, err)
  }
}

class Run {
  /**
   * @param {Readonly<object>} plan the load's plan (./plan.js)
   * @param {{ checkpointer: object|null, rejects: object|null }} outputs the files it writes
   */
  constructor (plan, { checkpointer = null, rejects = null } = {}) {
    const o = plan.options
    const state = plan.checkpoint?.state ?? null
    this.o = o
    this.plan = plan
    // The inputs as opened: a URL of several is replaced by its description once requested.
    this.inputs = [...plan.inputs]
    this.label = plan.label ?? plan.inputs[0].name
    this.checkpointer = checkpointer
    this.counts = new Counts({ inputs: plan.inputs, state })
    this.policy = new ErrorPolicy(o)
    // Of one input: batch starts, where a resumed run can start reading (the checkpoint's
    // `next`). A JSON document is only read from its start.
    const only = plan.inputs.length === 1 ? plan.inputs[0] : null
    this.log = new BatchLog({ starts: Boolean(checkpointer && only && only.kind === 'bytes' && formatOf(only.format).midway), rejects })
    this.rejects = rejects
    this.resumedFrom = state ? state.records : null
    this.resumed = o.resume ? state !== null : null // with resume 'if-present': whether there was a checkpoint
    // Resumed from a checkpoint not closed cleanly: what was acknowledged after its last
    // write is sent again (null: not resumed, or an older pipeload's checkpoint, which does not say).
    this.uncleanStop = state && typeof state.clean === 'boolean' ? !state.clean : null
    // An error reply the sinks count as written: a restore's stream entry already there.
    this.written = o.restore ? ALREADY_WRITTEN : null
    this.current = 0 // the input being read
    this.workers = 0 // the most parse worker threads an input used (workers 'auto' decides per input)
    this.resumeShape = null // the source's: header, fields per record, gzip (see Reader#resumeShape)
    this.offset = only && only.range ? only.range.offset : 0 // a ranged body's first byte in the input
    this.counts.bytesRead = this.offset // what onProgress says before the first batch
    this.failures = []
    this.lastProgress = plan.startedAt
    this.progressTimer = null
    // Where the time left is measured from (reporter.js timeLeftMs): a resumed run's first batch.
    this.pace = state ? null : { ms: plan.startedAt, bytes: 0 }
    this.target = null
    this.stoppedAt = null // where the first record not sent starts (null when everything read was sent)
    this.sink = null
    this.connections = null // per server (master): { count, auto } once connected (load.js)
    // A checkpoint or rejects file that could not be written: the run stops at the next batch.
    this.outputError = null
  }

  /** A batch is fully acknowledged (in input order): the checkpoint may move past it. */
  acked (b) {
    this.counts.acked(b)
    // Called from a socket's reply handler: a write failure must not be thrown from here.
    try {
      const start = this.log.acked(this.counts.done.records)
      if (start !== null) this.counts.passed(start)
      if (this.checkpointer && this.checkpointer.due()) this.writeCheckpoint(false, false)
    } catch (err) {
      this.outputFailed(err)
    }
  }

  /** The checkpoint's `next`: a record start and what a reader needs to begin there. */
  nextState () {
    const next = this.counts.done.next
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

  outputFailed (err) {
    if (this.outputError === null) this.outputError = err
  }

  checkpointState (complete, clean) {
    const { done, files } = this.counts
    const state = {
      ...this.counts.totals(),
      line: done.line,
      ...(done.next !== null ? { next: this.nextState() } : {}),
      complete,
      clean
    }
    // Of several inputs: which are done (a resumed run does not read them again), and how
    // far the others are.
    if (this.inputs.length > 1) state.files = files.map(f => f.state())
    return state
  }

  /** A URL of several inputs got its response (`input`, its description now): its identity is complete. */
  opened (i, input, skip) {
    this.inputs[i] = input
    if (!this.checkpointer) return
    const identity = inputIdentity(input)
    // Records of it are skipped: it must be what the checkpoint counted them in.
    if (skip > 0) checkUrlResumable(this.o.checkpoint, this.plan.checkpoint.state.inputs[i], identity)
    this.checkpointer.identity[i] = identity
  }

  started (i) {
    this.current = i
    this.counts.files[i].started = true
  }

  /** Input i was read to its end. */
  ended (i) {
    this.counts.files[i].ended = true
  }

  /** Input i's n parse workers handed over to this thread ({ from, line, offset, reason }). */
  fellBack (i, fallback) {
    this.counts.files[i].fallback = fallback
  }

  /**
   * Write the checkpoint, with the rejects file's size on disk at that point. Not after an
   * output failed: the checkpoint must not move past failures the rejects file lacks.
   * `clean`: the run has stopped and nothing it sent is unanswered (see ./checkpoint.js).
   */
  writeCheckpoint (complete, clean) {
    if (this.outputError !== null) return
    const state = this.checkpointState(complete, clean)
    if (this.rejects) state.rejects = this.rejects.sync()
    this.checkpointer.write(state)
  }

  /**
   * Write the checkpoint as it stands (end of run, abort, failure): clean when every command
   * sent was answered. Commands still without a reply (a lost connection, a Ctrl-C that
   * stopped waiting) may have run: a resume re-sends them, as after a kill -9.
   */
  saveCheckpoint (complete) {
    if (!this.checkpointer) return
    const s = this.sink?.stats
    try {
      this.writeCheckpoint(complete, !s || s.acked >= s.commands)
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

  /**
   * A failed record; `batch`: the batch it was sent in (or the sink's copy of it), if any;
   * `mapped`: it failed before it was sent (an input or mapping failure, not a reply).
   */
  fail (failure, batch, mapped = false) {
    const raw = failure.raw
    delete failure.raw // kept out of the summary: it can be large
    if (failure.offset === undefined) delete failure.offset
    if (failure.element === undefined) delete failure.element
    if (failure.rowGroup === undefined) delete failure.rowGroup
    if (this.failures.length < this.o.maxFailures) this.failures.push(failure)
    this.counts.failed(batch?.fileIndex ?? this.current, mapped)
    this.log.failed(batch?.seq, { ...failure, raw })
    if (this.o.onFailure) this.callback(this.o.onFailure, 'onFailure', failure)
    this.policy.failed(failure, this.errorCount())
  }

  errorCount () {
    return this.counts.mapFailures + (this.sink ? this.sink.stats.failedRecords : 0)
  }

  /** Where the first record not sent starts (in the input being read). */
  stopAt (pos, file = this.inputs[this.current].name) {
    this.stoppedAt = pos ? { file, line: pos.line ?? null, offset: pos.offset ?? null } : null
  }

  /** Send every encoded batch; on a failure, wait for what was sent, then rethrow. */
  async pump (batches, sink) {
    this.sink = sink
    this.armProgress(sink)
    try {
      await this.sendAll(batches, sink)
    } finally {
      clearTimeout(this.progressTimer)
    }
  }

  async sendAll (batches, sink) {
    const { signal } = this.o
    try {
      // Each wait for the next batch ends when the signal aborts: an input that stalls (stdin,
      // a FIFO, a stream, an iterable, a parse worker reading one) does not hold the abort back.
      for await (const batch of signal ? abortable(batches, signal, () => this.aborted()) : batches) {
        // The window's room first (one server): an error reply that comes while this batch
        // waits for it is seen below, and the batch is not sent.
        if (batch.cmds && sink.room) await sink.room()
        // An error reply (abort), one failure too many, or an output that cannot be
        // written: send nothing more.
        if (this.policy.stopped || this.outputError !== null) {
          this.stopAt(batch.records ? batch.first : null, batch.file)
          break
        }
        this.log.sent(batch, this.counts.records)
        this.counts.read(batch, this.offset)
        if (this.pace === null) this.pace = { ms: performance.now(), bytes: this.counts.bytesRead }
        for (const f of batch.failures) {
          this.fail({ file: batch.file, line: f.line, offset: f.offset ?? undefined, element: f.element, rowGroup: f.rowGroup, code: f.code, message: f.message, source: 'input', raw: f.raw }, batch, true)
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
      finished = !this.policy.stopped // a run stopped by its error policy is not finished: --resume goes on
    } finally {
      this.saveCheckpoint(finished)
      this.closeRejects()
    }
    if (this.outputError !== null) throw this.outputError
    this.progress(sink, true)
    if (this.policy.stopped) throw this.policy.error(this.errorCount())
  }

  /** The signal aborted: nothing more is sent. */
  aborted () {
    // An iterable's records are numbered: the first not sent is the next one. A file's next
    // record starts at a position only reading it would tell (a quoted CSV field may span
    // lines): left null.
    if (this.inputs[this.current].kind === 'records') this.stopAt({ line: this.counts.base.records + this.counts.records + 1 })
    return new PipeloadError('PIPELOAD_ABORTED', 'the load was aborted')
  }

  /** Input the reader could not get past: a failed record too, and where the run stopped. */
  inputFailed (err) {
    if (err instanceof PipeloadError && err.code === 'PIPELOAD_INPUT_FAILED') { // the record could not be produced: not read, not failed
      if (err.line != null || err.offset != null) this.stopAt({ line: err.line, offset: err.offset })
      return
    }
    if (!(err instanceof PipeloadError) || !err.file || (err.code !== 'PIPELOAD_INPUT_INVALID' && err.code !== 'PIPELOAD_RECORD_TOO_LARGE')) return
    if (err.line == null && err.offset == null) return // the file cannot be read at all
    this.counts.unreadable(this.current) // the record that could not be read
    this.fail({ file: err.file, line: err.line ?? null, offset: err.offset ?? undefined, code: err.code, message: err.message, source: 'input', raw: err.raw }, undefined, true)
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
      this.log.close()
    } catch (err) {
      this.outputFailed(err)
    }
  }

  /**
   * onProgress also while the run waits (for input, for replies, for a reconnect), not only
   * as batches pass: a log gets its line per interval from a stalled run too. What it throws
   * stops the run at the next batch, as a failed output does.
   */
  armProgress (sink) {
    if (!this.o.onProgress) return
    const wait = Math.max(1, this.lastProgress + this.o.progressInterval - performance.now())
    this.progressTimer = setTimeout(() => {
      try {
        this.progress(sink, false)
      } catch (err) {
        this.outputFailed(err)
        return
      }
      this.armProgress(sink) // from the last call, the batches' or this one
    }, wait)
    this.progressTimer.unref()
  }

  progress (sink, force) {
    if (!this.o.onProgress) return
    const now = performance.now()
    if (!force && now - this.lastProgress < this.o.progressInterval) return
    this.lastProgress = now
    const elapsedMs = now - this.plan.startedAt
    const { records, mapFailures, bytesRead } = this.counts
    const totalBytes = this.totalBytes()
    call(this.o.onProgress, 'onProgress', {
      records,
      commands: sink.stats.commands,
      errors: mapFailures + sink.stats.failedRecords,
      bytesRead,
      totalBytes,
      elapsedMs,
      etaMs: this.pace === null ? null : timeLeftMs(bytesRead, totalBytes, this.pace, now),
      recordsPerSec: elapsedMs > 0 ? (records * 1000) / elapsedMs : 0
    })
  }

  /** The sizes of the inputs this run reads, added up; null when one is not known (yet). */
  totalBytes () {
    let total = 0
    for (let i = this.plan.resume.from; i < this.inputs.length; i++) {
      const size = shareSize(this.inputs[i])
      if (size == null) return null
      total += size
    }
    return total
  }

  summary (sink) {
    const durationMs = performance.now() - this.plan.startedAt
    const s = sink.stats
    const { base, records, skipped, mapFailures, bytesRead, files } = this.counts
    return {
      input: this.label,
      shard: this.o.shard ? `${this.o.shard.index}/${this.o.shard.count}` : null,
      target: this.o.dryRun ? null : this.target,
      dryRun: this.o.dryRun || null,
      resumedFrom: this.resumedFrom,
      resumed: this.resumed,
      uncleanStop: this.uncleanStop,
      checkpoint: this.o.checkpoint || null,
      records: base.records + records,
      loaded: base.loaded + s.ackedRecords - s.failedRecords,
      skipped: base.skipped + skipped,
      commands: base.commands + s.commands,
      acknowledged: base.commands + s.acked,
      errors: base.errors + mapFailures + s.failedRecords,
      errorReplies: s.errorReplies,
      failures: this.failures,
      durationMs: Math.round(durationMs * 1000) / 1000,
      recordsPerSec: durationMs > 0 ? Math.round((records * 1000) / durationMs) : 0,
      batches: s.batches,
      workers: this.workers,
      workersReason: this.o.map ? 'map' : null, // why the parse stayed on this thread
      reconnects: s.reconnects || 0,
      resentBatches: s.resentBatches || 0,
      ...resent(s.resentCommands || 0, this.o.restore ? [] : this.o.templates, this.uncleanStop === true),
      rttMs: sink.rtt ? sink.rtt.summary() : { p50: null, p99: null, max: null },
      ...(sink.cluster ? { cluster: sink.cluster() } : {}),
      ...(this.connections && this.o.connections !== 1 ? { connections: { ...this.connections } } : {}),
      bytesRead,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      onError: this.o.onError,
      recordsAcknowledged: s.ackedRecords,
      stoppedAt: this.stoppedAt,
      rejects: this.rejects ? { file: this.rejects.path, records: this.rejects.count } : null,
      files: files.map(f => f.summary())
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
 * idempotent (null: a map() function's, unknown), and whether any re-sent one may have run
 * twice: re-sent after a reconnect, or by a resume from a checkpoint not closed cleanly
 * (`unclean`: what was acknowledged after its last write, not counted). A restore's commands
 * are given as none ([]): they are idempotent by construction (lib/encode/restore.js: each key
 * replaced, a list part trimmed to where it starts, a stream entry already there counted as
 * written), so neither a re-send nor a resume after kill -9 can duplicate anything, and no
 * warning says it might.
 */
function resent (commands, templates, unclean) {
  const names = notIdempotent(templates)
  return { resentCommands: commands, notIdempotent: names, possibleDuplicates: (commands > 0 || unclean) && (names === null || names.length > 0) }
}

/** The bytes this run reads: a shard's byte range, else the input's size (if known). */
function shareSize (input) {
  const range = input.shard?.range
  return range ? range.end - range.start : input.size ?? null
}

function wrapUnexpected (err) {
  if (err && err.code === 'EPIPE') return new PipeloadError('PIPELOAD_OUTPUT_CLOSED', 'the output was closed', { cause: err })
  return err
}

module.exports = { Run, call }
