'use strict'

// How far a row's ops/s could move by chance: its margin of error. Pure.
//
// One run: the row's commands are cut into SLICES equal parts by when they were
// acknowledged; the row's time is the sum of the slice times, so the row's rate is as
// uncertain as the mean slice time: Student's t (95%, SLICES - 1 degrees of freedom) times
// the standard error of the slice times, over their mean. A stall in one slice widens it.
// Repeated runs: half the spread of the runs' ops/s (the ± shown), compared as ranges.

const SLICES = 5
// Two-sided 95% quantile of Student's t with SLICES - 1 = 4 degrees of freedom.
const T95 = 2.776

/**
 * The time at which `target` commands were done, interpolated between timeline points.
 * @param {Array<[number, number]>} timeline [ms since the row started, commands done], ascending
 */
function timeAt (timeline, target) {
  for (let i = 1; i < timeline.length; i++) {
    const [t1, n1] = timeline[i]
    if (n1 < target) continue
    const [t0, n0] = timeline[i - 1]
    return n1 === n0 ? t1 : t0 + ((t1 - t0) * (target - n0)) / (n1 - n0)
  }
  return null
}

/**
 * The relative margin (0.05 = ±5%) of a run's rate from its timeline; null when the run
 * has too few points to cut into SLICES parts that each end at a different time.
 * @param {Array<[number, number]>} timeline starts at [0, 0]
 */
function sliceMargin (timeline) {
  if (!timeline || timeline.length < SLICES + 1) return null
  const total = timeline[timeline.length - 1][1]
  if (total < SLICES) return null
  const times = []
  let prev = 0
  for (let k = 1; k <= SLICES; k++) {
    const t = timeAt(timeline, (total * k) / SLICES)
    if (t === null || t <= prev) return null
    times.push(t - prev)
    prev = t
  }
  const mean = times.reduce((a, b) => a + b, 0) / SLICES
  const sd = Math.sqrt(times.reduce((a, d) => a + (d - mean) ** 2, 0) / (SLICES - 1))
  return (T95 * sd) / Math.sqrt(SLICES) / mean
}

/** { marginOpsPerSec, marginFrom } of a row combined from `runs` (each with opsPerSec and margin). */
function rowMargin (runs, median) {
  if (runs.length > 1) {
    const rates = runs.map(r => r.opsPerSec)
    return { marginOpsPerSec: Math.round((Math.max(...rates) - Math.min(...rates)) / 2), marginFrom: 'runs' }
  }
  const m = runs[0].relMargin
  return m == null ? { marginOpsPerSec: null, marginFrom: null } : { marginOpsPerSec: Math.round(m * median.opsPerSec), marginFrom: 'slices' }
}

/**
 * Whether `a` is ahead of `b` beyond chance: repeated runs whose ranges do not overlap, or
 * one run each whose rate ± margin do not overlap. null when a margin is unknown.
 */
function clearlyAhead (a, b) {
  if (a.marginFrom === 'runs' && b.marginFrom === 'runs') return a.opsPerSecMin > b.opsPerSecMax
  if (a.marginOpsPerSec == null || b.marginOpsPerSec == null) return null
  return a.opsPerSec - a.marginOpsPerSec > b.opsPerSec + b.marginOpsPerSec
}

module.exports = { sliceMargin, rowMargin, clearlyAhead, timeAt, SLICES, T95 }
