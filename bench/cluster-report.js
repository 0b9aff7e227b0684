'use strict'

// The table and the goals of bench/cluster.js: ratios between its rows (the speed-up over one
// server, the share of the best k-process row, each --connections value against
// --connections 1, pipeload against `redis-cli --pipe`), and the goals of issue 12 and issue
// 35, each met or not met; a goal set for a machine of many cores (issue 35's speed goals,
// measured on 16) is "not measured here" on fewer, with what was measured beside it.

const os = require('node:os')

// Issue 12: a cluster of M masters against one server, one process.
const GOALS = { 3: 2, 6: 3.5, 12: 4.5 }
const SHARE_OF_PROCESSES = 0.9

// Issue 35, its "Goals".
const GOAL_CORES = 16 // its speed goals are for a machine of this many cores
const SHARE_35 = 0.95 // one process against the best k-process row, every master count
const VS_ONE_CONNECTION = 1.0 // a server without I/O threads: never slower than one connection
const VS_CLI = 1.3 // one process against redis-cli --pipe, Valkey 9.1 with io-threads 4
const CLI_IO_THREADS = 4
// Peak RSS of one process by its parse workers (what its summary says it started): 0 at any
// size, 4 and 8 on the 3M-row file.
const RSS_GOALS = { 0: 150, 4: 200, 8: 260 }
const RSS_ROWS = 3_000_000

/**
 * Each row's ratios: speedUp (against one server, one process, --connections 1),
 * ofProcesses (one process against the best k-process row of its master count),
 * vsOneConnection (against the row of --connections 1 on its target and --workers) and
 * vsCli (against `redis-cli --pipe` on its target).
 */
function addRatios (results) {
  const pipeload = results.filter(r => r.tool === 'pipeload')
  const base = pipeload.find(r => r.masters === 0 && r.ioThreads === null && r.connections === 1) ||
    pipeload.find(r => r.masters === 0) || results[0]
  for (const r of results) {
    r.speedUp = base.wall / r.wall
    const best = r.masters === 0 ? 0 : Math.max(0, ...results.filter(p => p.masters === r.masters && p.processes > 1).map(p => p.rowsPerSec))
    r.ofProcesses = r.processes === 1 && r.tool === 'pipeload' && best > 0 ? r.rowsPerSec / best : null
    const one = r.connections === null || r.connections === 1 ? null : pipeload.find(p => p.target === r.target && p.workers === r.workers && p.connections === 1)
    r.vsOneConnection = one ? r.rowsPerSec / one.rowsPerSec : null
    const cli = results.find(p => p.target === r.target && p.tool === 'cli')
    r.vsCli = cli && r.tool === 'pipeload' ? r.rowsPerSec / cli.rowsPerSec : null
  }
}

/** The best of rows by rows/s. */
const best = rows => rows.reduce((a, b) => (b.rowsPerSec > a.rowsPerSec ? b : a))
const rate = r => `${Math.round(r.rowsPerSec).toLocaleString('en-US')} rows/s`

/** A speed goal's verdict: met or not met on a machine of GOAL_CORES cores or more. */
function speedVerdict (ok, cores) {
  if (cores < GOAL_CORES) return `not measured here (${cores} cores)`
  return ok ? 'met' : 'not met'
}

/** Issue 12's lines: per master count, the best one-process row against one server and k processes. */
function goals12 (results) {
  const lines = []
  for (const [m, want] of Object.entries(GOALS)) {
    const rows = results.filter(r => r.masters === Number(m) && r.processes === 1)
    if (!rows.length) continue
    const top = best(rows)
    let line = `${m} masters: best one-process row (${top.variant}) ${top.speedUp.toFixed(2)}x one server (goal ≥ ${want}x: ${top.speedUp >= want ? 'met' : 'missed'})`
    if (top.ofProcesses !== null) line += `, ${(top.ofProcesses * 100).toFixed(0)} % of the best k-process row (goal ≥ ${SHARE_OF_PROCESSES * 100} %: ${top.ofProcesses >= SHARE_OF_PROCESSES ? 'met' : 'missed'})`
    line += `, peak RSS ${Math.round(top.rssMB)} MB (goal ≤ 400 MB: ${top.rssMB <= 400 ? 'met' : 'missed'})`
    lines.push(line)
  }
  return lines
}

/** Issue 35: one process against the best k-process row, at each master count measured. */
function shareLines (results, cores) {
  const counts = [...new Set(results.filter(r => r.masters > 0).map(r => r.masters))]
  return counts.map(m => {
    const one = results.filter(r => r.masters === m && r.processes === 1 && r.tool === 'pipeload')
    const k = results.filter(r => r.masters === m && r.processes > 1)
    const head = `${m} master${m > 1 ? 's' : ''}: one process ≥ ${SHARE_35 * 100} % of the best k-process row`
    if (!one.length || !k.length) return `${head}: not measured (no ${one.length ? '--processes' : 'one-process'} row)`
    const a = best(one)
    const b = best(k)
    const share = a.rowsPerSec / b.rowsPerSec
    return `${head}: ${(share * 100).toFixed(0)} % (${a.variant} ${rate(a)}, ${b.variant} ${rate(b)}): ${speedVerdict(share >= SHARE_35, cores)}`
  })
}

/** Issue 35: each --connections value against --connections 1, on a server without I/O threads. */
function connectionLines (results, cores) {
  return results.filter(r => r.vsOneConnection !== null).map(r => {
    const line = `${r.target}, ${r.variant}: ${r.vsOneConnection.toFixed(2)}x --connections 1`
    if (r.ioThreads !== null && r.ioThreads > 1) return `${line} (the server has ${r.ioThreads} I/O threads: no goal)`
    return `${line} (goal ≥ ${VS_ONE_CONNECTION.toFixed(1)}x without I/O threads: ${speedVerdict(r.vsOneConnection >= VS_ONE_CONNECTION, cores)})`
  })
}

/** Issue 35: one pipeload process against `redis-cli --pipe`, per io-threads value. */
function cliLines (results, cores, server) {
  const levels = [...new Set(results.filter(r => r.vsCli !== null).map(r => r.ioThreads))]
  return levels.map(n => {
    const top = best(results.filter(r => r.ioThreads === n && r.vsCli !== null))
    const line = `io-threads ${n}: best pipeload process (${top.variant}) ${top.vsCli.toFixed(2)}x ${results.find(r => r.ioThreads === n && r.tool === 'cli').variant}`
    if (n !== CLI_IO_THREADS) return `${line} (no goal at io-threads ${n})`
    const valkey9 = /^Valkey 9\./.test(server)
    return `${line} (goal ≥ ${VS_CLI}x into Valkey 9.1 with io-threads ${CLI_IO_THREADS}${valkey9 ? '' : `; this server: ${server}`}: ` +
      `${valkey9 ? speedVerdict(top.vsCli >= VS_CLI, cores) : 'not measured here (another server)'})`
  })
}

/** Issue 35: the peak RSS of each one-process row whose worker count has a goal. */
function rssLines (results, rows) {
  return results.filter(r => r.tool === 'pipeload' && r.processes === 1 && RSS_GOALS[r.workerCount] !== undefined).map(r => {
    const want = RSS_GOALS[r.workerCount]
    const note = r.workerCount > 0 && rows !== RSS_ROWS ? `, set for ${RSS_ROWS.toLocaleString('en-US')} rows` : ''
    return `peak RSS, ${r.target}, ${r.variant} (${r.workerCount} parse workers): ${Math.round(r.rssMB)} MB (goal ≤ ${want} MB${note}: ${r.rssMB <= want ? 'met' : 'not met'})`
  })
}

/** Every goal line: { 12: [...], 35: [...] }. meta: { rows, cpus, server }. */
function goalLines (results, meta) {
  const cores = meta.cpus
  return {
    12: goals12(results),
    35: [...shareLines(results, cores), ...connectionLines(results, cores), ...cliLines(results, cores, meta.server), ...rssLines(results, meta.rows)]
  }
}

const pct = v => (v === null ? '' : `${(v * 100).toFixed(0)} %`)
const times = v => (v === null ? '' : `${v.toFixed(2)}x`)

/** The table's columns: those of every run, then those of a --connections sweep and of --io-threads. */
function columns (results, meta) {
  const all = [
    ['target', r => r.target],
    ['loader', r => r.variant],
    ['wall (median)', r => `${r.wall.toFixed(2)} s`],
    ['rows/s', r => Math.round(r.rowsPerSec).toLocaleString('en-US')],
    ['vs 1 server', r => `${r.speedUp.toFixed(2)}x`],
    ['of k procs', r => pct(r.ofProcesses)]
  ]
  if (meta.sweep) all.push(['vs --connections 1', r => times(r.vsOneConnection)])
  if (results.some(r => r.tool === 'cli')) all.push(['vs cli --pipe', r => times(r.vsCli)])
  all.push(
    ['loader CPU s', r => r.cpu.toFixed(2)],
    // main thread CPU s: of the busiest loader process; near the wall time, it is the limit.
    ['main thread CPU s', r => (Number.isFinite(r.mainCpu) ? r.mainCpu.toFixed(2) : '–')],
    ['peak RSS', r => `${Math.round(r.rssMB)} MB`],
    ['ok', r => (r.ok ? 'yes' : 'NO')]
  )
  return all
}

function printTable (o, results, meta) {
  const cols = columns(results, meta)
  const server = meta.showServer ? `, ${meta.server}` : ''
  process.stdout.write(`\n${o.workload.name}, ${o.rows.toLocaleString('en-US')} rows, ${o.runs} run(s) each (median), ${os.availableParallelism()} CPUs, ${os.cpus()[0].model}${server}\n\n`)
  process.stdout.write(`| ${cols.map(c => c[0]).join(' | ')} |\n| ${cols.map(() => '---').join(' | ')} |\n`)
  for (const r of results) process.stdout.write(`| ${cols.map(c => c[1](r)).join(' | ')} |\n`)
  const goals = goalLines(results, meta)
  if (goals[12].length) process.stdout.write('\nGoals (issue 12):\n' + goals[12].map(g => `- ${g}`).join('\n') + '\n')
  if (goals[35].length) {
    const cores = meta.cpus < GOAL_CORES ? `; its speed goals are for ${GOAL_CORES} cores, this machine has ${meta.cpus}` : ''
    process.stdout.write(`\nGoals (issue 35${cores}):\n` + goals[35].map(g => `- ${g}`).join('\n') + '\n')
  }
  for (const r of results) for (const e of r.errors) process.stdout.write(`\n${r.target}, ${r.variant}: ${e}`)
  process.stdout.write('\n')
}

module.exports = { addRatios, goalLines, printTable }
