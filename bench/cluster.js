'use strict'

// npm run bench:cluster [-- --rows N --runs N --masters 1,3,6,12 --workers 0,auto,4
//                          --processes 4,8 --workload users|kv --json --pipeload-args '…'
//                          --server redis7|redis8|valkey8|valkey9 --connections 1,2,4
//                          --io-threads 1,4]
// The same dataset loaded with the real CLI into one standalone server (the baseline) and
// into clusters of each --masters count: for every --workers value one process, and for
// every --processes k, k processes at once each loading its --shard i/k (the upper bound
// one process with workers is measured against: no ordering across shards). Each target is
// started fresh (private ports, no persistence), each run starts from empty masters and is
// checked: key count on the masters and sampled rows read back. Prints median wall time,
// rows/s, the speed-up against the standalone server, the share of the best k-process row
// and the loader's peak RSS; then the goals, met or not. --io-threads: one server per
// value, started with that many I/O threads, where one pipeload process (per --workers and
// --connections value) is compared with `redis-cli --pipe` on the same commands. The table
// and the goals: ./cluster-report.js.

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
const { KINDS, findServer, findRedis } = require('../test/helpers/servers.js')
const { redisCliPipe, writeDryRunResp } = require('./pipe-cli')
const { addRatios, goalLines, printTable } = require('./cluster-report')

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

function options () {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '3' },
      workload: { type: 'string', default: 'users' },
      masters: { type: 'string', default: '' },
      workers: { type: 'string', default: '' },
      processes: { type: 'string', default: '' },
      json: { type: 'boolean', default: false },
      'pipeload-args': { type: 'string', default: '' },
      server: { type: 'string', default: '' },
      connections: { type: 'string', default: '1' },
      'io-threads': { type: 'string', default: '' }
    }
  })
  const ioThreads = values['io-threads'] === '' ? [] : listFlag('io-threads', values['io-threads'])
  const connections = listFlag('connections', values.connections, { auto: true })
  if (!connections.length) throw new Error('--connections: expected whole numbers ≥ 1 or auto, got nothing')
  const rows = positiveIntFlag('rows', values.rows)
  const runs = positiveIntFlag('runs', values.runs)
  const workload = WORKLOADS[values.workload]
  if (!workload) throw new Error(`--workload must be one of ${Object.keys(WORKLOADS).join(', ')}`)
  return {
    rows,
    runs,
    workload,
    // Default 1,3; with --io-threads, no cluster unless --masters names some.
    masters: values.masters === '' ? (ioThreads.length ? [] : [1, 3]) : listFlag('masters', values.masters),
    // Empty: no --workers flag at all (the default of the code under test: auto).
    workers: values.workers === '' ? [null] : listFlag('workers', values.workers, { auto: true, min: 0 }),
    processes: listFlag('processes', values.processes),
    json: values.json,
    pipeloadArgs: values['pipeload-args'].split(/\s+/).filter(Boolean),
    server: serverKind(values.server),
    serverGiven: values.server !== '',
    connections,
    ioThreads
  }
}

/**
 * The server kind of --server (test/helpers/servers.js: its binary from the kind's variable,
 * e.g. PIPELOAD_VALKEY9_SERVER, else its default); without the flag the helpers' default,
 * redis-server on PATH (PIPELOAD_REDIS_SERVER), which every other test and bench starts.
 */
function serverKind (id) {
  if (id === '') return findRedis()
  const spec = KINDS.find(k => k.id === id)
  if (!spec) throw new Error(`--server must be one of ${KINDS.map(k => k.id).join(', ')}, got ${id}`)
  const kind = findServer(spec)
  if (kind.missing) throw new Error(`--server ${id}: ${kind.missing}`)
  return kind
}

/**
 * The flags of one --connections value: none for a list of just 1 (runs byte-identical to
 * those before the flag existed), else --connections <c> for every value, 1 included.
 */
function connectionArgs (o, c) {
  if (o.connections.length === 1 && o.connections[0] === 1) return []
  return ['--connections', String(c)]
}

const sweepsConnections = o => !(o.connections.length === 1 && o.connections[0] === 1)

/**
 * A target: its URL, its masters' ports, and stop(). `ioThreads`: the server's --io-threads
 * (Redis 7 threads only its writes unless io-threads-do-reads is on; Redis 8 and Valkey 8
 * and 9 read in them too).
 */
async function standalone (o, ioThreads = null) {
  const args = ioThreads === null ? [] : ['--io-threads', String(ioThreads)]
  if (ioThreads !== null && o.server.name === 'redis' && /^[67]\./.test(o.server.version)) args.push('--io-threads-do-reads', 'yes')
  const s = await startRedis({ args, server: o.server })
  const name = ioThreads === null ? '1 server (no cluster)' : `1 server, io-threads ${ioThreads}`
  return { name, masterCount: 0, ioThreads, url: s.url, port: s.port, masters: () => [s.port], stop: () => s.stop() }
}

async function cluster (o, masters) {
  const c = await startCluster({ masters, server: o.server })
  return { name: `cluster, ${masters} master${masters > 1 ? 's' : ''}`, masterCount: masters, ioThreads: null, url: c.url, masters: () => c.masterPorts(), stop: () => c.stop() }
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
async function runOne (target, files, o, { workers = null, k = 1, connections = 1, resp = null } = {}) {
  if (resp !== null) return runCli(target, files, o, resp)
  await onMasters(await target.masters(), c => c.flushall())
  const base = ['-r', path.join(__dirname, 'main-thread-cpu.js'), CLI, 'import', files[o.workload.file], ...o.workload.template, '--json', '-q', '-u', target.url, ...o.pipeloadArgs]
  if (workers !== null) base.push('--workers', String(workers))
  if (k === 1) base.push(...connectionArgs(o, connections))
  const started = performance.now()
  const procs = await Promise.all(Array.from({ length: k }, (_, i) => runTimed(process.execPath, k > 1 ? [...base, '--shard', `${i}/${k}`] : base)))
  const wall = (performance.now() - started) / 1000
  let error = null
  let records = 0
  let workerCount = null // the parse workers the (first) process started, as its summary says
  for (const r of procs) {
    if (r.code !== 0) { error = `exit code ${r.code}: ${r.stderr.trim().slice(0, 500)}`; break }
    let summary
    try { summary = JSON.parse(r.stdout.trim().split('\n').pop()) } catch { error = 'no JSON summary'; break }
    if (summary.errors !== 0) { error = `summary reports ${summary.errors} errors`; break }
    records += summary.loaded
    workerCount ??= summary.workers ?? null
  }
  if (!error && records !== o.rows) error = `the processes loaded ${records} records, expected ${o.rows}`
  if (!error) error = await verify(target, files, o.workload, o.rows)
  return {
    wall: k > 1 ? wall : procs[0].wall, // one process: GNU time's wall, as before
    cpu: procs.reduce((a, r) => a + r.cpu, 0),
    mainCpu: busiest(procs.map(r => parseMainThreadCpu(r.stderr))), // the busiest process's main thread
    rssMB: Math.max(...procs.map(r => r.rssMB)),
    workerCount,
    ok: !error,
    error
  }
}

/** One `redis-cli --pipe` (the kind's cli) of the RESP file `resp`, checked as a load is. */
async function runCli (target, files, o, resp) {
  await onMasters(await target.masters(), c => c.flushall())
  const spec = redisCliPipe({ cli: o.server.cli, port: target.port, file: resp, rows: o.rows })
  const r = await runTimed(spec.cmd, spec.args, { stdinFile: spec.stdinFile })
  let error = r.code !== 0 ? `exit code ${r.code}: ${r.stderr.trim().slice(0, 500)}` : spec.check(r.stdout)
  if (!error) error = await verify(target, files, o.workload, o.rows)
  return { wall: r.wall, cpu: r.cpu, mainCpu: null, rssMB: r.rssMB, workerCount: null, ok: !error, error }
}

/** The largest of the numbers known (null: not measured), or null. */
function busiest (xs) {
  const known = xs.filter(x => x !== null)
  return known.length ? Math.max(...known) : null
}

/** The label of one process's row: its --workers, and its --connections when they are swept. */
function oneLabel (o, w, c) {
  const label = w === null ? '1 process' : `1 process, --workers ${w}`
  return sweepsConnections(o) ? `${label}, --connections ${c}` : label
}

/**
 * The rows measured on one target: one per --workers and --connections value, one per
 * --processes k; with `resp` (--io-threads), first `redis-cli --pipe` of those commands.
 * Runs one variant after another, or with `interleaved` each run of every variant in turn.
 */
async function measureTarget (target, files, o, log, { resp = null, interleaved = false } = {}) {
  const variants = [
    ...(resp === null ? [] : [{ label: `${path.basename(o.server.cli)} --pipe`, tool: 'cli', workers: null, k: 1, connections: null, resp }]),
    ...o.workers.flatMap(w => o.connections.map(c => ({ label: oneLabel(o, w, c), workers: w, connections: c, k: 1 }))),
    // One thread each, as the upper bound was measured (issue 12): with the default, auto,
    // each of k processes would start up to 4 workers of its own.
    ...o.processes.map(k => ({ label: `${k} processes (--shard i/${k}, --workers 0)`, workers: 0, connections: null, k }))
  ]
  const runs = variants.map(() => [])
  const order = interleaved
    ? Array.from({ length: o.runs }, (_, i) => variants.map((_, v) => [v, i])).flat()
    : variants.flatMap((_, v) => Array.from({ length: o.runs }, (_, i) => [v, i]))
  for (const [v, i] of order) {
    log(`${target.name}, ${variants[v].label}: run ${i + 1}/${o.runs} …`)
    runs[v].push(await runOne(target, files, o, variants[v]))
  }
  return variants.map((v, i) => row(target, o, v, runs[i]))
}

/** One row of the table: the medians of a variant's runs. */
function row (target, o, v, runs) {
  const wall = median(runs.map(r => r.wall))
  return {
    target: target.name,
    masters: target.masterCount,
    ioThreads: target.ioThreads,
    variant: v.label,
    tool: v.tool || 'pipeload',
    workers: v.workers,
    workerCount: runs[0].workerCount,
    connections: v.connections,
    processes: v.k,
    runs: runs.length,
    wall,
    rowsPerSec: o.rows / wall,
    cpu: median(runs.map(r => r.cpu)),
    mainCpu: median(runs.map(r => r.mainCpu)),
    rssMB: Math.max(...runs.map(r => r.rssMB)),
    ok: runs.every(r => r.ok),
    errors: runs.filter(r => !r.ok).map(r => r.error)
  }
}

async function main () {
  const o = options()
  const log = line => process.stderr.write(line + '\n')
  const files = ensureDatasets(o.rows, log)
  const results = []
  if (o.ioThreads.length) results.push(...await measureIoThreads(o, files, log))
  // The baseline: one server, one process, the code's default loader (per --connections).
  const baseline = { ...o, workers: [null], processes: [] }
  const targets = o.masters.length ? [[() => standalone(o), baseline], ...o.masters.map(m => [() => cluster(o, m), o])] : []
  for (const [make, opts] of targets) {
    const target = await make()
    try {
      results.push(...await measureTarget(target, files, opts, log))
    } finally {
      await target.stop()
    }
  }
  addRatios(results)
  const meta = { rows: o.rows, cpus: os.availableParallelism(), server: o.server.label, showServer: o.serverGiven || o.ioThreads.length > 0, sweep: sweepsConnections(o) }
  if (o.json) {
    const goals = goalLines(results, meta)
    process.stdout.write(JSON.stringify({ rows: o.rows, workload: o.workload.name, cpus: meta.cpus, server: meta.server, results, goals: goals[12], goals35: goals[35] }, null, 2) + '\n')
  } else {
    printTable(o, results, meta)
  }
  if (!results.every(r => r.ok)) process.exitCode = 1
}

/**
 * --io-threads: per value one server with that many I/O threads, `redis-cli --pipe` on the
 * commands pipeload's dry run prints, against one pipeload process per --workers and
 * --connections value, runs interleaved.
 */
async function measureIoThreads (o, files, log) {
  const resp = path.join(os.tmpdir(), `pipeload-bench-${process.pid}.resp`)
  log(`writing the commands (pipeload --dry-run resp) to ${resp} …`)
  await writeDryRunResp({ cli: CLI, args: [files[o.workload.file], ...o.workload.template, ...o.pipeloadArgs], out: resp })
  const out = []
  try {
    for (const n of o.ioThreads) {
      const target = await standalone(o, n)
      try {
        out.push(...await measureTarget(target, files, { ...o, processes: [] }, log, { resp, interleaved: true }))
      } finally {
        await target.stop()
      }
    }
  } finally {
    fs.rmSync(resp, { force: true })
  }
  return out
}

module.exports = { connectionArgs, listFlag }

if (require.main === module) {
  main().catch(err => {
    console.error(err)
    process.exitCode = 1
  })
}
