'use strict'

const { performance } = require('node:perf_hooks')
const { callbackError, PipeloadError } = require('../errors')
const { openControl } = require('../send/connection')
const { planExport } = require('./options')
const { masterEndpoints, sentinelOwner } = require('./masters')
const { openRequests } = require('./requests')
const { MasterReader } = require('./master')
const { CursorLedger } = require('./cursors')
const { reconnector, runIdOf } = require('./reconnect')
const { checkExportRights } = require('./rights')
const { ExportStats } = require('./stats')
const { encodeCommands } = require('./commands')
const { openOutput } = require('./output')
const { writerOf } = require('./formats')
const { planCheckpoint, ledgersOf, startCheckpoints, nothingLeft, checkpointSummary } = require('./resume')

// exportKeys(): plan, connect (one server, or every master), open the output and the
// format's writer, read every master side by side into it, summary.

/**
 * Export the keyspace of one server or of a whole cluster to a file or stream.
 * @param {object} options see docs/library.md "exportKeys"
 * @returns {Promise<object>} the summary
 */
async function exportKeys (options) {
  const plan = planExport(options)
  const cp = planCheckpoint(plan)
  if (cp?.state?.complete) return nothingLeft(plan, cp)
  const started = performance.now()
  // A cluster's slot map as the export began, kept in its checkpoint: slots moved since, while
  // it was stopped too, have their keys read again at the end (./cluster-faults.js).
  const { connections, faults } = await connect(plan, cp?.state?.slots ?? null)
  let output = null
  let progress = null
  let checkpoints = null
  try {
    const ledgers = ledgersOf(cp, connections.map(c => c.target))
    connections.forEach((c, i) => { c.ledger = ledgers[i] })
    const total = await dbsize(connections)
    output = openOutput(plan.output, cp ? { at: cp.at, members: true } : {})
    const writer = writerOf(plan.format).createWriter(output.stream, plan.writer)
    const shared = sharedWriter(writer)
    const readers = connections.map(c => new MasterReader({ requests: c.requests, plan, stats: c.stats, signal: plan.signal, ledger: c.ledger, reconnect: reconnectOf(c, plan), redirects: c.redirects, ...shared.master() }))
    // With --match or --type DBSIZE counts keys that will not be written: no ETA then.
    const snapshot = () => progressOf({ connections, total, output, started }, plan.match === undefined && plan.types === undefined)
    progress = plan.onProgress ? ticker(plan, snapshot) : null
    // Each master's mark under its address now (a failover's new master: its own cursor).
    const masters = () => connections.map(c => ({ master: c.target, ...c.ledger.mark() }))
    checkpoints = cp ? startCheckpoints(cp, { masters, writer, output, path: plan.output, keys: () => ExportStats.sum(connections.map(c => c.stats)).keys, slots: faults ? () => faults.map.first : null }) : null
    // Then, in a cluster, the keys of slots that moved, read again (counted with the first master's).
    const again = { plan, shared, stats: connections[0].stats, faults }
    const reading = Promise.all(readers.map(r => r.run())).then(() => faults?.reread((requests, keys) => readKeys(requests, keys, again)))
    const moved = await Promise.race([reading, output.failure, ...(progress ? [progress.failure] : []), ...(checkpoints ? [checkpoints.failure] : [])])
    await Promise.race([writer.end(), output.failure])
    await output.finish()
    await checkpoints?.stop(true)
    progress?.last()
    const summary = summaryOf(plan, { connections, total, output, started })
    if (faults) summary.cluster = clusterOf(connections, moved)
    return cp ? { ...summary, checkpoint: checkpointSummary(cp) } : summary
  } catch (err) {
    // Where it stopped (Ctrl-C, a read error), unless the output or the checkpoint failed.
    if (checkpoints && !(err instanceof PipeloadError && err.code === 'PIPELOAD_OUTPUT_FAILED')) await checkpoints.stop(false).catch(() => {})
    await output?.close()
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
  const again = reconnector({ endpoint: c.endpoint, runId: c.runId, connectTimeout: o.connectTimeout, retryTimeout: o.retryTimeout, timeout: o.timeout, said: o.said, signal: o.signal, owner: c.owner })
  return async cause => {
    const r = await again(cause)
    if (r.target !== c.target) c.stats.failovers++
    c.requests = r.requests
    c.target = r.target
    return r
  }
}

/** A data connection (replies as Buffers) to each server to read. */
async function connect (plan, firstSlots) {
  const o = plan.connection
  const control = await openControl(o)
  let found
  try {
    found = await masterEndpoints(control, o)
    await checkExportRights(control, { ...o, types: plan.types })
  } finally {
    control.disconnect()
  }
  const opened = await Promise.allSettled(found.endpoints.map(ep => openRequests(ep, o)))
  const open = opened.filter(r => r.status === 'fulfilled').map(r => r.value)
  const failed = opened.find(r => r.status === 'rejected')
  if (failed) {
    for (const requests of open) requests.close()
    throw failed.reason
  }
  const connections = open.map((requests, i) => ({ target: requests.conn.target, endpoint: found.endpoints[i], cluster: found.cluster, requests, stats: new ExportStats() }))
  // Each server's run_id: a reconnect to another process starts its SCAN again (./reconnect.js).
  const ids = await Promise.all(connections.map(c => runIdOf(c.requests)))
  connections.forEach((c, i) => { c.runId = ids[i] })
  // With Sentinel, a reconnect asks the sentinels where the master is now.
  if (o.sentinels) for (const c of connections) c.owner = sentinelOwner(o)
  // Loaded for a cluster only.
  const faults = found.cluster ? require('./cluster-faults').clusterFaults(found, connections, { ...o, match: plan.match, firstSlots }) : null
  return { connections, faults }
}

/** Keys found otherwise than by SCAN (a moved slot's, ./cluster-faults.js), read as a master's. */
function readKeys (requests, keys, { plan, shared, stats, faults }) {
  // As if one SCAN, the last, had found them.
  const ledger = new CursorLedger({ cursor: '0', done: true })
  ledger.found('0', '0', keys.length)
  const reader = new MasterReader({ requests, plan, stats, signal: plan.signal, ledger, redirects: faults.redirects(stats), ...shared.master() })
  reader.keys = keys
  return reader.run()
}

/** DBSIZE summed over the servers: the progress's total. */
async function dbsize (connections) {
  const sizes = await Promise.all(connections.map(c => c.requests.send(encodeCommands([['DBSIZE']]), 1)))
  return sizes.reduce((sum, [n]) => sum + (typeof n === 'number' ? n : 0), 0)
}

/**
 * One writer for every master: master() gives each its emit(record), where a write waits for
 * the one before it, and hold()/release(): while a master holds the writer (a big key's
 * parts, which come one after the other), the other masters' records wait.
 */
function sharedWriter (writer) {
  let waiting = null // the write before, until the output drains
  let holder = null // the master holding the writer
  let free = null // resolves when it releases it
  let freed = null
  return {
    master () {
      const me = {}
      const emit = record => {
        if (holder !== null && holder !== me) return free.then(() => emit(record))
        if (waiting !== null) return waiting.then(() => emit(record))
        const w = writer.write(record)
        if (w === undefined) return undefined
        waiting = Promise.resolve(w).finally(() => { waiting = null })
        return waiting
      }
      const hold = () => {
        if (holder === me) return undefined
        if (holder !== null) return free.then(hold)
        holder = me
        free = new Promise(resolve => { freed = resolve })
        return undefined
      }
      const release = () => {
        if (holder !== me) return
        holder = null
        freed()
      }
      return { emit, hold, release }
    }
  }
}

/** `run`: { connections, total, output, started }; `eta`: whether an ETA can be told. */
function progressOf ({ connections, total, output, started }, eta) {
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

function summaryOf (plan, { connections, total, output, started }) {
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
