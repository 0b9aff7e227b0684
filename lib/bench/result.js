'use strict'

const { GOOD_ENOUGH, BENCH_DEFAULTS } = require('./options')
const { MIN_ROUND_TRIPS, roundTrips } = require('./plan')
const { rowMargin } = require('./margin')
const { describeTarget } = require('../send/connection')

// What bench() resolves with: the runs of each row combined, the fastest row, the
// recommendation.

/** Repeated runs of one row: the median run by ops/s, the spread, the worst memory. */
function combineRuns (runs) {
  const sorted = runs.slice().sort((a, b) => a.opsPerSec - b.opsPerSec)
  const { relMargin, ...median } = sorted[sorted.length >> 1]
  const peak = k => runs.some(r => r[k] === null) ? null : Math.max(...runs.map(r => r[k]))
  const trips = roundTrips(median.window, median.batches)
  const correct = runs.every(r => r.correct)
  return {
    ...median,
    ...rowMargin(runs, median),
    roundTrips: trips,
    // Ranked: a rate over enough round trips, and the server holds what was sent.
    ranked: correct && trips >= MIN_ROUND_TRIPS,
    runs: runs.length,
    opsPerSecMin: sorted[0].opsPerSec,
    opsPerSecMax: sorted[sorted.length - 1].opsPerSec,
    serverReplyPeakBytes: peak('serverReplyPeakBytes'),
    serverTotalPeakBytes: peak('serverTotalPeakBytes'),
    clientRssPeakBytes: peak('clientRssPeakBytes'),
    correct,
    capped: runs.some(r => r.capped)
  }
}

/** bench()'s result: its rows, the median PING, and the steps not run (`skipped` batch sizes, `cantFinish` rows). */
function result (ctx, rows, pingMs, { skipped, cantFinish }) {
  const { o } = ctx
  const base = o.baseline ? rows[0].opsPerSec : 0
  // The fastest row and the recommendation come from ranked rows: a row of a few round
  // trips would win on a slow link by timing little more than one RTT.
  // (When no batched row is ranked, the fastest of all is marked, and nothing is recommended.)
  const measured = rows.filter(r => r.ranked)
  const pool = measured.some(r => r.mode === 'pipeline') ? measured : rows
  let fastest = null
  for (const r of pool) if (!fastest || r.opsPerSec > fastest.opsPerSec) fastest = r
  const good = measured.filter(r => r.mode === 'pipeline' && r.opsPerSec >= GOOD_ENOUGH * fastest.opsPerSec)
  const c = ctx.control.options
  return {
    workload: o.workload,
    input: o.workload === 'file' ? o.input : null,
    count: o.workload === 'file' ? ctx.fileRecords : o.count,
    // The default count, grown so the largest batch size spans enough round trips.
    countGrown: o.workload !== 'file' && !o.countGiven && o.count !== BENCH_DEFAULTS.count,
    rttMs: o.rttMs > 0 ? o.rttMs : null,
    jitterMs: o.jitterMs > 0 ? o.jitterMs : null,
    rttSimulated: o.rttMs > 0,
    pingMs,
    target: describeTarget({ host: c.host, port: c.port, db: c.db, path: c.path }) + (ctx.cluster ? ' (cluster)' : ''),
    window: o.window,
    repeat: o.repeat,
    baseline: o.baseline,
    maxRowTimeMs: o.maxRowTimeMs || null,
    minRoundTrips: MIN_ROUND_TRIPS,
    skippedBatchSizes: skipped,
    skippedRows: cantFinish,
    fastestBatchSize: fastest.mode === 'pipeline' && fastest.ranked ? fastest.batchSize : null,
    recommendedBatchSize: good.length ? good[0].batchSize : null,
    rows: rows.map(r => ({
      ...r,
      speedup: base > 0 ? round(r.opsPerSec / base, 2) : null,
      fastest: r === fastest
    }))
  }
}

function rate (n, ms) {
  return ms > 0 ? Math.round((n * 1000) / ms) : 0
}

function round (v, digits = 3) {
  const f = 10 ** digits
  return Math.round(v * f) / f
}

module.exports = { combineRuns, result, rate, round }
