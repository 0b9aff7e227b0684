'use strict'

// Which rows can measure what bench ranks. Pure.
//
// A pipeline row keeps at most `window` batches in flight, so it needs at least
// ceil(batches / window) round trips. Fewer than MIN_ROUND_TRIPS of them time a few round
// trips (the ramp up and the last replies), not a rate: such rows are shown but not ranked.
// A row that cannot finish under --max-row-time sends fewer than `count` commands in the
// cap, so its rate is below count / cap, below that of any row that did finish: once one
// has, such rows cannot be the pick and are skipped instead of spending the cap each.

const MIN_ROUND_TRIPS = 10
// The default --count grows so the largest batch size spans MIN_ROUND_TRIPS round trips,
// up to this many commands (set/hset write that many keys per row).
const MAX_DEFAULT_COUNT = 1000000

/** The default count: at least `base`, grown to MIN_ROUND_TRIPS x window x the largest batch size, at most MAX_DEFAULT_COUNT. */
function defaultCount (base, window, batchSizes) {
  const want = MIN_ROUND_TRIPS * window * Math.max(...batchSizes)
  return Math.max(base, Math.min(want, MAX_DEFAULT_COUNT))
}

/** Round trips a row needed at least: batches per window (in a row: one per command). */
function roundTrips (window, batches) {
  return Math.ceil(batches / window)
}

/** The least time `count` commands can take at this batch size and window over a link whose round trip is at least `rttMs`. */
function floorMs (step, count, rttMs) {
  return roundTrips(step.window, Math.ceil(count / step.batchSize)) * rttMs
}

/** A pipeline step that cannot send `count` commands under the cap, whatever the server does. */
function cannotFinish (step, count, rttMs, maxRowTimeMs) {
  return step.mode === 'pipeline' && maxRowTimeMs > 0 && count != null && floorMs(step, count, rttMs) > maxRowTimeMs
}

/** A row that finished under the cap with enough round trips: proof that the steps that cannot finish are slower. */
function finishedRanked (row) {
  return row.mode === 'pipeline' && row.ranked && !row.capped
}

module.exports = { MIN_ROUND_TRIPS, MAX_DEFAULT_COUNT, defaultCount, roundTrips, floorMs, cannotFinish, finishedRanked }
