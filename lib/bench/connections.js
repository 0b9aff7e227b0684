'use strict'

const { openData } = require('../send/connection')
const { DEFAULTS: LOAD_DEFAULTS } = require('../run/options')
const { GOOD_ENOUGH } = require('./options')

// bench --connections <list>: how many data connections the rows send over, as the import's
// --connections (lib/send/lanes.js on one server, lanes per master in the cluster sink).
//
// The batch-size rows run over the smallest count given; with two counts or more, a second
// sweep follows: one row per count at the batch size the first one picked (recommended, else
// the fastest, else the largest run). Two short tables read better than their cross product
// (batch sizes x counts rows, each ranked against all): the first answers --batch-size as
// without the option, the second --connections at that batch size, each count measured back
// to back with the others under the same load; one connection is rerun there, not reused.

/**
 * The counts given, resolved: { counts (ascending, each once), auto (why "auto" came to what
 * it did, or null) }; null when the option was not given. Checked as load() checks its own
 * (io-threads.js: "auto" asks the server; Sentinel refuses more than one).
 */
async function resolveConnections (ctx) {
  const { o, control } = ctx
  if (o.connections === null) return null
  const { connectionCount } = require('../send/io-threads')
  const counts = []
  let auto = null
  for (const c of o.connections) {
    const got = await connectionCount(control, { ...o, connections: c, said: o.said.connectTimeout })
    counts.push(got.count)
    if (got.auto) auto = `auto: ${got.count} (${got.auto})`
  }
  return { counts: [...new Set(counts)].sort((a, b) => a - b), auto }
}

/** A synthetic row's sink over `n` data connections to where ctx.via points: the import's Lanes (no reconnect in timing mode). */
async function openLanes (ctx, n, window) {
  const { o } = ctx
  const { Lanes, openConnections } = require('../send/lanes')
  const conns = await openConnections(n, () => openData(ctx.via, { timeout: o.connectTimeout, signal: o.signal, said: o.said.connectTimeout }))
  return new Lanes({ conns, window, timeout: LOAD_DEFAULTS.timeout, signal: o.signal, file: o.workload, onFailure: () => {} })
}

/** The batch size the connection sweep runs at, and why that one. */
function sweepAt (res, o) {
  if (res.recommendedBatchSize != null) return { batchSize: res.recommendedBatchSize, basis: 'recommended' }
  if (res.fastestBatchSize != null) return { batchSize: res.fastestBatchSize, basis: 'fastest' }
  const run = res.rows.filter(r => r.mode === 'pipeline').map(r => r.batchSize)
  return { batchSize: Math.max(...(run.length ? run : o.batchSizes)), basis: 'largest' }
}

/**
 * With two counts or more: one row per count at the batch size picked, run by
 * `runStep(step)`; res gets `connectionSweep`. The fastest and the recommendation as for
 * batch sizes: from ranked rows, the fewest connections within GOOD_ENOUGH of the fastest.
 */
async function sweepConnections (ctx, res, runStep) {
  const { counts } = ctx.connections
  if (counts.length < 2) return
  const at = sweepAt(res, ctx.o)
  const rows = []
  for (const n of counts) rows.push(await runStep({ mode: 'pipeline', batchSize: at.batchSize, window: ctx.o.window, connections: n }))
  const measured = rows.filter(r => r.ranked)
  let fastest = null
  for (const r of measured.length ? measured : rows) if (!fastest || r.opsPerSec > fastest.opsPerSec) fastest = r
  const good = measured.length >= 2 ? measured.filter(r => r.opsPerSec >= GOOD_ENOUGH * fastest.opsPerSec) : []
  const one = rows.find(r => r.connections === 1)
  res.connectionSweep = {
    ...at,
    fastestConnections: fastest.ranked ? fastest.connections : null,
    recommendedConnections: good.length ? good[0].connections : null,
    rows: rows.map(r => ({ ...r, vsOne: one && one.opsPerSec > 0 ? Math.round((100 * r.opsPerSec) / one.opsPerSec) / 100 : null, fastest: r === fastest }))
  }
}

module.exports = { resolveConnections, openLanes, sweepConnections }
