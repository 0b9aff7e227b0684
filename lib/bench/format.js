'use strict'

const { duration, bytes } = require('../run/reporter')
const { GOOD_ENOUGH } = require('./options')
const { clearlyAhead } = require('./margin')

// The bench result as text: an aligned table and a bar chart for people, CSV and Markdown
// for machines and docs. Pure: returns strings.

const WORKLOAD_TEXT = {
  incr: 'INCR one key',
  set: 'SET a key per command',
  hset: 'HSET a 3-field hash per command',
  ping: 'PING',
  file: 'import of'
}

function int (n) {
  return Math.round(n).toLocaleString('en-US')
}

function ms (v) {
  if (v == null) return 'n/a'
  if (v < 1) return `${v.toFixed(3)} ms`
  return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ms`
}

function mem (v) {
  return v == null ? 'n/a' : bytes(v)
}

function spread (r) {
  if (!r.runs || r.runs < 2 || !r.opsPerSec) return ''
  return ` ±${Math.round((50 * (r.opsPerSecMax - r.opsPerSecMin)) / r.opsPerSec)}%`
}

function speedup (r) {
  return r.speedup == null ? 'n/a' : `${r.speedup < 10 ? r.speedup.toFixed(1) : int(r.speedup)}x`
}

function batchLabel (r) {
  return r.mode === 'in-a-row' ? 'in a row' : int(r.batchSize)
}

/** " · 2 connections": what the batch-size rows ran over, with --connections (else ''). */
function overText (res) {
  if (!res.connections) return ''
  const n = res.connections[0]
  return ` · ${n} connection${n === 1 ? '' : 's'}${res.connectionsAuto ? ` (${res.connectionsAuto})` : ''}`
}

/** Lines above the table: what ran, where, and over what link. */
function header (res) {
  const what = res.workload === 'file'
    ? `import of ${res.input} (${res.count == null ? '?' : int(res.count)} records)`
    : `${WORKLOAD_TEXT[res.workload]} × ${int(res.count)}`
  const link = res.rttSimulated
    ? `RTT ${ms(res.rttMs)} SIMULATED by a delay proxy on loopback${res.jitterMs ? ` (jitter ±${ms(res.jitterMs / 2)} each way)` : ''}; PING through it ${ms(res.pingMs)}`
    : `RTT not simulated; PING ${ms(res.pingMs)}`
  return [
    `pipeload bench · ${what} · ${res.target} · window ${res.window}${overText(res)}${res.repeat > 1 ? ` · median of ${res.repeat} runs` : ''}`,
    `link: ${link}`
  ]
}

// A row shorter than this is at the mercy of one stall (a GC pause, a busy neighbour).
const SHORT_ROW_MS = 100
const WITHIN = `${Math.round(100 * (1 - GOOD_ENOUGH))}%`

const COLUMNS = [
  { title: 'batch', right: true, cell: r => batchLabel(r) },
  { title: 'commands', right: true, cell: r => int(r.ops) + (r.capped ? '*' : '') },
  { title: 'records', right: true, file: true, cell: r => r.records == null ? 'n/a' : int(r.records) },
  { title: 'time', right: true, cell: r => duration(r.durationMs) },
  { title: 'ops/s', right: true, cell: r => int(r.opsPerSec) + spread(r) },
  // Records a second, as the import's summary counts them: ops/s counts commands.
  { title: 'rows/s', right: true, file: true, cell: r => r.recordsPerSec == null ? 'n/a' : int(r.recordsPerSec) },
  { title: 'speed-up', right: true, baseline: true, cell: r => speedup(r) },
  { title: 'batch p50', right: true, cell: r => ms(r.latencyMs.p50) },
  { title: 'p99', right: true, cell: r => ms(r.latencyMs.p99) },
  { title: 'max', right: true, cell: r => ms(r.latencyMs.max) },
  { title: 'server replies', right: true, cell: r => mem(r.serverReplyPeakBytes) },
  { title: 'client RSS', right: true, cell: r => mem(r.clientRssPeakBytes) },
  { title: 'ok', right: false, cell: r => r.correct ? 'yes' : 'NO' },
  { title: '', right: false, cell: r => [r.fastest ? '◀ fastest' : '', r.oneRoundTrip ? '† one round trip' : '', fewTrips(r) ? `‡ ${int(r.roundTrips)} round trips` : ''].filter(Boolean).join(', ') }
]

// Fewer round trips than this measure the ramp and the last replies, not a rate.
const MIN_ROUND_TRIPS = 10

/** A pipeline row of more than one round trip but too few to rank (‡). */
function fewTrips (r) {
  return r.mode === 'pipeline' && !r.oneRoundTrip && r.roundTrips != null && r.roundTrips < MIN_ROUND_TRIPS
}

/** A row that counts for "fastest" and the recommendation (results from before roundTrips: not one round trip). */
function ranked (r) {
  return r.ranked ?? (r.correct && !r.oneRoundTrip)
}

/** The measured rows and the skipped ones (res.skippedRows), in batch size order, in a row first. */
function displayRows (res) {
  const order = r => (r.mode === 'in-a-row' ? 0 : r.batchSize)
  return [...res.rows, ...(res.skippedRows || [])].sort((a, b) => order(a) - order(b))
}

/** The cells of a skipped row: its batch size, dashes, and why. */
function skippedCells (cols, r, res) {
  return cols.map(c => c.title === 'batch' ? batchLabel(r) : c.title === '' ? `§ skipped: cannot finish in ${duration(res.maxRowTimeMs)}` : '—')
}

/** The columns for this result: records and rows/s for a file, speed-up with a baseline. */
function columns (res) {
  return COLUMNS.filter(c => (!c.file || res.workload === 'file') && (!c.baseline || res.baseline !== false))
}

function list (sizes) {
  return sizes.map(int).join(', ')
}

/** The commands one row sends: the count, or for a file what a complete row sent. */
function rowCommands (res) {
  if (res.workload !== 'file') return res.count
  const whole = res.rows.filter(r => !r.capped)
  return whole.length ? Math.max(...whole.map(r => r.ops)) : null
}

/** "at 12,000 ops/s (40x in a row)"; a file: "at 6,000 rows/s (12,000 ops/s, 40x in a row)". */
function speedText (r, res) {
  const extra = []
  if (res.workload === 'file' && r.recordsPerSec != null) extra.push(`${int(r.opsPerSec)} ops/s`)
  if (res.baseline !== false && r.mode !== 'in-a-row') extra.push(`${speedup(r)} in a row`)
  const main = res.workload === 'file' && r.recordsPerSec != null ? `${int(r.recordsPerSec)} rows/s` : `${int(r.opsPerSec)} ops/s`
  return `at ${main}` + (extra.length ? ` (${extra.join(', ')})` : '')
}

/** "±4%": a row's margin of error, "±?" when unknown. */
function margin (r) {
  return r.marginOpsPerSec == null || !r.opsPerSec ? '±?' : `±${Math.round((100 * r.marginOpsPerSec) / r.opsPerSec)}%`
}

/** The ranked batched rows, fastest first. */
function rated (res) {
  return res.rows.filter(r => r.mode === 'pipeline' && ranked(r)).sort((a, b) => b.opsPerSec - a.opsPerSec)
}

/** "1.8x": how many times a's rate b's is (two decimals under 1.1, none from 10). */
function times (a, b) {
  if (!(b > 0)) return 'n/a'
  const x = a / b
  return `${x < 1.095 ? x.toFixed(2) : x < 10 ? x.toFixed(1) : int(x)}x`
}

/** The fastest ranked batched row against the next: how sure the recommendation is. */
function sureness (res) {
  const [first, next] = rated(res)
  if (!next) return null
  const a = int(first.batchSize)
  const b = int(next.batchSize)
  if (res.repeat > 1) {
    if (next.opsPerSecMax >= first.opsPerSecMin) {
      return `how sure: not a clear winner: the runs of ${a}${spread(first)} and ${b}${spread(next)} overlap`
    }
    return `how sure: each of the ${res.repeat} runs of ${a}${spread(first)} beat every run of ${b}${spread(next)}, the next fastest`
  }
  // One run each: rate ± the 95% margin from five slices of the run (lib/bench/margin.js).
  // That margin measures the jitter within a run, not how much a rerun differs (three
  // reruns of one command flipped the winner): one run never names a winner.
  const faster = `${a} ran ${times(first.opsPerSec, next.opsPerSec)} as fast as ${b}`
  const margins = `${a} ${margin(first)}, ${b} ${margin(next)}: 95% margins from 5 slices of one run each`
  const ahead = clearlyAhead(first, next)
  if (ahead === null) {
    return `how sure: not known: ${faster} in one run each, too few batches to measure a margin (${margins}); --repeat 5 measures it`
  }
  if (!ahead) return `how sure: not a clear winner: ${faster}, within the margins (${margins})`
  return `how sure: one run: --repeat 3 to know (${faster}, the next fastest, beyond the margins: ${margins}; they measure the jitter within a run, not how much a rerun differs)`
}

/**
 * The unranked batched rows (†, ‡: all larger than every ranked row) that may be faster
 * than the pick: their own rate beat the fastest's, or the rate still rose at the largest
 * ranked batch size. Once a larger ranked row ran slower, an unranked one slower still is
 * not said to be faster.
 */
function mayBeFaster (res, rec) {
  const fastest = res.rows.find(r => r.fastest)
  const sizes = rated(res).map(r => r.batchSize)
  const rising = fastest.mode === 'pipeline' && fastest.batchSize === Math.max(...sizes)
  const unmeasured = res.rows.filter(r => r.mode === 'pipeline' && !ranked(r) && (r.oneRoundTrip || fewTrips(r)) && r.batchSize > rec)
  return { rising, rows: unmeasured.filter(r => rising || r.opsPerSec > fastest.opsPerSec) }
}

/** "1,000 and up not measured (†): may be faster", or '' when none may be. */
function unmeasuredText ({ rising, rows }) {
  if (!rows.length) return ''
  const names = rising ? `${int(rows[0].batchSize)}${rows.length > 1 ? ' and up' : ''}` : list(rows.map(r => r.batchSize))
  const marks = [...new Set(rows.map(r => r.oneRoundTrip ? '†' : '‡'))].join(', ')
  return `${names} not measured (${marks}): may be faster`
}

/** Why no batch size is recommended when fewer than two batched rows measured a rate. */
function noPick (res) {
  const [only] = rated(res)
  if (!only) {
    return res.rows.every(r => r.mode !== 'pipeline' || r.oneRoundTrip)
      ? 'every batched row fit in one round trip (see †)'
      : `no batched row spanned ${MIN_ROUND_TRIPS} round trips (see †, ‡)`
  }
  const marks = [...new Set(res.rows.filter(r => r.oneRoundTrip || fewTrips(r)).map(r => r.oneRoundTrip ? '†' : '‡'))]
  return `only batch size ${int(only.batchSize)} measured a rate, nothing to compare it with${marks.length ? ` (see ${marks.join(', ')})` : ''}`
}

function notes (res) {
  const out = []
  const total = rowCommands(res)
  if (res.rows.some(r => r.capped)) {
    out.push(`* stopped after ${duration(res.maxRowTimeMs)} (--max-row-time); ops/s is over the commands sent`)
  }
  const skipped = res.skippedBatchSizes || []
  if (skipped.length) {
    const kept = res.rows.find(r => r.mode === 'pipeline' && total != null && r.batchSize >= total)
    out.push(`batch size${skipped.length > 1 ? 's' : ''} ${list(skipped)} skipped: a row sends ${total == null ? 'fewer' : int(total)} commands, ` +
      `so ${skipped.length > 1 ? 'they' : 'it'} would send the same single batch as ${kept ? int(kept.batchSize) : 'a smaller size'}`)
  }
  const single = res.rows.filter(r => r.oneRoundTrip)
  if (single.length) {
    const smallest = single[0].batchSize
    const more = res.workload === 'file'
      ? 'a larger file'
      : `a larger --count (10 × window × batch size: ${int(10 * res.window * smallest)} for ${int(smallest)})`
    out.push(`† one round trip: ${list(single.map(r => r.batchSize))} — every batch of the row was in flight at once ` +
      `(${single.length > 1 ? 'each' : 'it'} sent at most --window ${res.window} batches), so the row times one round trip, not a rate: ` +
      `left out of "fastest"; ${more} measures ${single.length > 1 ? 'them' : 'it'}`)
  }
  const few = res.rows.filter(fewTrips)
  if (few.length) {
    const biggest = few[few.length - 1].batchSize
    const more = res.workload === 'file'
      ? 'a larger file'
      : `a larger --count (${MIN_ROUND_TRIPS} × window × batch size: ${int(MIN_ROUND_TRIPS * res.window * biggest)} for ${int(biggest)})`
    out.push(`‡ fewer than ${MIN_ROUND_TRIPS} round trips: ${few.map(r => `${int(r.batchSize)} (${int(r.roundTrips)})`).join(', ')} — ` +
      `too few windows of batches to time a rate: left out of "fastest"; ${more} measures ${few.length > 1 ? 'them' : 'it'}`)
  }
  const cant = res.skippedRows || []
  if (cant.length) {
    const proof = res.rows.filter(r => r.mode === 'pipeline' && ranked(r) && !r.capped)[0]
    const need = cant.map(r => `${int(r.batchSize)} (${int(r.minRoundTrips)} round trips, at least ${duration(r.minDurationMs)})`).join(', ')
    out.push(`§ skipped: ${need} — cannot finish under --max-row-time ${duration(res.maxRowTimeMs)} at the least PING; ` +
      `a row that cannot finish sends fewer commands in that time than one that did${proof ? ` (${int(proof.batchSize)})` : ''}, so it cannot be the pick`)
  }
  if (res.countGrown) {
    out.push(`--count ${int(res.count)}: the default, grown so the largest batch size spans ${MIN_ROUND_TRIPS} round trips (at most 1,000,000)`)
  }
  const larger = res.workload === 'file' ? 'a larger file' : 'a larger --count'
  const short = res.rows.filter(r => !r.capped && !r.oneRoundTrip && r.durationMs < SHORT_ROW_MS)
  if (short.length) {
    out.push(`under ${SHORT_ROW_MS} ms: ${short.map(batchLabel).join(', ')} — one stall changes such a row a lot; ` +
      (res.repeat > 1 ? `${larger} steadies it` : `--repeat 5 (or ${larger}) steadies it`))
  }
  out.push('batch p50/p99/max: time from writing a batch to its last reply; server replies: peak reply memory (CLIENT LIST omem) of the connection')
  const bad = res.rows.filter(r => !r.correct)
  if (bad.length) out.push(`NOT CORRECT: ${bad.map(batchLabel).join(', ')} — the server does not hold what was sent`)
  const fastest = res.rows.find(r => r.fastest)
  const rec = res.recommendedBatchSize
  // Larger sizes not measured (†, ‡) may be faster, when the data admits it.
  const above = rec != null ? mayBeFaster(res, rec) : { rising: false, rows: [] }
  const verdict = above.rows.length ? 'the best measured here' : 'a good --batch-size here'
  if (fastest && fastest.mode === 'pipeline' && (!ranked(fastest) || rated(res).length < 2)) {
    // The one ranked batched row is the fastest ranked row, not a pick: no "fastest" here.
    const which = ranked(fastest) ? `${int(fastest.batchSize)} ran` : `fastest of them: ${int(fastest.batchSize)}`
    out.push(`no batch size to recommend: ${noPick(res)}; ${which} ${speedText(fastest, res)}`)
  } else if (fastest && fastest.mode === 'in-a-row') {
    out.push(`fastest: in a row ${speedText(fastest, res)}: batching did not help here` +
      (rec != null ? `; smallest batch within ${WITHIN} of it: ${int(rec)}` : ''))
  } else if (fastest) {
    const f = int(fastest.batchSize)
    if (rec === fastest.batchSize) {
      out.push(`fastest, and no smaller batch within ${WITHIN} of it: batch size ${f} ${speedText(fastest, res)}: ${verdict}`)
    } else {
      out.push(`fastest: batch size ${f} ${speedText(fastest, res)}` +
        (rec != null ? `; smallest batch within ${WITHIN} of it: ${int(rec)} (${verdict}: as fast, less memory)` : ''))
    }
  }
  const sure = rec != null ? sureness(res) : null
  const unmeasured = unmeasuredText(above)
  if (sure || unmeasured) out.push(sure ? sure + (unmeasured ? `; ${unmeasured}` : '') : `how sure: ${unmeasured}`)
  return out
}

/** The aligned table with header and notes, and the connection sweep's after them. */
function formatTable (res) {
  const { connectionsTable } = require('./format-connections')
  return batchTable(res) + (res.connectionSweep ? '\n' + connectionsTable(res) : '')
}

/** The batch-size table with header and notes. */
function batchTable (res) {
  const cols = columns(res)
  const rows = displayRows(res).map(r => r.reason ? skippedCells(cols, r, res) : cols.map(c => c.cell(r)))
  return [...header(res), '', ...alignedLines(cols, rows), '', ...notes(res)].join('\n') + '\n'
}

/**
 * The lines of an aligned table: the titles, their underlines and `rows` (cells as text),
 * each column padded to its widest cell, right-aligned where `cols[i].right`.
 */
function alignedLines (cols, rows) {
  const widths = cols.map((c, i) => Math.max(c.title.length, ...rows.map(r => r[i].length)))
  const line = vals => vals.map((v, i) => cols[i].right ? v.padStart(widths[i]) : v.padEnd(widths[i])).join('  ').trimEnd()
  return [
    line(cols.map(c => c.title)),
    // An untitled column (the marks) gets no underline either.
    line(cols.map((c, i) => c.title ? '─'.repeat(widths[i]) : '')),
    ...rows.map(line)
  ]
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/** A horizontal bar per row: ops/s (a file: rows/s) against batch size, linear so the plateau shows. */
function formatChart (res, width = 50) {
  const file = res.workload === 'file'
  const value = r => file && r.recordsPerSec != null ? r.recordsPerSec : r.opsPerSec
  const max = Math.max(1, ...res.rows.map(value))
  const labels = res.rows.map(batchLabel)
  const lw = Math.max(...labels.map(l => l.length))
  const lines = [`${file ? 'rows/s' : 'ops/s'} by batch size`]
  res.rows.forEach((r, i) => {
    const units = Math.round((value(r) / max) * width * 8)
    const bar = '█'.repeat(units >> 3) + EIGHTHS[units & 7]
    lines.push(`${labels[i].padStart(lw)} │${bar} ${int(value(r))}${r.oneRoundTrip ? ' †' : fewTrips(r) ? ' ‡' : ''}`)
  })
  return lines.join('\n') + '\n'
}

const CSV_FIELDS = [
  ['mode', r => r.mode], ['batchSize', r => r.batchSize], ['window', r => r.window], ['ops', r => r.ops],
  ['durationMs', r => r.durationMs], ['opsPerSec', r => r.opsPerSec], ['speedup', r => r.speedup],
  ['latencyP50Ms', r => r.latencyMs.p50], ['latencyP99Ms', r => r.latencyMs.p99], ['latencyMaxMs', r => r.latencyMs.max],
  ['serverReplyPeakBytes', r => r.serverReplyPeakBytes], ['clientRssPeakBytes', r => r.clientRssPeakBytes],
  ['correct', r => r.correct], ['capped', r => r.capped], ['fastest', r => r.fastest],
  ['runs', r => r.runs], ['opsPerSecMin', r => r.opsPerSecMin], ['opsPerSecMax', r => r.opsPerSecMax],
  ['records', r => r.records], ['recordsPerSec', r => r.recordsPerSec], ['oneRoundTrip', r => r.oneRoundTrip],
  ['roundTrips', r => r.roundTrips], ['ranked', r => r.ranked], ['marginOpsPerSec', r => r.marginOpsPerSec]
]

/** One line per row; empty cells for n/a. Every value is a number, a boolean or a plain word. */
function formatCsv (res) {
  // With --connections: a connections column, and the sweep's rows after the batch sizes'.
  const fields = res.connections ? [...CSV_FIELDS, ['connections', r => r.connections]] : CSV_FIELDS
  const lines = [fields.map(f => f[0]).join(',')]
  for (const r of [...res.rows, ...(res.connectionSweep?.rows || [])]) lines.push(fields.map(f => { const v = f[1](r); return v == null ? '' : String(v) }).join(','))
  return lines.join('\n') + '\n'
}

/** A GitHub-flavoured Markdown table with the header as text above it. */
function formatMarkdown (res) {
  const esc = s => s.replace(/\|/g, '\\|')
  const cols = columns(res).slice(0, -1)
  const lines = header(res).map(l => esc(l) + '  ')
  lines.push('')
  lines.push('| ' + cols.map(c => c.title).join(' | ') + ' |')
  lines.push('| ' + cols.map(c => c.right ? '---:' : '---').join(' | ') + ' |')
  for (const r of displayRows(res)) {
    if (r.reason) { lines.push('| ' + skippedCells(cols, r, res).map((v, i) => i === 0 ? v + ' §' : v).map(esc).join(' | ') + ' |'); continue }
    lines.push('| ' + cols.map(c => {
      const v = esc(c.cell(r))
      if (c.title === 'batch' && r.oneRoundTrip) return v + ' †'
      if (c.title === 'batch' && fewTrips(r)) return v + ' ‡'
      return r.fastest && c.title === 'ops/s' ? `**${v}**` : v
    }).join(' | ') + ' |')
  }
  lines.push('')
  for (const n of notes(res)) lines.push(esc(n) + '  ')
  if (res.connectionSweep) lines.push('', ...require('./format-connections').connectionsMarkdown(res, esc))
  return lines.join('\n') + '\n'
}

/**
 * The progress line while a row runs (no newline), e.g.
 * `row 1/8: in a row · 57 of 20,000 commands · 2.9 s (stops at 10 s)`.
 */
function formatProgress (p) {
  let s = `row ${p.row}/${p.rows}: ${p.mode === 'in-a-row' ? 'in a row' : `batch size ${int(p.batchSize)}`}` +
    (p.connections > 1 ? ` · ${p.connections} connections` : '') +
    (p.runs > 1 ? ` (run ${p.run}/${p.runs})` : '')
  if (p.records != null) s += ` · ${int(p.records)} records`
  s += ` · ${int(p.ops ?? 0)}${p.count != null ? ` of ${int(p.count)}` : ''} commands`
  s += ` · ${((p.elapsedMs ?? 0) / 1000).toFixed(1)} s`
  if (p.maxRowTimeMs) s += ` (stops at ${duration(p.maxRowTimeMs)})`
  return s
}

module.exports = { formatTable, formatChart, formatCsv, formatMarkdown, formatProgress, SHORT_ROW_MS, int, ms, mem, spread, margin, WITHIN, fewTrips, alignedLines }
