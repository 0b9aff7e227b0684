'use strict'

const { duration, bytes } = require('../reporter')

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

/** Lines above the table: what ran, where, and over what link. */
function header (res) {
  const what = res.workload === 'file'
    ? `import of ${res.input} (${res.count == null ? '?' : int(res.count)} records)`
    : `${WORKLOAD_TEXT[res.workload]} × ${int(res.count)}`
  const link = res.rttSimulated
    ? `RTT ${ms(res.rttMs)} SIMULATED by a delay proxy on loopback${res.jitterMs ? ` (jitter ±${ms(res.jitterMs / 2)} each way)` : ''}; PING through it ${ms(res.pingMs)}`
    : `RTT not simulated; PING ${ms(res.pingMs)}`
  return [
    `pipeload bench · ${what} · ${res.target} · window ${res.window}${res.repeat > 1 ? ` · median of ${res.repeat} runs` : ''}`,
    `link: ${link}`
  ]
}

const COLUMNS = [
  { title: 'batch', right: true, cell: r => batchLabel(r) },
  { title: 'commands', right: true, cell: r => int(r.ops) + (r.capped ? '*' : '') },
  { title: 'time', right: true, cell: r => duration(r.durationMs) },
  { title: 'ops/s', right: true, cell: r => int(r.opsPerSec) + spread(r) },
  { title: 'speed-up', right: true, cell: r => speedup(r) },
  { title: 'batch p50', right: true, cell: r => ms(r.latencyMs.p50) },
  { title: 'p99', right: true, cell: r => ms(r.latencyMs.p99) },
  { title: 'max', right: true, cell: r => ms(r.latencyMs.max) },
  { title: 'server replies', right: true, cell: r => mem(r.serverReplyPeakBytes) },
  { title: 'client RSS', right: true, cell: r => mem(r.clientRssPeakBytes) },
  { title: 'ok', right: false, cell: r => r.correct ? 'yes' : 'NO' },
  { title: '', right: false, cell: r => r.fastest ? '◀ fastest' : '' }
]

function cells (res) {
  return res.rows.map(r => COLUMNS.map(c => c.cell(r)))
}

function notes (res) {
  const out = []
  if (res.rows.some(r => r.capped)) {
    out.push(`* stopped after ${duration(res.maxRowTimeMs)} (--max-row-time); ops/s is over the commands sent`)
  }
  out.push('batch p50/p99/max: time from writing a batch to its last reply; server replies: peak reply memory (CLIENT LIST omem) of the connection')
  const bad = res.rows.filter(r => !r.correct)
  if (bad.length) out.push(`NOT CORRECT: ${bad.map(batchLabel).join(', ')} — the server does not hold what was sent`)
  const fastest = res.rows.find(r => r.fastest)
  if (fastest) {
    const rec = res.recommendedBatchSize
    out.push(`fastest: ${fastest.mode === 'in-a-row' ? 'in a row' : `batch size ${int(fastest.batchSize)}`} at ${int(fastest.opsPerSec)} ops/s (${speedup(fastest)} in a row)` +
      (rec != null ? `; smallest batch within 10% of it: ${int(rec)} (a good --batch-size here: as fast, less memory)` : ''))
  }
  return out
}

/** The aligned table with header and notes. */
function formatTable (res) {
  const rows = cells(res)
  const widths = COLUMNS.map((c, i) => Math.max(c.title.length, ...rows.map(r => r[i].length)))
  const line = vals => vals.map((v, i) => COLUMNS[i].right ? v.padStart(widths[i]) : v.padEnd(widths[i])).join('  ').trimEnd()
  return [
    ...header(res),
    '',
    line(COLUMNS.map(c => c.title)),
    line(widths.map(w => '─'.repeat(w))),
    ...rows.map(line),
    '',
    ...notes(res)
  ].join('\n') + '\n'
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/** A horizontal bar per row: ops/s against batch size, linear so the plateau shows. */
function formatChart (res, width = 50) {
  const max = Math.max(1, ...res.rows.map(r => r.opsPerSec))
  const labels = res.rows.map(batchLabel)
  const lw = Math.max(...labels.map(l => l.length))
  const lines = ['ops/s by batch size']
  res.rows.forEach((r, i) => {
    const units = Math.round((r.opsPerSec / max) * width * 8)
    const bar = '█'.repeat(units >> 3) + EIGHTHS[units & 7]
    lines.push(`${labels[i].padStart(lw)} │${bar} ${int(r.opsPerSec)}`)
  })
  return lines.join('\n') + '\n'
}

const CSV_FIELDS = [
  ['mode', r => r.mode], ['batchSize', r => r.batchSize], ['window', r => r.window], ['ops', r => r.ops],
  ['durationMs', r => r.durationMs], ['opsPerSec', r => r.opsPerSec], ['speedup', r => r.speedup],
  ['latencyP50Ms', r => r.latencyMs.p50], ['latencyP99Ms', r => r.latencyMs.p99], ['latencyMaxMs', r => r.latencyMs.max],
  ['serverReplyPeakBytes', r => r.serverReplyPeakBytes], ['clientRssPeakBytes', r => r.clientRssPeakBytes],
  ['correct', r => r.correct], ['capped', r => r.capped], ['fastest', r => r.fastest],
  ['runs', r => r.runs], ['opsPerSecMin', r => r.opsPerSecMin], ['opsPerSecMax', r => r.opsPerSecMax]
]

/** One line per row; empty cells for n/a. Every value is a number, a boolean or a plain word. */
function formatCsv (res) {
  const lines = [CSV_FIELDS.map(f => f[0]).join(',')]
  for (const r of res.rows) lines.push(CSV_FIELDS.map(f => { const v = f[1](r); return v == null ? '' : String(v) }).join(','))
  return lines.join('\n') + '\n'
}

/** A GitHub-flavoured Markdown table with the header as text above it. */
function formatMarkdown (res) {
  const esc = s => s.replace(/\|/g, '\\|')
  const cols = COLUMNS.slice(0, -1)
  const lines = header(res).map(l => esc(l) + '  ')
  lines.push('')
  lines.push('| ' + cols.map(c => c.title).join(' | ') + ' |')
  lines.push('| ' + cols.map(c => c.right ? '---:' : '---').join(' | ') + ' |')
  for (const r of res.rows) {
    lines.push('| ' + cols.map(c => {
      const v = esc(c.cell(r))
      return r.fastest && c.title === 'ops/s' ? `**${v}**` : v
    }).join(' | ') + ' |')
  }
  lines.push('')
  for (const n of notes(res)) lines.push(esc(n) + '  ')
  return lines.join('\n') + '\n'
}

module.exports = { formatTable, formatChart, formatCsv, formatMarkdown }
