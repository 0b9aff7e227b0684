'use strict'

const prettyHrtime = require('pretty-hrtime')
const { where } = require('../errors')

// Human-readable text for progress and summaries. Pure: returns strings, writes nothing.

function int (n) {
  return Math.round(n).toLocaleString('en-US')
}

/** `1 record`, `2 records`, `1,000 batches`: a count and its noun, singular for exactly 1. */
function count (n, one, many = one + 's') {
  return `${int(n)} ${n === 1 ? one : many}`
}

// Why a run parsed on this thread though it could have had workers (summary.workersReason).
const WORKERS_REASONS = { map: '--map runs on the main thread' }

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

/** A clock time as pv prints it: 0:07, 12:34, 1:02:03. */
function clock (ms) {
  const t = Math.max(0, Math.round(ms / 1000))
  const h = Math.floor(t / 3600)
  const m = Math.floor((t % 3600) / 60)
  const sec = String(t % 60).padStart(2, '0')
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`
}

/**
 * The time left (ms) when the size of the input is known: its bytes still to read, at the
 * pace the run has read them since `from` ({ ms, bytes }: the run's start; of a resumed run,
 * its first batch, as the records it skips are read again far faster than they are loaded).
 * For a gzip file, of the compressed bytes. Null when nothing was read since `from`.
 */
function timeLeftMs (bytesRead, totalBytes, from, now) {
  if (!totalBytes || bytesRead <= from.bytes) return null
  return ((now - from.ms) * Math.max(0, totalBytes - bytesRead)) / (bytesRead - from.bytes)
}

/**
 * One progress line (no newline): records, rate, bytes and % of the file, the time so far
 * and the time left (`etaMs`, see timeLeftMs) when it is known.
 */
function formatProgress (p) {
  let s = `${count(p.records, 'record')} · ${int(p.recordsPerSec)} rows/s · ${bytes(p.bytesRead)}`
  if (p.totalBytes) s += ` of ${bytes(p.totalBytes)} (${(100 * Math.min(1, p.bytesRead / p.totalBytes)).toFixed(1)}%)`
  if (p.errors) s += ` · ${count(p.errors, 'error')}`
  if (p.elapsedMs != null) {
    s += ` · ${clock(p.elapsedMs)} elapsed`
    if (p.etaMs != null) s += ` · ETA ${clock(p.etaMs)}`
  }
  return s
}

/** The end-of-run summary, a few lines. */
function formatSummary (s) {
  const verb = s.dryRun ? `wrote ${s.dryRun} for` : 'loaded'
  const into = s.dryRun ? '' : s.target ? ` into ${s.target}` : ''
  const resumed = s.resumedFrom != null ? ` (resumed after record ${int(s.resumedFrom)})`
    : s.resumed === false ? ` (no checkpoint at ${s.checkpoint} to resume: started from the first record)` : ''
  // No rate for a run that loaded nothing: "0 of 1 records … 4 rows/s" measures nothing; nor
  // for a resume that found nothing left to read (its records are the runs' it resumes).
  const fresh = s.records - (s.resumedFrom ?? 0)
  const rate = s.resumedFrom != null && fresh === 0 ? ' · nothing was left to load'
    : s.loaded > 0 && fresh > 0 ? ` · ${int(s.recordsPerSec)} rows/s` : ''
  const lines = [
    `${verb} ${int(s.loaded)} of ${count(s.records, 'record')}${resumed} (${count(s.commands, 'command')}) from ${s.input}${s.shard ? ` (shard ${s.shard})` : ''}${into} in ${duration(s.durationMs)}${rate}`,
    `errors: ${int(s.errors)}` + (s.errorReplies ? ` (${count(s.errorReplies, 'error reply', 'error replies')})` : '') +
      (s.skipped ? ` · skipped: ${int(s.skipped)} (map returned null)` : '') +
      ` · batches: ${int(s.batches)}` +
      (s.workers != null ? ` · parse workers: ${s.workers}${WORKERS_REASONS[s.workersReason] ? ` (${WORKERS_REASONS[s.workersReason]})` : ''}` : '') +
      (s.rttMs && s.rttMs.p50 != null ? ` · batch round trip p50 ${ms(s.rttMs.p50)}, p99 ${ms(s.rttMs.p99)}` : '') +
      (s.reconnects ? ` · ${count(s.reconnects, 'reconnect')}, ${count(s.resentBatches, 'batch', 'batches')} re-sent` : '') +
      (s.resentCommands ? (s.reconnects ? ` (${count(s.resentCommands, 'command')})` : ` · ${count(s.resentCommands, 'command')} re-sent`) : '')
  ]
  if (s.files && s.files.length > 1) for (const f of s.files) lines.push(formatFileLine(f))
  if (s.files) for (const f of s.files) if (f.fallback) lines.push(fallbackLine(f))
  const c = s.cluster
  if (c) {
    lines.push(`cluster: ${count(c.masters, 'master')} · ${int(c.moved)} MOVED · ${int(c.asked)} ASK · ` +
      `${int(c.retried)} retried · ${int(c.rerouted)} re-routed · ${int(c.refreshes)} slot map refreshes`)
  }
  const n = s.connections
  if (n) lines.push(`connections: ${n.count} per ${c ? 'master' : 'server'}${n.auto ? ` (auto: ${n.auto})` : ''}`)
  if (s.possibleDuplicates) lines.push(...duplicatesLines(s))
  return lines.join('\n')
}

/**
 * Re-sent commands that are not idempotent: the data may hold some of them twice. One line
 * per cause: a reconnect (counted), a resume after an unclean stop (not counted: what was
 * acknowledged after the checkpoint's last write is not known).
 */
function duplicatesLines (s) {
  const what = s.notIdempotent === null
    ? 'the commands of map() are not known to be idempotent'
    : `${s.notIdempotent.join(', ')} ${s.notIdempotent.length === 1 ? 'is' : 'are'} not idempotent`
  const lines = []
  if (s.resentCommands) lines.push(`warning: ${count(s.resentCommands, 'command')} ${s.resentCommands === 1 ? 'was' : 'were'} re-sent after a lost connection and may have run twice: ${what} (docs/resume.md "Re-sent commands")`)
  if (s.uncleanStop) lines.push(`warning: resumed after an unclean stop (the checkpoint was not closed: kill -9, a crash, or replies not awaited), so the commands acknowledged after its last write were re-sent and may have run twice: ${what} (docs/resume.md "Re-sent commands")`)
  return lines
}

/** One input of several: `  b.csv: 3 of 4 records loaded · 1 error`. */
function formatFileLine (f) {
  if (f.started === false) return `  ${f.input}: not started (the run stopped before it)`
  return `  ${f.input}: ${int(f.loaded)} of ${count(f.records, 'record')} loaded` +
    (f.errors ? ` · ${count(f.errors, 'error')}` : '') +
    (f.skipped ? ` · ${int(f.skipped)} skipped` : '')
}

/** An input its n parse workers handed over to one thread: where and why. */
function fallbackLine (f) {
  const { from, line, offset, reason } = f.fallback
  return `parse workers: read on one thread, not by ${from}, from ${where(f.input, line)} (byte ${offset}): ${reason}`
}

/**
 * `users.csv:12: WRONGTYPE Operation against a key holding the wrong kind of value`; a record
 * of a one-line JSON document by its element: `users.json:1: element [4711] (byte 90210): …`.
 */
function formatFailure (f) {
  const msg = String(f.message)
  const prefix = where(f.file, f.line) + ': '
  if (msg.startsWith(prefix)) return msg
  if (f.rowGroup != null) return `${prefix}(row group ${f.rowGroup}) ${msg}`
  return f.element != null ? `${prefix}element [${f.element}] (byte ${f.offset}): ${msg}` : prefix + msg
}

module.exports = { formatProgress, timeLeftMs, formatSummary, formatFailure, duration, bytes, int, count, clock }
