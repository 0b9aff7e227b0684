'use strict'

const { performance } = require('node:perf_hooks')
const { callbackError } = require('../errors')
const { openControl, connectData } = require('../send/connection')
const { planExport } = require('./options')
const { masterEndpoints } = require('./masters')
const { Requests } = require('./requests')
const { MasterReader } = require('./master')
const { reconnector, runIdOf } = require('./reconnect')
const { checkExportRights } = require('./rights')
const { ExportStats } = require('./stats')
const { encodeCommands } = require('./commands')
const { openOutput } = require('./output')
const { writerOf } = require('./formats')

// exportKeys(): plan, connect (one server, or every master), open the output and the
// format's writer, read every master side by side into it, summary.

/**
 * Export the keyspace of one server or of a whole cluster to a file or stream.
 * @param {object} options see docs/library.md "exportKeys"
 * @returns {Promise<object>} the summary
 */
async function exportKeys (options) {
  const plan = planExport(options)
  const started = performance.now()
  const { connections, faults } = await connect(plan)
  let output = null
  let progress = null
  try {
    const total = await dbsize(connections)
    output = openOutput(plan.output)
    const writer = writerOf(plan.format).createWriter(output.stream, {})
    const emit = serialized(writer)
    const readers = connections.map(c => new MasterReader({ requests: c.requests, plan, emit, stats: c.stats, signal: plan.signal, reconnect: reconnectOf(c, plan), redirects: c.redirects }))
    // With --match or --type DBSIZE counts keys that will not be written: no ETA then.
    const snapshot = () => progressOf(connections, total, output, started, plan.match === undefined && plan.types === undefined)
    progress = plan.onProgress ? ticker(plan, snapshot) : null
    // Then, in a cluster, the keys of slots that moved, read again (counted with the first master's).
    const again = { plan, emit, stats: connections[0].stats, faults }
    const reading = Promise.all(readers.map(r => r.run())).then(() => faults?.reread((requests, keys) => readKeys(requests, keys, again)))
    const moved = await Promise.race([reading, output.failure, ...(progress ? [progress.failure] : [])])
    await Promise.race([writer.end(), output.failure])
    await output.finish()
    progress?.last()
    const summary = summaryOf(plan, connections, total, output, started)
    if (faults) summary.cluster = clusterOf(connections, moved)
    return summary
  } catch (err) {
    output?.close()
    throw err
  } finally {
    progress?.stop()
    faults?.close()
    for (const c of connections) c.requests.close()
  }
}

/** A master's reconnect(cause) (./reconnect.js); it keeps `c` pointing at the connection in use. */
function reconnectOf (c, plan) {
  const o = plan.connection
  const again = reconnector({ endpoint: c.endpoint, runId: c.runId, connectTimeout: o.connectTimeout, retryTimeout: o.retryTimeout, said: o.said, signal: o.signal, owner: c.owner })
  return async cause => {
    const r = await again(cause)
    if (r.target !== c.target) c.stats.failovers++
    c.requests = r.requests
    c.target = r.target
    return r
  }
}

/** A data connection (replies as Buffers) to each server to read. */
async function connect (plan) {
  const o = plan.connection
  const control = await openControl(o)
  let found
  try {
    found = await masterEndpoints(control, o)
    await checkExportRights(control, { ...o, types: plan.types })
  } finally {
    control.disconnect()
  }
  const opened = await Promise.allSettled(found.endpoints.map(ep => connectData(ep, o.connectTimeout ?? 10000, o.signal, o.said?.connectTimeout, { buffers: true })))
  const conns = opened.filter(r => r.status === 'fulfilled').map(r => r.value)
  const failed = opened.find(r => r.status === 'rejected')
  if (failed) {
    for (const c of conns) c.close()
    throw failed.reason
  }
  const connections = conns.map((conn, i) => ({ target: conn.target, endpoint: found.endpoints[i], cluster: found.cluster, requests: new Requests(conn), stats: new ExportStats() }))
  // Each server's run_id: a reconnect to another process starts its SCAN again (./reconnect.js).
  const ids = await Promise.all(connections.map(c => runIdOf(c.requests)))
  connections.forEach((c, i) => { c.runId = ids[i] })
  // Loaded for a cluster only.
  const faults = found.cluster ? require('./cluster-faults').clusterFaults(found, connections, { ...o, match: plan.match }) : null
  return { connections, faults }
}

/** Keys found otherwise than by SCAN (a moved slot's, ./cluster-faults.js), read as a master's. */
function readKeys (requests, keys, { plan, emit, stats, faults }) {
  const reader = new MasterReader({ requests, plan, emit, stats, signal: plan.signal, redirects: faults.redirects(stats) })
  reader.keys = keys
  reader.keyGens = [{ gen: 0, left: keys.length }]
  reader.scanned = true
  return reader.run()
}

/** DBSIZE summed over the servers: the progress's total. */
async function dbsize (connections) {
  const sizes = await Promise.all(connections.map(c => c.requests.send(encodeCommands([['DBSIZE']]), 1)))
  return sizes.reduce((sum, [n]) => sum + (typeof n === 'number' ? n : 0), 0)
}

/** emit(record) for every master into one writer: a write waits for the one before it. */
function serialized (writer) {
  let waiting = null
  return function emit (record) {
    if (waiting !== null) return waiting.then(() => emit(record))
    const w = writer.write(record)
    if (w === undefined) return undefined
    waiting = Promise.resolve(w).finally(() => { waiting = null })
    return waiting
  }
}

function progressOf (connections, total, output, started, eta) {
  const s = ExportStats.sum(connections.map(c => c.stats))
  const elapsedMs = performance.now() - started
  const keysPerSec = elapsedMs > 0 ? s.keys / (elapsedMs / 1000) : 0
  // Keys skipped (deleted, of a module's type) count as done too.
  const done = s.keys + s.deleted + s.changed + Object.values(s.unsupported).reduce((a, b) => a + b, 0)
  const etaMs = eta && total > 0 && s.keys > 0 && done < total ? (total - done) * elapsedMs / done : null
  return { keys: s.keys, total, keysPerSec, bytes: output.stream.bytes, elapsedMs, etaMs }
}

/** onProgress every interval, and once more at the end. */
function ticker (plan, snapshot) {
  const call = () => {
    try {
      plan.onProgress(snapshot())
    } catch (err) {
      throw callbackError('onProgress', err)
    }
  }
  let fail
  const failure = new Promise((resolve, reject) => { fail = reject })
  failure.catch(() => {})
  const timer = setInterval(() => { try { call() } catch (err) { clearInterval(timer); fail(err) } }, plan.progressInterval)
  timer.unref()
  return {
    failure,
    stop () { clearInterval(timer) },
    last () {
      clearInterval(timer)
      call()
    }
  }
}

function summaryOf (plan, connections, total, output, started) {
  const s = ExportStats.sum(connections.map(c => c.stats))
  const durationMs = performance.now() - started
  return {
    keys: s.keys,
    types: s.types,
    parts: s.parts,
    total,
    deleted: s.deleted,
    changed: s.changed,
    restarted: s.restarted,
    otherTypes: s.otherTypes,
    unsupported: s.unsupported,
    batches: s.batches,
    reconnects: s.reconnects,
    rescans: s.rescans,
    bytes: output.stream.bytes,
    output: output.name,
    format: plan.format,
    target: connections.length === 1 && !connections[0].cluster ? connections[0].target : 'the cluster',
    masters: connections.map(c => c.target),
    durationMs: Math.round(durationMs),
    keysPerSec: durationMs > 0 ? Math.round(s.keys / (durationMs / 1000)) : 0
  }
}

/** A cluster's faults (docs/export.md "Faults"): `moved` is faults.reread()'s answer. */
function clusterOf (connections, moved) {
  const s = ExportStats.sum(connections.map(c => c.stats))
  return { failovers: s.failovers, moved: s.moved, asked: s.asked, slotsMoved: moved.slots === null ? null : moved.slots.length, slotsReread: moved.reread }
}

module.exports = { exportKeys }
