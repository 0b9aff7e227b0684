'use strict'

const { duration } = require('../run/reporter')
const { int, ms, mem, spread, WITHIN, fewTrips, alignedLines } = require('./format')

// The connection sweep (bench --connections 1,2,4; connections.js) as text: a table after
// the batch sizes', one row per connection count at one batch size, and what to pick. Pure.

const BASIS = { recommended: 'the recommended one', fastest: 'the fastest ranked', largest: 'the largest run: none was ranked' }

function times (x) {
  return x == null ? 'n/a' : `${x.toFixed(2)}x`
}

const COLUMNS = [
  { title: 'connections', right: true, cell: r => String(r.connections) },
  { title: 'commands', right: true, cell: r => int(r.ops) + (r.capped ? '*' : '') },
  { title: 'records', right: true, file: true, cell: r => r.records == null ? 'n/a' : int(r.records) },
  { title: 'time', right: true, cell: r => duration(r.durationMs) },
  { title: 'ops/s', right: true, cell: r => int(r.opsPerSec) + spread(r) },
  { title: 'rows/s', right: true, file: true, cell: r => r.recordsPerSec == null ? 'n/a' : int(r.recordsPerSec) },
  { title: 'vs 1', right: true, cell: r => times(r.vsOne) },
  { title: 'batch p50', right: true, cell: r => ms(r.latencyMs.p50) },
  { title: 'p99', right: true, cell: r => ms(r.latencyMs.p99) },
  { title: 'server replies', right: true, cell: r => mem(r.serverReplyPeakBytes) },
  { title: 'ok', right: false, cell: r => r.correct ? 'yes' : 'NO' },
  { title: '', right: false, cell: r => [r.fastest ? '◀ fastest' : '', r.oneRoundTrip ? '† one round trip' : '', fewTrips(r) ? `‡ ${int(r.roundTrips)} round trips` : ''].filter(Boolean).join(', ') }
]

function columns (res) {
  return COLUMNS.filter(c => !c.file || res.workload === 'file')
}

function title (res) {
  const s = res.connectionSweep
  return `connections at batch size ${int(s.batchSize)} (${BASIS[s.basis]}), each count run back to back:`
}

/** What to pick, and what the rows cannot show. */
function notes (res) {
  const s = res.connectionSweep
  const out = []
  const one = res.workload === 'incr' || res.workload === 'ping'
  if (one) out.push(`${res.workload === 'incr' ? 'INCR one key' : 'PING (no key)'}: every command goes through one connection (each owns a share of the hash slots); --workload set or hset spreads them`)
  out.push('server replies: the peak of the largest of the row\'s connections; vs 1: ops/s against the one-connection row')
  const bad = s.rows.filter(r => !r.correct)
  if (bad.length) out.push(`NOT CORRECT: ${bad.map(r => r.connections).join(', ')} connections — the server does not hold what was sent`)
  const fastest = s.rows.find(r => r.fastest)
  const rate = `${int(fastest.opsPerSec)} ops/s`
  const rec = s.recommendedConnections
  const pick = `a good --batch-size ${s.batchSize} --connections ${rec} here`
  if (rec == null) {
    out.push(`no connection count to recommend: fewer than two rows measured a rate (see †, ‡); ${fastest.connections} ran at ${rate}`)
  } else if (rec === fastest.connections) {
    out.push(`fastest, and no fewer connections within ${WITHIN} of it: ${rec} at ${rate}: ${pick}`)
  } else {
    out.push(`fastest: ${fastest.connections} connections at ${rate}; fewest within ${WITHIN} of it: ${rec}: ${pick} (as fast, fewer connections)`)
  }
  if (rec != null && res.repeat === 1) out.push('how sure: one run each: --repeat 3 to know')
  return out
}

/** The sweep as an aligned table with its title and notes. */
function connectionsTable (res) {
  const cols = columns(res)
  const rows = res.connectionSweep.rows.map(r => cols.map(c => c.cell(r)))
  return [title(res), '', ...alignedLines(cols, rows), '', ...notes(res)].join('\n') + '\n'
}

/** The sweep as Markdown lines (`esc` escapes a cell). */
function connectionsMarkdown (res, esc) {
  const cols = columns(res).slice(0, -1)
  const lines = [esc(title(res)) + '  ', '']
  lines.push('| ' + cols.map(c => c.title).join(' | ') + ' |')
  lines.push('| ' + cols.map(c => c.right ? '---:' : '---').join(' | ') + ' |')
  for (const r of res.connectionSweep.rows) {
    lines.push('| ' + cols.map(c => {
      const v = esc(c.cell(r))
      return r.fastest && c.title === 'ops/s' ? `**${v}**` : v
    }).join(' | ') + ' |')
  }
  lines.push('')
  for (const n of notes(res)) lines.push(esc(n) + '  ')
  return lines
}

module.exports = { connectionsTable, connectionsMarkdown }
