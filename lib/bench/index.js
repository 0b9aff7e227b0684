'use strict'

const crypto = require('node:crypto')
const tls = require('node:tls')
const { performance } = require('node:perf_hooks')
const { PipeloadError, callbackError } = require('../errors')
const { openControl, openData, describeTarget, ask, bounded, scrub } = require('../send/connection')
const { DEFAULTS: LOAD_DEFAULTS } = require('../run/options')
const { encodeCommand } = require('../encode/resp')
const { Pipe } = require('../send/pipe')
const { load } = require('../run/load')
const { normalizeBenchOptions } = require('./options')
const { startDelayProxy } = require('./delay-proxy')
const { WORKLOADS } = require('./workloads')
const { MemorySampler, sampleNewDataConnections, sampleCluster } = require('./sampler')
const { prefixedTemplates } = require('./file')
const { roundTrips, floorMs, cannotFinish, finishedRanked } = require('./plan')
const { sliceMargin } = require('./margin')
const { combineRuns, result, rate, round } = require('./result')
const { deletePrefix, deletePending, safetyTtlMs, addCleanupHint, cleanUp } = require('./cleanup')
const { checkRights } = require('./rights')
const { isCluster, openClusterPipe, openClusterClient } = require('../send/cluster')
const { resolveConnections, openLanes, sweepConnections } = require('./connections')

// Timing mode: the same work at each batch size, plus a baseline that sends one command
// and awaits its reply before the next ("in a row"). Every row runs over the same kind of
// data connection, encoder and sender as an import, so the rows differ only in how many
// commands travel per round trip and how many batches are in flight.
//
// Safety on a shared server: every key is under `pipeload:bench:<random>:`; each row uses
// its own sub-prefix, and its keys are deleted as soon as the row is checked: by name (the
// workload knows them), a file's row by SCAN MATCH of its prefix; a row cut short by an
// error or Ctrl-C is deleted the same way at the end (cleanup.js). Nothing is ever flushed.

const PING_SAMPLES = 5
const FILE_TIMELINE_MS = 2

/**
 * Time the workload in a row and at each batch size.
 * @param {import('../..').BenchOptions} options
 * @returns {Promise<import('../..').BenchResult>}
 */
async function bench (options) {
  const o = normalizeBenchOptions(options)
  const prefix = `pipeload:bench:${crypto.randomBytes(6).toString('hex')}:`
  const owned = !o.redis
  const control = o.redis || await openControl(o)
  const ctx = { o, control, via: control, proxy: null, prefix, rowNo: 0, fileKeys: null, fileRecords: null, fileCommands: null, cluster: null, ttlMs: safetyTtlMs(o) }
  let failed = null
  try {
    // A cluster: rows send through the cluster sink (commands routed by slot); checks and
    // cleanup read through an ioredis Cluster; server memory is sampled on every master.
    const bound = { ms: o.connectTimeout, said: o.said.connectTimeout, signal: o.signal }
    if (await isCluster(control, bound)) {
      if (o.rttMs > 0) throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'rtt: the delay proxy cannot stand in front of a cluster (its nodes redirect to each other)', { option: 'rtt' })
      ctx.cluster = await openClusterClient(control, bound)
    }
    if (o.rttMs > 0) await routeThroughProxy(ctx)
    const ping = await measurePing(ctx.via, bound)
    ctx.minPingMs = ping.min
    await checkRights(ctx, ctx.ttlMs, bound)
    // --connections: the batch-size rows over the fewest given, then a sweep of the counts (connections.js).
    ctx.connections = await resolveConnections(ctx)
    const over = ctx.connections ? { connections: ctx.connections.counts[0] } : {}
    let plan = o.baseline ? [{ mode: 'in-a-row', batchSize: 1, window: 1, ...(ctx.connections ? { connections: 1 } : {}) }] : []
    for (const b of o.batchSizes) plan.push({ mode: 'pipeline', batchSize: b, window: o.window, ...over })
    const sweepRows = ctx.connections && ctx.connections.counts.length > 1 ? ctx.connections.counts.length : 0
    // Batch sizes above a row's command count all send the same single batch: only the
    // smallest of them runs. A file's count is known once a row has read all of it.
    const skipped = []
    const trim = (total, from) => {
      const keep = plan.filter((step, j) => j < from || !isRedundant(step, plan, total))
      for (const step of plan) if (!keep.includes(step)) skipped.push(step.batchSize)
      plan = keep
    }
    if (o.workload !== 'file') trim(o.count, 0)
    const done = new Map()
    // Steps that cannot finish under the cap wait until the others have run (see plan.js).
    const deferred = []
    let trimmed = o.workload !== 'file'
    for (let i = 0; i < plan.length; i++) {
      if (cannotFinish(plan[i], rowCount(ctx), ctx.minPingMs, o.maxRowTimeMs)) { deferred.push(plan[i]); continue }
      done.set(plan[i], await repeatRow(ctx, plan[i], done.size + 1, plan.length + sweepRows))
      if (!trimmed && ctx.fileCommands !== null) { trim(ctx.fileCommands, i + 1); trimmed = true }
    }
    const proof = [...done.values()].some(finishedRanked)
    const cantFinish = []
    for (const step of deferred) {
      if (proof) cantFinish.push(skippedRow(ctx, step))
      else done.set(step, await repeatRow(ctx, step, done.size + 1, plan.length + sweepRows))
    }
    const rows = plan.filter(step => done.has(step)).map(step => done.get(step))
    const res = result(ctx, rows, ping.median, { skipped, cantFinish })
    if (ctx.connections) {
      Object.assign(res, { connections: ctx.connections.counts, connectionsAuto: ctx.connections.auto })
      let next = done.size
      await sweepConnections(ctx, res, step => repeatRow(ctx, step, ++next, plan.length + sweepRows))
    }
    return res
  } catch (err) {
    failed = asPipeloadError(err, control, o.said.connectTimeout ?? `${o.connectTimeout} ms`)
    throw failed
  } finally {
    await cleanUp(ctx, failed)
    if (failed instanceof PipeloadError) addCleanupHint(failed, ctx)
    if (ctx.cluster && ctx.cluster !== control) ctx.cluster.disconnect()
    if (ctx.via !== control) ctx.via.disconnect()
    if (ctx.proxy) await ctx.proxy.close()
    if (owned) control.disconnect()
  }
}

/** --rtt: a delay proxy on loopback in front of the server; the data plane goes through it. */
async function routeThroughProxy (ctx) {
  const { o, control } = ctx
  const c = control.options
  const host = control.stream?.remoteAddress || c.host
  const port = control.stream?.remotePort || c.port
  ctx.proxy = await startDelayProxy({ host, port, rttMs: o.rttMs, jitterMs: o.jitterMs })
  ctx.via = await openControl({
    host: ctx.proxy.host,
    port: ctx.proxy.port,
    username: c.username,
    password: c.password,
    db: c.db,
    // The proxy is on loopback: the certificate is still checked against the real server's
    // name (SNI only for a host name: an IP address there is against RFC 6066).
    tls: c.tls ? { ...(c.tls === true ? {} : c.tls), checkServerIdentity: (_, cert) => tls.checkServerIdentity(c.tls.servername || c.host, cert) } : undefined,
    connectTimeout: o.connectTimeout,
    signal: o.signal
  })
}

/** { median, min } of PING round trips in ms; the least bounds how fast a row can finish. */
async function measurePing (client, bound) {
  const times = []
  for (let i = 0; i < PING_SAMPLES; i++) {
    const t0 = performance.now()
    await ask(client, 'while measuring the round trip (PING)', () => client.ping(), bound)
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return { median: round(times[times.length >> 1]), min: times[0] }
}

/** Commands a row sends: the count, or a file's once a row has read all of it (else null). */
function rowCount (ctx) {
  return ctx.o.workload === 'file' ? ctx.fileCommands : ctx.o.count
}

/** One row, --repeat times, with its progress; the runs combined. */
async function repeatRow (ctx, step, row, rows) {
  const { o } = ctx
  const runs = []
  for (let r = 0; r < o.repeat; r++) {
    const at = {
      row, rows, run: r + 1, runs: o.repeat, ...step,
      count: o.workload === 'file' ? null : o.count, maxRowTimeMs: o.maxRowTimeMs || null
    }
    const progress = o.onProgress ? p => onProgress(o, { ...at, ops: 0, records: null, elapsedMs: 0, ...p }) : null
    if (progress) progress({})
    runs.push(await runRow(ctx, step, progress))
  }
  return combineRuns(runs)
}

/** A step not run: it could not finish under the cap, and a row that did finish is faster. */
function skippedRow (ctx, step) {
  const count = rowCount(ctx)
  return {
    mode: step.mode,
    batchSize: step.batchSize,
    window: step.window,
    reason: 'cannot-finish',
    minRoundTrips: roundTrips(step.window, Math.ceil(count / step.batchSize)),
    minDurationMs: round(floorMs(step, count, ctx.minPingMs))
  }
}

/** A pipeline step whose batch size is above `total` while a smaller one also holds all of it. */
function isRedundant (step, plan, total) {
  return step.mode === 'pipeline' && step.batchSize > total &&
    plan.some(s => s.mode === 'pipeline' && s.batchSize >= total && s.batchSize < step.batchSize)
}

/** The caller's onProgress; what it throws rejects bench() as PIPELOAD_CALLBACK_FAILED (the keys are still deleted). */
function onProgress (o, p) {
  try {
    o.onProgress(p)
  } catch (err) {
    throw callbackError('onProgress', err)
  }
}

/** One run of a step: `row` is its step, its keys' prefix and its progress callback (or null). */
function runRow (ctx, step, progress) {
  const row = { step, prefix: `${ctx.prefix}${++ctx.rowNo}:`, progress }
  return ctx.o.workload === 'file' ? fileRow(ctx, row) : syntheticRow(ctx, row)
}

/**
 * A pipeline row whose batches all fit in the window at once: everything is written before
 * the first reply is due, so the row times one round trip (plus the server's work), not a
 * rate that holds up. Such a row can look fastest on a slow link without meaning it.
 */
function oneRoundTrip (step, batches, capped) {
  return step.mode === 'pipeline' && !capped && batches <= step.window
}

function aborted () {
  return new PipeloadError('PIPELOAD_ABORTED', 'the benchmark was aborted; its keys were deleted')
}

/** One row of a synthetic workload on a fresh data connection. */
async function syntheticRow (ctx, row) {
  const { o, control } = ctx
  const { step, prefix: rowPrefix } = row
  const wl = WORKLOADS[o.workload].create(rowPrefix, ctx.ttlMs)
  // From here on the row's keys are deleted, by name, whatever happens (cleanup.js).
  ctx.pending = { wl }
  if (wl.prepare) await wl.prepare(ctx.cluster || control)
  if (ctx.cluster) return clusterSyntheticRow(ctx, row, wl)
  if (step.connections > 1) return lanesSyntheticRow(ctx, row, wl)
  const conn = await openData(ctx.via, { timeout: o.connectTimeout, signal: o.signal, said: o.said.connectTimeout })
  let sent = 0
  let capped = false
  let pipe
  let mem
  let durationMs
  let timeline
  try {
    const id = await bounded(() => clientId(conn), {
      ms: o.connectTimeout, said: o.said.connectTimeout, signal: o.signal, target: conn.target, stage: 'while asking for the data connection\'s CLIENT ID', cancel: () => conn.close()
    })
    // A server that stops answering mid-row ends the row (no reconnect in timing mode).
    pipe = new Pipe({ conn, window: step.window, timeout: LOAD_DEFAULTS.timeout, signal: o.signal, file: o.workload, onFailure: () => {} })
    const sampler = new MemorySampler({
      control, id, enabled: id !== null, match: c => c.id === String(id), intervalMs: o.sampleIntervalMs
    }).start()
    try {
      ({ sent, capped, durationMs, timeline } = await sendRow(ctx, row, pipe, wl))
    } finally {
      mem = await sampler.stop()
    }
  } finally {
    conn.end()
  }
  const checked = await wl.verify(control, sent, pipe.stats)
  const removed = await deletePending(ctx)
  return {
    mode: step.mode,
    batchSize: step.batchSize,
    window: step.window,
    ...overConnections(step),
    ops: sent,
    batches: pipe.stats.batches,
    durationMs: round(durationMs),
    opsPerSec: rate(sent, durationMs),
    recordsPerSec: null,
    latencyMs: pipe.rtt.summary(),
    ...mem,
    correct: checked && removed === wl.expectedKeys(sent),
    capped,
    oneRoundTrip: oneRoundTrip(step, pipe.stats.batches, capped),
    relMargin: sliceMargin(timeline)
  }
}

/** A row's `connections` (--connections given), as the row and load() take it. */
function overConnections (step) {
  return step.connections === undefined ? {} : { connections: step.connections }
}

/** One row of a synthetic workload over several connections to one server: the import's Lanes. */
async function lanesSyntheticRow (ctx, row, wl) {
  const { o, control } = ctx
  const { step } = row
  // The row's connections are newer than every client there now.
  const sampler = await sampleNewDataConnections(control, o.sampleIntervalMs)
  const lanes = await openLanes(ctx, step.connections, step.window).catch(async err => { await sampler.stop(); throw err })
  let mem
  let sent, capped, durationMs, timeline
  try {
    ({ sent, capped, durationMs, timeline } = await sendRow(ctx, row, lanes, wl))
  } finally {
    mem = await sampler.stop()
    lanes.end()
  }
  return checkedRow(ctx, { step, wl, sink: lanes, mem }, { sent, capped, durationMs, timeline })
}

/** One row of a synthetic workload against a cluster: the import's cluster sink. */
async function clusterSyntheticRow (ctx, row, wl) {
  const { o } = ctx
  const { step } = row
  // The sink's connections (one per master) are newer than every client there now.
  const sampler = await sampleCluster(ctx.cluster, o.sampleIntervalMs)
  let mem
  const { sink, close } = await openClusterPipe(ctx.control, { window: step.window, connections: step.connections, connectTimeout: o.connectTimeout, signal: o.signal, file: o.workload })
    .catch(async err => { await sampler.stop(); throw err })
  let sent = 0
  let capped = false
  let durationMs
  let timeline
  try {
    ({ sent, capped, durationMs, timeline } = await sendRow(ctx, row, sink, wl))
  } finally {
    mem = await sampler.stop()
    close()
  }
  return checkedRow(ctx, { step, wl, sink, mem }, { sent, capped, durationMs, timeline })
}

/** A row sent through a sink of several connections (the cluster sink, Lanes): checked, its keys deleted, as a result row. */
async function checkedRow (ctx, { step, wl, sink, mem }, { sent, capped, durationMs, timeline }) {
  const checked = await wl.verify(ctx.cluster || ctx.control, sent, sink.stats)
  const removed = await deletePending(ctx)
  return {
    mode: step.mode,
    batchSize: step.batchSize,
    window: step.window,
    ...overConnections(step),
    ops: sent,
    batches: sink.stats.batches,
    durationMs: round(durationMs),
    opsPerSec: rate(sent, durationMs),
    recordsPerSec: null,
    latencyMs: sink.rtt.summary(),
    ...mem,
    correct: checked && removed === wl.expectedKeys(sent),
    capped,
    oneRoundTrip: oneRoundTrip(step, sink.stats.batches, capped),
    relMargin: sliceMargin(timeline)
  }
}

/**
 * Send a row's `count` commands of workload `wl` in batches of `step.batchSize` through a
 * sink (a Pipe or the cluster sink) and wait for every reply; stops early at `maxRowTimeMs` (capped).
 */
async function sendRow (ctx, row, sink, wl) {
  const { o } = ctx
  const { step, progress } = row
  let sent = 0
  let capped = false
  const t0 = performance.now()
  const deadline = o.maxRowTimeMs > 0 ? t0 + o.maxRowTimeMs : Infinity
  let reported = t0
  // [ms, commands acknowledged] after each batch is handed over: the row's margin of error.
  const timeline = [[0, 0]]
  try {
    while (sent < o.count) {
      if (o.signal?.aborted) throw aborted()
      const now = performance.now()
      if (now >= deadline) { capped = true; break }
      if (progress && now - reported >= LOAD_DEFAULTS.progressInterval) {
        reported = now
        progress({ ops: sent, elapsedMs: now - t0 })
      }
      const n = Math.min(step.batchSize, o.count - sent)
      await sink.send(wl.batch(sent, n))
      sent += n
      timeline.push([performance.now() - t0, sink.stats.acked])
    }
    await sink.finish()
  } catch (err) {
    // Whatever was sent must land before the keys are deleted, or it could outlive them.
    await sink.finish().catch(() => {})
    throw err
  }
  const durationMs = performance.now() - t0
  timeline.push([durationMs, sink.stats.acked])
  return { sent, capped, durationMs, timeline }
}

/** The data connection's CLIENT ID (for CLIENT LIST ID), or null when not permitted. */
function clientId (conn) {
  return new Promise(resolve => {
    conn.onReply = r => resolve(Number(r))
    conn.onReplyError = () => resolve(null)
    conn.onClose = () => resolve(null)
    conn.write(encodeCommand(['CLIENT', 'ID']))
  })
}

/** One row of the file workload: the real import, its keys under the row prefix. */
async function fileRow (ctx, row) {
  const { o, control } = ctx
  const { step, prefix: rowPrefix, progress } = row
  // A file's keys come from its records: the row prefix is swept (SCAN MATCH) after the row.
  ctx.pending = { prefix: rowPrefix }
  // load() opens its own data connection (on a cluster one per master); ids only grow, so
  // ours is a pipeload-data connection newer than every client there now.
  const sampler = ctx.cluster ? await sampleCluster(ctx.cluster, o.sampleIntervalMs) : await sampleNewDataConnections(control, o.sampleIntervalMs)
  const stop = new AbortController()
  const onAbort = () => stop.abort()
  o.signal?.addEventListener('abort', onAbort)
  const timer = o.maxRowTimeMs > 0 ? setTimeout(onAbort, o.maxRowTimeMs) : null
  let summary
  let capped = false
  let mem
  const timeline = [[0, 0]]
  let reported = -Infinity
  try {
    summary = await load({
      redis: ctx.via,
      input: o.input,
      format: o.format,
      header: o.header,
      delimiter: o.delimiter,
      jsonPath: o.jsonPath,
      maxRecordSize: o.maxRecordSize,
      commands: prefixedTemplates(o, rowPrefix),
      sameKey: o.sameKey,
      ttl: o.ttl,
      batchSize: step.batchSize,
      window: step.window,
      ...overConnections(step),
      onError: 'skip', // a row times the whole file: failed records make it incorrect, not stop it
      signal: stop.signal,
      // Every few ms: the commands sent over time give the row's margin of error.
      progressInterval: FILE_TIMELINE_MS,
      onProgress: p => {
        timeline.push([p.elapsedMs, p.commands])
        if (progress && p.elapsedMs - reported >= LOAD_DEFAULTS.progressInterval) {
          reported = p.elapsedMs
          progress({ ops: p.commands, records: p.records, elapsedMs: p.elapsedMs })
        }
      }
    })
  } catch (err) {
    if (err.code !== 'PIPELOAD_ABORTED' || o.signal?.aborted || !err.summary) throw o.signal?.aborted ? aborted() : err
    summary = err.summary
    capped = true
  } finally {
    clearTimeout(timer)
    o.signal?.removeEventListener('abort', onAbort)
    mem = await sampler.stop()
  }
  const keys = await deletePending(ctx)
  const complete = !capped && summary.errors === 0 && summary.loaded === summary.records
  // Every record acknowledged without an error, and as many keys as the first complete row
  // (normally in a row): pipelining must not change what ends up on the server.
  let correct = summary.errors === 0 && summary.loaded === summary.records && summary.acknowledged === summary.commands && keys > 0
  if (complete && ctx.fileKeys === null) { ctx.fileKeys = keys; ctx.fileRecords = summary.records; ctx.fileCommands = summary.commands }
  if (complete) correct = correct && keys === ctx.fileKeys
  return {
    mode: step.mode,
    batchSize: step.batchSize,
    window: step.window,
    ...overConnections(step),
    ops: summary.acknowledged,
    records: summary.loaded,
    batches: summary.batches,
    durationMs: round(summary.durationMs),
    opsPerSec: rate(summary.acknowledged, summary.durationMs),
    // Records a second, as the import's summary counts them (rows/s): ops/s counts commands.
    recordsPerSec: rate(summary.loaded, summary.durationMs),
    latencyMs: summary.rttMs,
    ...mem,
    correct,
    capped,
    oneRoundTrip: oneRoundTrip(step, summary.batches, capped),
    relMargin: sliceMargin([...timeline, [summary.durationMs, summary.acknowledged]])
  }
}

/**
 * A failure of the control client (a reply error, "Connection is closed", a command
 * timeout) as a PipeloadError naming the server: those are not bugs, and get exit 4.
 */
function asPipeloadError (err, control, connectTimeout) {
  if (err && err.name === 'ReplyError' && /^NOPERM/.test(err.message)) {
    return new PipeloadError('PIPELOAD_PERMISSION_DENIED', `the ACL user "${control.options?.username || 'default'}" may not run a command bench needs: ${err.message}`, { command: err.command?.name })
  }
  if (err instanceof PipeloadError || !err || !/^(ReplyError|AbortError|MaxRetriesPerRequestError|Error)$/.test(err.name) ||
    !/Connection is closed|Command timed out|Stream isn't writeable/.test(err.message)) return err
  const c = control.options || {}
  const target = describeTarget({ host: control.stream?.remoteAddress || c.host, port: control.stream?.remotePort || c.port, db: c.db, path: c.path })
  if (/Command timed out/.test(err.message)) {
    return new PipeloadError('PIPELOAD_TIMEOUT', `Redis at ${target} did not answer a command of the benchmark within ${connectTimeout} (connect timeout)`, { target })
  }
  return new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${target}: ${scrub(err.message, [c.password, c.sentinelPassword])}`, { target })
}

module.exports = { bench, deletePrefix }
module.exports = { bench, deletePrefix }
