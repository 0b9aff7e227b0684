'use strict'

// Latency samples for percentiles with bounded memory: the first `size` samples are kept,
// later ones replace a random slot (reservoir sampling), so a 10 GB run costs the same.

class Reservoir {
  constructor (size = 20000) {
    this.size = size
    this.seen = 0
    this.samples = []
    this.max = 0
  }

  add (v) {
    this.seen++
    if (v > this.max) this.max = v
    if (this.samples.length < this.size) this.samples.push(v)
    else {
      const j = Math.floor(Math.random() * this.seen)
      if (j < this.size) this.samples[j] = v
    }
  }

  /** { p50, p99, max } in the unit added, rounded to 3 decimals; nulls when empty. */
  summary () {
    if (this.samples.length === 0) return { p50: null, p99: null, max: null }
    const sorted = Float64Array.from(this.samples).sort()
    return { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), max: round(this.max) }
  }
}

/** Nearest-rank percentile of an ascending array. */
function percentile (sorted, p) {
  if (sorted.length === 0) return null
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]
}

function round (v) {
  return Math.round(v * 1000) / 1000
}

/** The counters of a sink that sends (load's summary reads them): one server's, and a cluster's beside its own. */
function sendStats () {
  return { batches: 0, commands: 0, acked: 0, ackedRecords: 0, errorReplies: 0, failedRecords: 0, reconnects: 0, resentBatches: 0, resentCommands: 0 }
}

/** Count a reconnect and what it sent again; returns the onReconnect event. */
function countReconnect (stats, { cause, target, batches, commands }) {
  stats.reconnects++
  stats.resentBatches += batches
  stats.resentCommands += commands
  return { cause, resentBatches: batches, resentCommands: commands, target }
}

module.exports = { Reservoir, percentile, sendStats, countReconnect }
