#!/usr/bin/env node
'use strict'

// `npm run bench:workers`: the parallel parse against one thread. `pipeload import
// <file> --dry-run resp > /dev/null` (no server: only reading, parsing, mapping, encoding)
// on the 5-column CSV and the same rows as NDJSON (bench/datasets.js), with --workers 0
// and each count of --workers, the runs interleaved; rows/s, the ratio to --workers 0 and
// peak RSS as min and median of the runs. The issue's 2-core goal: --workers 2 ≥ 1.6x.
//
//   npm run bench:workers                        # 1M rows, workers 0,1,2,4, 3 runs
//   npm run bench:workers -- --rows 200000 --workers 0,2 --runs 5 --chunk-size 256KiB

const os = require('node:os')
const path = require('node:path')
const { ensureDatasets } = require('./datasets')
const { runTimed, positiveIntFlag, median } = require('./measure')

const BIN = path.join(__dirname, '..', 'bin', 'pipeload.js')

function flags (argv) {
  const f = { rows: 1_000_000, runs: 3, workers: [0, 1, 2, 4], chunkSize: null }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--rows') f.rows = positiveIntFlag('--rows', argv[++i])
    else if (a === '--runs') f.runs = positiveIntFlag('--runs', argv[++i])
    else if (a === '--workers') f.workers = argv[++i].split(',').map(Number)
    else if (a === '--chunk-size') f.chunkSize = argv[++i]
    else throw new Error(`unknown flag ${a} (--rows, --runs, --workers, --chunk-size)`)
  }
  if (!f.workers.includes(0)) f.workers.unshift(0) // the baseline of the ratios
  return f
}

const fmt = n => Math.round(n).toLocaleString('en-US')

async function main () {
  const f = flags(process.argv.slice(2))
  const data = ensureDatasets(f.rows, line => process.stderr.write(line + '\n'))
  const inputs = [['csv 5-col', data.usersCsv], ['ndjson 5-col', data.usersNdjson]]
  const results = new Map() // "input|workers" -> [{ wall, rss }]
  for (let run = 0; run < f.runs; run++) {
    for (const [name, file] of inputs) {
      for (const w of f.workers) { // interleaved: a noisy minute hits every count alike
        const args = [BIN, 'import', file, '--key', 'user:{id}', '--dry-run', 'resp', '--workers', String(w)]
        if (f.chunkSize) args.push('--chunk-size', f.chunkSize)
        const r = await runTimed('/bin/sh', ['-c', `"${process.execPath}" ${args.map(a => `'${a}'`).join(' ')} > /dev/null`])
        if (r.code !== 0) throw new Error(`workers ${w} on ${name} failed: ${r.stderr}`)
        const key = `${name}|${w}`
        if (!results.has(key)) results.set(key, [])
        results.get(key).push({ wall: r.wall, rss: r.rssMB })
        process.stderr.write(`run ${run + 1}/${f.runs} ${name} workers ${w}: ${r.wall.toFixed(2)} s, ${r.rssMB.toFixed(0)} MB\n`)
      }
    }
  }
  const rows = []
  for (const [name] of inputs) {
    const base = results.get(`${name}|0`)
    for (const w of f.workers) {
      const rs = results.get(`${name}|${w}`)
      const walls = rs.map(r => r.wall)
      rows.push([name, String(w),
        fmt(f.rows / Math.min(...walls)), fmt(f.rows / median(walls)),
        (Math.min(...base.map(r => r.wall)) / Math.min(...walls)).toFixed(2) + 'x',
        (median(base.map(r => r.wall)) / median(walls)).toFixed(2) + 'x',
        median(rs.map(r => r.rss)).toFixed(0), Math.max(...rs.map(r => r.rss)).toFixed(0)])
    }
  }
  const head = ['input', 'workers', 'rows/s best', 'rows/s median', 'vs 0 best', 'vs 0 median', 'RSS MB median', 'RSS MB max']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map(r => r[i].length)))
  const line = r => r.map((c, i) => i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join('  ')
  console.log(`\n${fmt(f.rows)} rows, --dry-run resp > /dev/null, ${f.runs} run(s) each${f.chunkSize ? `, --chunk-size ${f.chunkSize}` : ''}\n`)
  console.log(line(head))
  console.log(widths.map(w => '-'.repeat(w)).join('  '))
  for (const r of rows) console.log(line(r))
  console.log(`\nmachine: ${os.cpus()[0].model.trim()}, ${os.availableParallelism()} cores, node ${process.version}, load average at end ${os.loadavg().map(x => x.toFixed(2)).join(' ')}`)
}

main().catch(err => {
  console.error(err.message)
  process.exitCode = 1
})
