'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError } = require('../errors')
const { normalizeLoadOptions } = require('./options')
const { describeInput, openRecords } = require('../read/input')
const { openUrl } = require('../read/http-input')
const { openWorkerBatches, workerEligible } = require('../encode/worker-batches')
const { openParallelBatches, parallelEligible, autoWorkers } = require('../encode/parallel')
const { createMapper } = require('../encode/mapper')
const { Pipe } = require('../send/pipe')
const { DryRunSink } = require('../send/dry-run')
const { encodeRecords } = require('../encode/encoder')
const { openControl, dataEndpoint, connectData, dataReconnector } = require('../send/connection')
const { isCluster, openClusterSink } = require('../send/cluster')
const { Checkpointer, readCheckpoint, checkResumable, inputIdentity } = require('./checkpoint')
const { skipRecords } = require('../read/skip')
const { RejectsFile } = require('./rejects')
const { formatFailure } = require('./reporter')

/**
 * Load a dataset into Redis. Resolves with the run's summary; rejects with a
 * PipeloadError (carrying `summary` when records were already sent).
 * @param {import('../..').LoadOptions} options
 * @returns {Promise<import('../..').Summary>}
 */
async function load (options) {
  const o = normalizeLoadOptions(options)
  const startedAt = performance.now()
  const input = describeInput(o)
  if (input.kind === 'url') await openUrl(input, o) // the response's headers: format, size, identity
  // Outputs first: a checkpoint or rejects path that cannot be written stops the run
  // before anything is read or sent.
  let resume, rejects
  try {
    resume = openCheckpoint(o, input)
    rejects = o.rejects ? new RejectsFile(o.rejects, resume.state?.rejects ?? null) : null
  } catch (err) {
    if (input.http) input.stream.destroy() // the response body is not read
    throw err
  }
  try {
    const skip = resume.state?.records ?? 0
    const run = new Run(o, input, startedAt, resume, rejects)
    // The source first, so template and header errors come before connecting; but
    // `workers: 'auto'` may depend on the target being a cluster: then the sink first.
    const auto = o.workers === 'auto' && !o.dryRun && autoWorkers({ cluster: true }) > 0
    let opened = auto ? await openSink(o, input, run) : null
    let source
    try {
      source = await openSource(input, o, skip, opened ? Boolean(opened.sink.cluster) : o.dryRun ? false : undefined)
    } catch (err) {
      if (opened) await opened.close()
      throw err
    }
    try {
      if (!opened) opened = await openSink(o, input, run)
      const { sink, close } = opened
      if (sink.cluster && source.useSlots) source.useSlots() // the workers hash the slots
      try {
        await run.pump(source.batches, sink)
        return run.summary(sink)
      } catch (err) {
        throw run.attach(err, sink)
      } finally {
        await close()
      }
    } finally {
      await source.close()
    }
  } finally {
    if (rejects) try { rejects.close() } catch {} // pump() closed it and reported a failure to write
    if (input.http) input.stream.destroy() // a run stopped early must not keep the download open
  }
}

/**
 * Where the input is parsed and encoded: on this thread (workers 0, records, map()), in
 * one worker thread (workers 1, and JSON documents, which cannot be cut), or in n worker
 * threads on chunks of the input (n ≥ 2). `cluster`: whether the sink is a cluster, when
 * already known (workers 'auto').
 */
async function openSource (input, o, skip, cluster) {
  const n = o.workers === 'auto' ? autoWorkers({ cluster, dryRun: Boolean(o.dryRun) }) : o.workers
  if (n === 0 || !workerEligible(input, o)) return encodeInThread(input, o, skip)
  if (n === 1 || !parallelEligible(input, o)) return openWorkerBatches(input, o, skip)
  return openParallelBatches(input, o, skip, n, cluster ?? o.cluster === true)
}

/** Encoded batches from the input, encoded on this thread; the first `skip` records dropped. */
async function encodeInThread (input, o, skip) {
  const src = await openRecords(input, o)
  const mapper = src.empty ? null : createMapper({ templates: o.templates, map: o.map, ttl: o.ttl, ttlKeys: o.ttlKeys, replace: o.replace, vectors: o.vectors, shape: src.shape })
  const batches = encodeRecords(skip ? skipRecords(src.batches, skip, o.checkpoint) : src.batches, mapper, o, skip)
  return {
    batches,
    close: async () => {
      input.stream?.destroy?.() // a read still waiting on an idle stream ends now
      await batches.return()
    }
  }
}

/** The --checkpoint file and, with --resume, the state to continue from. */
function openCheckpoint (o, input) {
  if (!o.checkpoint) return { checkpointer: null, state: null }
  const identity = inputIdentity(input)
  const state = o.resume ? readCheckpoint(o.checkpoint) : null
  if (state) checkResumable(o.checkpoint, state, identity)
  const checkpointer = new Checkpointer(o.checkpoint, identity)
  checkpointer.check()
  return { checkpointer, state }
}

async function openSink (o, input, run) {
  const onFailure = (f, batch) => run.fail(f, batch)
  if (o.dryRun) {
    const output = o.output || process.stdout
    const sink = new DryRunSink({ output, name: output === process.stdout ? 'stdout' : 'the dry-run output' })
    return { sink, close: async () => {} }
  }
  const owned = !o.redis
  const control = o.redis || await openControl(o)
  let conn
  let endpoint
  try {
    if (await clusterMode(o, control)) return openClusterSink(o, input, run, control, owned)
    endpoint = dataEndpoint(control)
    conn = await connectData(endpoint, o.connectTimeout, o.signal)
  } catch (err) {
    if (owned) control.disconnect()
    throw err
  }
  const sink = new Pipe({
    conn,
    reconnect: dataReconnector(control, endpoint, o.connectTimeout, o.signal), // with Sentinel: asks where the master is now
    window: o.window,
    timeout: o.timeout,
    retryTimeout: o.retryTimeout,
    signal: o.signal,
    file: input.name,
    onFailure,
    onAck: b => run.acked(b),
    onReconnect: e => run.reconnected(e)
  })
  run.target = conn.target
  return {
    sink,
    close: async () => {
      sink.conn.end() // the Pipe's current connection: after a reconnect, not the first one
      if (owned) control.disconnect()
    }
  }
}

/** cluster: true (required), false (never), undefined (asked with INFO cluster). */
async function clusterMode (o, control) {
  if (o.cluster === false) return false
  const detected = await isCluster(control, { ms: o.connectTimeout, signal: o.signal })
  if (o.cluster === true && !detected) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'cluster is set but the server has cluster support disabled (INFO cluster: cluster_enabled:0)', { option: 'cluster' })
  }
  return detected
}

/** The state of one load: counters, failures, progress. */
class Run {
  constructor (o, input, startedAt, resume = {}, rejects = null) {
    this.o = o
    this.input = input
    this.startedAt = startedAt
    this.checkpointer = resume.checkpointer || null
    // Totals of the runs this one resumes; this run's counts add to them.
    const st = resume.state
    this.base = { records: st?.records ?? 0, loaded: st?.loaded ?? 0, errors: st?.errors ?? 0, commands: st?.commands ?? 0, skipped: st?.skipped ?? 0 }
    this.resumedFrom = st ? st.records : null
    this.done = { records: 0, loaded: 0, errors: 0, commands: 0, skipped: 0, line: st?.line ?? null } // acknowledged prefix
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
    const skipped = b.skipped || 0
    const mapFailed = b.records - b.ends.length - skipped
    d.records += b.records
    d.skipped += skipped
    d.loaded += b.ends.length - b.failed
    d.errors += mapFailed + b.failed
    d.commands += b.cmds
    if (b.lines.length) d.line = b.lines[b.lines.length - 1]
    // Called from a socket's reply handler: a write failure must not be thrown from here.
    try {
      if (this.rejects) this.writeAckedRejects()
      if (this.checkpointer && this.checkpointer.due()) this.writeCheckpoint(false)
    } catch (err) {
      this.outputFailed(err)
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
    return {
      records: base.records + done.records,
      loaded: base.loaded + done.loaded,
      errors: base.errors + done.errors,
      commands: base.commands + done.commands,
      skipped: base.skipped + done.skipped,
      line: done.line,
      complete
    }
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

  reconnected (event) {
    if (this.o.onReconnect) this.o.onReconnect(event)
  }

  /** A failed record; `batch`: the batch it was sent in (or the sink's copy of it), if any. */
  fail (failure, batch) {
    const raw = failure.raw
    delete failure.raw // kept out of the summary: it can be large
    if (failure.offset === undefined) delete failure.offset
    if (this.failures.length < this.o.maxFailures) this.failures.push(failure)
    if (this.rejects) {
      const entry = batch ? this.byLines.get(batch.lines) : undefined
      const list = entry ? entry.failures : this.late
      list.push({ ...failure, raw })
    }
    if (this.o.onFailure) this.o.onFailure(failure)
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
    return new PipeloadError('PIPELOAD_TOO_MANY_ERRORS', `more than ${this.o.maxErrors.toLocaleString('en-US')} records failed (max-errors ${this.o.maxErrors}); the last: ${formatFailure(f)}`,
      { file: f.file, line: f.line, offset: f.offset, failure: f })
  }

  /** Where the first record not sent starts. */
  stopAt (pos) {
    this.stoppedAt = pos ? { file: this.input.name, line: pos.line ?? null, offset: pos.offset ?? null } : null
  }

  /** Send every encoded batch; on a failure, wait for what was sent, then rethrow. */
  async pump (batches, sink) {
    const { signal } = this.o
    this.sink = sink
    try {
      for await (const batch of batches) {
        // An error reply (abort), one failure too many, or an output that cannot be
        // written: send nothing more.
        if (this.stop !== null || this.outputError !== null) {
          this.stopAt(batch.records ? batch.first : null)
          break
        }
        this.records += batch.records
        this.skipped += batch.skipped || 0
        this.bytesRead = batch.bytesRead
        if (this.rejects) this.track(batch)
        for (const f of batch.failures) {
          this.mapFailures++
          this.fail({ file: this.input.name, line: f.line, offset: f.offset ?? undefined, code: f.code, message: f.message, source: 'input', raw: f.raw }, batch)
        }
        await sink.send(batch)
        if (batch.stop) { // abort: the failed record and all after it are not sent
          this.stopAt(batch.stop)
          break
        }
        this.progress(sink, false)
        if (signal?.aborted) {
          // An iterable's records are numbered: the first not sent is the next one. A file's
          // next record starts at a position only reading it would tell (a quoted CSV field
          // may span lines): left null.
          if (this.input.kind === 'records') this.stopAt({ line: this.base.records + this.records + 1 })
          throw new PipeloadError('PIPELOAD_ABORTED', 'the load was aborted')
        }
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
      finished = true
    } finally {
      this.saveCheckpoint(finished)
      this.closeRejects()
    }
    if (this.outputError !== null) throw this.outputError
    this.progress(sink, true)
    if (this.stop !== null) throw this.stopError()
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
    this.o.onProgress({
      records: this.records,
      commands: sink.stats.commands,
      errors: this.mapFailures + sink.stats.failedRecords,
      bytesRead: this.bytesRead,
      totalBytes: this.input.size ?? null,
      elapsedMs,
      recordsPerSec: elapsedMs > 0 ? (this.records * 1000) / elapsedMs : 0
    })
  }

  summary (sink) {
    const durationMs = performance.now() - this.startedAt
    const s = sink.stats
    const base = this.base
    return {
      input: this.input.name,
      target: this.o.dryRun ? null : this.target,
      dryRun: this.o.dryRun || null,
      resumedFrom: this.resumedFrom,
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
      reconnects: s.reconnects || 0,
      resentBatches: s.resentBatches || 0,
      rttMs: sink.rtt ? sink.rtt.summary() : { p50: null, p99: null, max: null },
      ...(sink.cluster ? { cluster: sink.cluster() } : {}),
      bytesRead: this.bytesRead,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      onError: this.o.onError,
      recordsAcknowledged: s.ackedRecords,
      stoppedAt: this.stoppedAt,
      rejects: this.rejects ? { file: this.rejects.path, records: this.rejects.count } : null
    }
  }

  /** Give a failure the summary of what was done before it, and a PipeloadError shape. */
  attach (err, sink) {
    const e = err instanceof PipeloadError ? err : wrapUnexpected(err)
    e.summary = this.summary(sink)
    return e
  }
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

module.exports = { load }
