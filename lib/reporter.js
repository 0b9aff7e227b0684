'use strict'

const prettyHrtime = require('pretty-hrtime')
const { where } = require('./errors')

// Human-readable text for progress and summaries. Pure: returns strings, writes nothing.

function int (n) {
  return Math.round(n).toLocaleString('en-US')
}

/** pretty-hrtime wants [seconds, nanoseconds]. */
function duration (ms) {
  const sec = Math.floor(ms / 1000)
  return prettyHrtime([sec, Math.round((ms - sec * 1000) * 1e6)])
}

function bytes (n) {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let u = 0
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++ }
  return `${v.toFixed(1)} ${units[u]}`
}

function ms (v) {
  return v == null ? 'n/a' : `${v < 10 ? v.toFixed(2) : v.toFixed(1)} ms`
}

/** One progress line (no newline): records, rate, bytes and % of the file. */
function formatProgress (p) {
  let s = `${int(p.records)} records · ${int(p.recordsPerSec)} rows/s · ${bytes(p.bytesRead)}`
  if (p.totalBytes) s += ` of ${bytes(p.totalBytes)} (${Math.min(100, (100 * p.bytesRead) / p.totalBytes).toFixed(1)}%)`
  if (p.errors) s += ` · ${int(p.errors)} errors`
  return s
}

/** The end-of-run summary, a few lines. */
function formatSummary (s) {
  const verb = s.dryRun ? `wrote ${s.dryRun} for` : 'loaded'
  const into = s.dryRun ? '' : s.target ? ` into ${s.target}` : ''
  const resumed = s.resumedFrom != null ? ` (resumed after record ${int(s.resumedFrom)})` : ''
  const lines = [
    `${verb} ${int(s.loaded)} of ${int(s.records)} records${resumed} (${int(s.commands)} commands) from ${s.input}${into} in ${duration(s.durationMs)} · ${int(s.recordsPerSec)} rows/s`,
    `errors: ${int(s.errors)}` + (s.errorReplies ? ` (${int(s.errorReplies)} error replies)` : '') +
      ` · batches: ${int(s.batches)}` +
      (s.rttMs && s.rttMs.p50 != null ? ` · batch round trip p50 ${ms(s.rttMs.p50)}, p99 ${ms(s.rttMs.p99)}` : '') +
      (s.reconnects ? ` · ${int(s.reconnects)} reconnects, ${int(s.resentBatches)} batches re-sent` : '')
  ]
  const c = s.cluster
  if (c) {
    lines.push(`cluster: ${int(c.masters)} masters · ${int(c.moved)} MOVED · ${int(c.asked)} ASK · ` +
      `${int(c.retried)} retried · ${int(c.rerouted)} re-routed · ${int(c.refreshes)} slot map refreshes`)
  }
  return lines.join('\n')
}

/** `users.csv:12: WRONGTYPE Operation against a key holding the wrong kind of value` */
function formatFailure (f) {
  const msg = String(f.message)
  const prefix = where(f.file, f.line) + ': '
  return msg.startsWith(prefix) ? msg : prefix + msg
}

module.exports = { formatProgress, formatSummary, formatFailure, duration, bytes }
