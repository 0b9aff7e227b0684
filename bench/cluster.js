'use strict'

// npm run bench:cluster [-- --rows N --runs N --masters 1,3,6,12 --workers 0,auto,4
//                          --connections 1,2,4 --server redis8 --processes 4,8
//                          --workload users|kv --json --pipeload-args '…']
// The same dataset loaded with the real CLI into one standalone server (the baseline) and
// into clusters of each --masters count: for every --workers value one process, and for
// every --workers value and --connections n (per master) one process, and for
// every --processes k, k processes at once each loading its --shard i/k (the upper bound
// one process with workers is measured against: no ordering across shards). Each target is
// started fresh, of the --server kind (test/helpers/servers.js: redis7, redis8, valkey8,
// valkey9; default the tests' redis-server), on private ports, no persistence, each run starts from empty masters and is
// checked: key count on the masters and sampled rows read back. Prints median wall time,
// rows/s, the speed-up against the standalone server, the share of the best k-process row
// and the loader's peak RSS; then the issue's goals, met or not.

const os = require('node:os')
const path = require('node:path')
const fs = require('node:fs')
const { parseArgs } = require('node:util')
const { performance } = require('node:perf_hooks')
const Redis = require('ioredis')
const { ensureDatasets } = require('./datasets')
const { runTimed, positiveIntFlag, median } = require('./measure')
const { parseMainThreadCpu } = require('./main-thread-cpu')
const { startRedis } = require('../test/helpers/redis-server.js')
const { startCluster } = require('../test/helpers/cluster.js')
const { serverKinds } = require('../test/helpers/servers.js')

const CLI = path.join(__dirname, '..', 'bin', 'pipeload.js')

const WORKLOADS = {
  users: { name: 'csv 5-col HSET', file: 'usersCsv', samples: 'usersSamples', template: ['--key', 'user:{id}'] },
  kv: { name: 'csv 2-col SET', file: 'kvCsv', samples: 'kvSamples', template: ['-c', 'SET {key} {value}'] }
}

/** A comma-separated list of whole numbers (and `auto` where allowed). */
function listFlag (name, value, { auto = false, min = 1 } = {}) {
  return value.split(',').filter(Boolean).map(v => {
    if (auto && v === 'auto') return v
    const n = Number(v)
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name}: expected whole numbers ≥ ${min}${auto ? ' or auto' : ''}, got ${v}`)
    return n
  })
}

/** A server kind of test/helpers/servers.js that is here. */
function serverOf (id) {
  const [kind] = serverKinds([id])
  if (!kind.bin) throw new Error(`--server ${id}: ${kind.missing}`)
  return kind
}

function options () {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '3' },
      workload: { type: 'string', default: 'users' },
      masters: { type: 'string', default: '1,3' },
      workers: { type: 'string', default: '' },
      processes: { type: 'string', default: '' },
      connections: { type: 'string', default: '' },
      server: { type: 'string', default: '' },
      json: { type: 'boolean', default: false },
      'pipeload-args': { type: 'string', default: '' }
    }
  })
  const rows = positiveIntFlag('rows', values.rows)
  const runs = positiveIntFlag('runs', values.runs)
  const workload = WORKLOADS[values.workload]
  if (!workload) throw new Error(`--workload must be one of ${Object.keys(WORKLOADS).join(', ')}`)
  return {
    rows,
    runs,
    workload,
    masters: listFlag('masters', values.masters),
    // Empty: no --workers flag at all (the default of the code under test: auto).
    workers: values.workers === '' ? [null] : listFlag('workers', values.workers, { auto: true, min: 0 }),
    processes: listFlag('processes', values.processes),
    // Empty: no --connections flag (the default of the code under test).
    connections: values.connections === '' ? [null] : listFlag('connections', values.connections, { auto: true }),
    server: values.server === '' ? undefined : serverOf(values.server),
    json: values.json,
    pipeloadArgs: values['pipeload-args'].split(/\s+/).filter(Boolean)
  }
}

/** A target: its URL, its masters' ports, and stop(). */
async function standalone (server) {
  const s = await startRedis({ server })
  return { name: '1 server (no cluster)', masterCount: 0, url: s.url, masters: () => [s.port], stop: () => s.stop() }
}

async function cluster (masters, server) {
  const c = await startCluster({ masters, server })
  return { name: `cluster, ${masters} master${masters > 1 ? 's' : ''}`, masterCount: masters, url: c.url, masters: () => c.masterPorts(), stop: () => c.stop() }
}

async function onMasters (ports, fn) {
  const out = []
  for (const port of ports) {
    const c = new Redis({ port, host: '127.0.0.1', protocol: 2 })
    try { out.push(await fn(c)) } finally { c.disconnect() }
  }
  return out
}

async function verify (target, files, workload, rows) {
  const ports = await target.masters()
  const sizes = await onMasters(ports, c => c.dbsize())
  const total = sizes.reduce((a, b) => a + b, 0)
  if (total !== rows) return `${total} keys on the masters (${sizes.join(' + ')}), expected ${rows}`
  const samples = JSON.parse(fs.readFileSync(files[workload.samples], 'utf8'))
  const reader = ports.length > 1
    ? new Redis.Cluster([{ host: '127.0.0.1', port: ports[0] }], { redisOptions: { protocol: 2 } })
    : new Redis({ port: ports[0], protocol: 2 })
  try {
    for (const s of samples) {
      const got = s.hash ? await reader.hgetall(s.key) : await reader.get(s.key)
      const want = s.hash || s.string
      if (JSON.stringify(s.hash ? sortKeys(got) : got) !== JSON.stringify(s.hash ? sortKeys(want) : want)) {
        return `${s.key} = ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`
      }
    }
  } finally {
    reader.disconnect()
  }
  return null
}

const sortKeys = o => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

/** One import: `k` processes at once, each with --shard i/k (k = 1: one plain process). */
async function runOne (target, files, o, { workers = null, connections = null, k = 1 } = {}) {
  await onMasters(await target.masters(), c => c.flushall())
  const base = ['-r', path.join(__dirname, 'main-thread-cpu.js'), CLI, 'import', files[o.workload.file], ...o.workload.template, '--json', '-q', '-u', target.url, ...o.pipeloadArgs]
  if (workers !== null) base.push('--workers', String(workers))
  if (connections !== null) base.push('--connections', String(connections))
  const started = performance.now()
  const procs = await Promise.all(Array.from({ length: k }, (_, i) => runTimed(process.execPath, k > 1 ? [...base, '--shard', `${i}/${k}`] : base)))
  const wall = (performance.now() - started) / 1000
  let error = null
  let records = 0
  for (const r of procs) {
    if (r.code !== 0) { error = `exit code ${r.code}: ${r.stderr.trim().slice(0, 500)}`; break }
    let summary
    try { summary = JSON.parse(r.stdout.trim().split('\n').pop()) } catch { error = 'no JSON summary'; break }
    if (summary.errors !== 0) { error = `summary reports ${summary.errors} errors`; break }
    records += summary.loaded
  }
  if (!error && records !== o.rows) error = `the processes loaded ${records} records, expected ${o.rows}`
  if (!error) error = await verify(target, files, o.workload, o.rows)
  return {
    wall: k > 1 ? wall : procs[0].wall, // one process: GNU time's wall, as before
    cpu: procs.reduce((a, r) => a + r.cpu, 0),
    mainCpu: busiest(procs.map(r => parseMainThreadCpu(r.stderr))), // the busiest process's main thread
    rssMB: Math.max(...procs.map(r => r.rssMB)),
    ok: !error,
    error
  }
}

/** The largest of the numbers known (null: not measured), or null. */
function busiest (xs) {
  const known = xs.filter(x => x !== null)
  return known.length ? Math.max(...known) : null
}

/** The rows measured on one target: one per --workers value, one per --processes k. */
async function measureTarget (target, files, o, log) {
  const label = (w, c) => ['1 process', ...(w === null ? [] : [`--workers ${w}`]), ...(c === null ? [] : [`--connections ${c}`])].join(', ')
  const variants = [
    ...o.workers.flatMap(w => o.connections.map(c => ({ label: label(w, c), workers: w, connections: c, k: 1 }))),
    // One thread each, as the upper bound was measured (issue 12): with the default, auto,
    // each of k processes would start up to 4 workers of its own.
    ...o.processes.map(k => ({ label: `${k} processes (--shard i/${k}, --workers 0)`, workers: 0, k }))
  ]
  const out = []
  for (const v of variants) {
    const runs = []
    for (let i = 0; i < o.runs; i++) {
      log(`${target.name}, ${v.label}: run ${i + 1}/${o.runs} …`)
      runs.push(await runOne(target, files, o, v))
    }
    const wall = median(runs.map(r => r.wall))
    out.push({
      target: target.name,
      masters: target.masterCount,
      variant: v.label,
      workers: v.workers,
      connections: v.connections ?? null,
      processes: v.k,
      runs: runs.length,
      wall,
      rowsPerSec: o.rows / wall,
      cpu: median(runs.map(r => r.cpu)),
      mainCpu: median(runs.map(r => r.mainCpu)),
      rssMB: Math.max(...runs.map(r => r.rssMB)),
      ok: runs.every(r => r.ok),
      errors: runs.filter(r => !r.ok).map(r => r.error)
    })
  }
  return out
}

// The issue's goals: a cluster of M masters against one server, one process.
const GOALS = { 3: 2, 6: 3.5, 12: 4.5 }
// Issue 35: one process at 95 % of the best k-process row, whatever the cluster's size.
const SHARE_OF_PROCESSES = 0.95

/** Speed-up against the first row (one server, one process) and share of the best k-process row. */
function addRatios (results) {
  const base = results[0]
  for (const r of results) {
    r.speedUp = base.wall / r.wall
    const best = Math.max(0, ...results.filter(p => p.masters === r.masters && p.processes > 1).map(p => p.rowsPerSec))
    r.ofProcesses = r.processes === 1 && best > 0 ? r.rowsPerSec / best : null
  }
}

function goalLines (results) {
  const lines = []
  for (const [m, want] of Object.entries(GOALS)) {
    const rows = results.filter(r => r.masters === Number(m) && r.processes === 1)
    if (!rows.length) continue
    const best = rows.reduce((a, b) => (b.rowsPerSec > a.rowsPerSec ? b : a))
    let line = `${m} masters: best one-process row (${best.variant}) ${best.speedUp.toFixed(2)}x one server (goal ≥ ${want}x: ${best.speedUp >= want ? 'met' : 'missed'})`
    if (best.ofProcesses !== null) line += `, ${(best.ofProcesses * 100).toFixed(0)} % of the best k-process row (goal ≥ ${SHARE_OF_PROCESSES * 100} %: ${best.ofProcesses >= SHARE_OF_PROCESSES ? 'met' : 'missed'})`
    line += `, peak RSS ${Math.round(best.rssMB)} MB (goal ≤ 400 MB: ${best.rssMB <= 400 ? 'met' : 'missed'})`
    lines.push(line)
  }
  return lines
}

function printTable (o, results) {
  // main thread CPU s: of the busiest loader process; near the wall time, it is the limit.
  const head = ['target', 'loader', 'wall (median)', 'rows/s', 'vs 1 server', 'of k procs', 'loader CPU s', 'main thread CPU s', 'peak RSS', 'ok']
  const pct = v => (v === null ? '' : `${(v * 100).toFixed(0)} %`)
  const lines = results.map(r => [r.target, r.variant, `${r.wall.toFixed(2)} s`, Math.round(r.rowsPerSec).toLocaleString('en-US'),
    `${r.speedUp.toFixed(2)}x`, pct(r.ofProcesses), r.cpu.toFixed(2), Number.isFinite(r.mainCpu) ? r.mainCpu.toFixed(2) : '–', `${Math.round(r.rssMB)} MB`, r.ok ? 'yes' : 'NO'])
  process.stdout.write(`\n${o.workload.name}, ${o.rows.toLocaleString('en-US')} rows${o.server ? `, ${o.server.label}` : ''}, ${o.runs} run(s) each (median), ${os.availableParallelism()} CPUs, ${os.cpus()[0].model}\n\n`)
  process.stdout.write(`| ${head.join(' | ')} |\n| ${head.map(() => '---').join(' | ')} |\n`)
  for (const l of lines) process.stdout.write(`| ${l.join(' | ')} |\n`)
  const goals = goalLines(results)
  if (goals.length) process.stdout.write('\nGoals (issues 12 and 35):\n' + goals.map(g => `- ${g}`).join('\n') + '\n')
  for (const r of results) for (const e of r.errors) process.stdout.write(`\n${r.target}, ${r.variant}: ${e}`)
  process.stdout.write('\n')
}

async function main () {
  const o = options()
  const log = line => process.stderr.write(line + '\n')
  const files = ensureDatasets(o.rows, log)
  const results = []
  // The baseline: one server, one process, the code's default loader.
  const baseline = { ...o, workers: [null], connections: [null], processes: [] }
  for (const [make, opts] of [[() => standalone(o.server), baseline], ...o.masters.map(m => [() => cluster(m, o.server), o])]) {
    const target = await make()
    try {
      results.push(...await measureTarget(target, files, opts, log))
    } finally {
      await target.stop()
    }
  }
  addRatios(results)
  if (o.json) {
    process.stdout.write(JSON.stringify({ rows: o.rows, workload: o.workload.name, cpus: os.availableParallelism(), results, goals: goalLines(results) }, null, 2) + '\n')
  } else {
    printTable(o, results)
  }
  if (!results.every(r => r.ok)) process.exitCode = 1
}

main().catch(err => {
  console.error(err)
  process.exitCode = 1
})
