'use strict'

// npm run bench:cluster [-- --rows N --runs N --workload users|kv --json --pipeload-args '…']
// The same dataset loaded with the real CLI into: one standalone server, a cluster of one
// master (the cost of routing alone) and a cluster of three masters (the gain of spreading
// the load). Each target is started fresh (private ports, no persistence), each run starts
// from empty masters and is checked: key count on the masters and sampled rows read back.
// Prints wall time, rows/s and the speed-up against the standalone server.

const os = require('node:os')
const path = require('node:path')
const fs = require('node:fs')
const { parseArgs } = require('node:util')
const Redis = require('ioredis')
const { ensureDatasets } = require('./datasets')
const { runTimed, positiveIntFlag } = require('./measure')
const { startRedis } = require('../test/helpers/redis-server.js')
const { startCluster } = require('../test/helpers/cluster.js')

const CLI = path.join(__dirname, '..', 'bin', 'pipeload.js')

const WORKLOADS = {
  users: { name: 'csv 5-col HSET', file: 'usersCsv', samples: 'usersSamples', template: ['--key', 'user:{id}'] },
  kv: { name: 'csv 2-col SET', file: 'kvCsv', samples: 'kvSamples', template: ['-c', 'SET {key} {value}'] }
}

function options () {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '3' },
      workload: { type: 'string', default: 'users' },
      json: { type: 'boolean', default: false },
      'pipeload-args': { type: 'string', default: '' }
    }
  })
  const rows = positiveIntFlag('rows', values.rows)
  const runs = positiveIntFlag('runs', values.runs)
  const workload = WORKLOADS[values.workload]
  if (!workload) throw new Error(`--workload must be one of ${Object.keys(WORKLOADS).join(', ')}`)
  return { rows, runs, workload, json: values.json, pipeloadArgs: values['pipeload-args'].split(/\s+/).filter(Boolean) }
}

/** A target: its URL, its masters' ports, and stop(). */
async function standalone () {
  const s = await startRedis()
  return { name: '1 server (no cluster)', url: s.url, masters: () => [s.port], stop: () => s.stop() }
}

async function cluster (masters) {
  const c = await startCluster({ masters })
  return { name: `cluster, ${masters} master${masters > 1 ? 's' : ''}`, url: c.url, masters: () => c.masterPorts(), stop: () => c.stop() }
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

async function runOne (target, files, o) {
  await onMasters(await target.masters(), c => c.flushall())
  const args = [CLI, 'import', files[o.workload.file], ...o.workload.template, '--json', '-q', '-u', target.url, ...o.pipeloadArgs]
  const r = await runTimed(process.execPath, args)
  let error = r.code !== 0 ? `exit code ${r.code}: ${r.stderr.trim().slice(0, 500)}` : null
  let summary = null
  if (!error) {
    try { summary = JSON.parse(r.stdout.trim().split('\n').pop()) } catch { error = 'no JSON summary' }
  }
  if (!error && summary.errors !== 0) error = `summary reports ${summary.errors} errors`
  if (!error) error = await verify(target, files, o.workload, o.rows)
  return { wall: r.wall, cpu: r.cpu, rssMB: r.rssMB, ok: !error, error }
}

function median (xs) {
  const v = [...xs].sort((a, b) => a - b)
  const m = v.length >> 1
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2
}

async function main () {
  const o = options()
  const log = line => process.stderr.write(line + '\n')
  const files = ensureDatasets(o.rows, log)
  const results = []
  for (const make of [standalone, () => cluster(1), () => cluster(3)]) {
    const target = await make()
    try {
      const runs = []
      for (let i = 0; i < o.runs; i++) {
        log(`${target.name}: run ${i + 1}/${o.runs} …`)
        runs.push(await runOne(target, files, o))
      }
      const wall = median(runs.map(r => r.wall))
      results.push({
        target: target.name,
        runs: runs.length,
        wall,
        rowsPerSec: o.rows / wall,
        cpu: median(runs.map(r => r.cpu)),
        rssMB: median(runs.map(r => r.rssMB)),
        ok: runs.every(r => r.ok),
        errors: runs.filter(r => !r.ok).map(r => r.error)
      })
    } finally {
      await target.stop()
    }
  }
  for (const r of results) r.speedUp = results[0].wall / r.wall
  if (o.json) {
    process.stdout.write(JSON.stringify({ rows: o.rows, workload: o.workload.name, cpus: os.availableParallelism(), results }, null, 2) + '\n')
  } else {
    const head = ['target', 'wall (median)', 'rows/s', 'speed-up', 'loader CPU s', 'loader RSS', 'ok']
    const lines = results.map(r => [r.target, `${r.wall.toFixed(2)} s`, Math.round(r.rowsPerSec).toLocaleString('en-US'),
      `${r.speedUp.toFixed(2)}x`, r.cpu.toFixed(2), `${Math.round(r.rssMB)} MB`, r.ok ? 'yes' : 'NO'])
    process.stdout.write(`\n${o.workload.name}, ${o.rows.toLocaleString('en-US')} rows, ${o.runs} run(s) each, ${os.availableParallelism()} CPUs, ${os.cpus()[0].model}\n\n`)
    process.stdout.write(`| ${head.join(' | ')} |\n| ${head.map(() => '---').join(' | ')} |\n`)
    for (const l of lines) process.stdout.write(`| ${l.join(' | ')} |\n`)
    for (const r of results) for (const e of r.errors) process.stdout.write(`\n${r.target}: ${e}`)
    process.stdout.write('\n')
  }
  if (!results.every(r => r.ok)) process.exitCode = 1
}

main().catch(err => {
  console.error(err)
  process.exitCode = 1
})
