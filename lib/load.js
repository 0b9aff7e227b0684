'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError } = require('./errors')
const { normalizeLoadOptions } = require('./options')
const { describeInput, openRecords } = require('./input')
const { openWorkerBatches, workerEligible } = require('./worker-batches')
const { createMapper } = require('./mapper')
const { Pipe } = require('./pipe')
const { DryRunSink } = require('./dry-run')
const { encodeRecords } = require('./encoder')
const { openControl, dataEndpoint, connectData } = require('./connection')

/**
 * Load a dataset into Redis. Resolves with the run's summary; rejects with a
 * PipeloadError (carrying `summary` when records were already sent).
 * @param {import('..').LoadOptions} options
 * @returns {Promise<import('..').Summary>}
 */
async function load (options) {
  const o = normalizeLoadOptions(options)
  const startedAt = performance.now()
  const input = describeInput(o)
  const source = workerEligible(input, o) ? await openWorkerBatches(input, o) : await encodeInThread(input, o)
  const run = new Run(o, input, startedAt)
  try {
    const { sink, close } = await openSink(o, input, run)
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
}

/** Encoded batches from the input, encoded on this thread. */
async function encodeInThread (input, o) {
  const src = await openRecords(input, o)
  const mapper = src.empty ? null : createMapper({ templates: o.templates, map: o.map, ttl: o.ttl, shape: src.shape })
  const batches = encodeRecords(src.batches, mapper, o)
  return { batches, close: async () => { await batches.return() } }
}

async function openSink (o, input, run) {
  const onFailure = f => run.fail(f)
  if (o.dryRun) {
    const sink = new DryRunSink({ output: o.output || process.stdout })
    return { sink, close: async () => {} }
  }
  const owned = !o.redis
  const control = o.redis || await openControl(o)
  let conn
  const endpoint = dataEndpoint(control)
  try {
    conn = await connectData(endpoint, o.connectTimeout)
  } catch (err) {
    if (owned) control.disconnect()
    throw err
  }
  const sink = new Pipe({
    conn,
    reconnect: () => connectData(endpoint, o.connectTimeout),
    window: o.window,
    timeout: o.timeout,
    retryTimeout: o.retryTimeout,
    file: input.name,
    onFailure,
    onReconnect: e => run.reconnected(e)
  })
  run.target = conn.target
  return {
    sink,
    close: async () => {
      conn.end()
      if (owned) control.disconnect()
    }
  }
}

/** The state of one load: counters, failures, progress. */
class Run {
  constructor (o, input, startedAt) {
    this.o = o
    this.input = input
    this.startedAt = startedAt
    this.records = 0
    this.mapFailures = 0
    this.failures = []
    this.bytesRead = 0
    this.lastProgress = startedAt
    this.target = null
  }

  reconnected (event) {
    if (this.o.onReconnect) this.o.onReconnect(event)
  }

  fail (failure) {
    if (this.failures.length < this.o.maxFailures) this.failures.push(failure)
    if (this.o.onFailure) this.o.onFailure(failure)
  }

  /** Send every encoded batch; on a failure, wait for what was sent, then rethrow. */
  async pump (batches, sink) {
    const { signal } = this.o
    try {
      for await (const batch of batches) {
        this.records += batch.records
        this.bytesRead = batch.bytesRead
        for (const f of batch.failures) {
          this.mapFailures++
          this.fail({ file: this.input.name, line: f.line, code: f.code, message: f.message, source: 'input' })
        }
        await sink.send(batch)
        this.progress(sink, false)
        if (signal?.aborted) throw new PipeloadError('PIPELOAD_ABORTED', 'the load was aborted')
      }
    } catch (err) {
      // Whatever was read before the failure is still loaded: wait for its replies.
      if (!sink.fatal) await sink.finish().catch(() => {})
      throw err
    }
    await sink.finish()
    this.progress(sink, true)
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
    return {
      input: this.input.name,
      target: this.o.dryRun ? null : this.target,
      dryRun: this.o.dryRun || null,
      records: this.records,
      loaded: s.ackedRecords - s.failedRecords,
      commands: s.commands,
      acknowledged: s.acked,
      errors: this.mapFailures + s.failedRecords,
      errorReplies: s.errorReplies,
      failures: this.failures,
      durationMs: Math.round(durationMs * 1000) / 1000,
      recordsPerSec: durationMs > 0 ? Math.round((this.records * 1000) / durationMs) : 0,
      batches: s.batches,
      reconnects: s.reconnects || 0,
      resentBatches: s.resentBatches || 0,
      rttMs: sink.rtt ? sink.rtt.summary() : { p50: null, p99: null, max: null },
      bytesRead: this.bytesRead,
      peakRssBytes: process.resourceUsage().maxRSS * 1024
    }
  }

  /** Give a failure the summary of what was done before it, and a PipeloadError shape. */
  attach (err, sink) {
    const e = err instanceof PipeloadError ? err : wrapUnexpected(err)
    e.summary = this.summary(sink)
    return e
  }
}

function wrapUnexpected (err) {
  if (err && err.code === 'EPIPE') return new PipeloadError('PIPELOAD_OUTPUT_CLOSED', 'the output was closed', { cause: err })
  return err
}

module.exports = { load }
