'use strict'

// npm run bench:load [-- --rows N --only a,b,c,d --runs N --json --pipeload-args '…']
// Generates datasets (cached), starts a private redis-server, runs redis-cli --pipe,
// pipeload (the real CLI), the tutorial-style script and a csv-parse-only yardstick,
// verifies what landed in Redis and prints one table. See bench/README.md.

const { execFileSync } = require('node:child_process')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const fs = require('node:fs')
const { ensureDatasets } = require('./datasets')
const { runTimed, procCpu, sampleServerMemory, positiveIntFlag, median, machineLine, printReport } = require('./measure')
const { startRedis } = require('../test/helpers/redis-server.js')
const { redisCliPipe: pipeCli } = require('./pipe-cli')

const ROOT = path.join(__dirname, '..')
const CLI = path.join(ROOT, 'bin', 'pipeload.js')
const NODE = process.execPath

// ---- options --------------------------------------------------------------

function options () {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      only: { type: 'string', default: 'a,b,c,d' },
      runs: { type: 'string', default: '1' },
      json: { type: 'boolean', default: false },
      'pipeload-args': { type: 'string', default: '' }
    }
  })
  const rows = positiveIntFlag('rows', values.rows)
  const runs = positiveIntFlag('runs', values.runs)
  const only = values.only.split(',').map(s => s.trim()).filter(Boolean)
  for (const w of only) if (!WORKLOADS[w]) throw new Error(`--only: unknown workload "${w}" (use ${Object.keys(WORKLOADS).join(',')})`)
  const pipeloadArgs = values['pipeload-args'].split(/\s+/).filter(Boolean)
  return { rows, runs, only, json: values.json, pipeloadArgs }
}

// ---- workloads and tools ----------------------------------------------------

// Each tool: (files, url, opts) => { cmd, args, stdinFile?, check(stdout) -> error text | null }.
const redisCliPipe = respOf => (f, url, o) => pipeCli({ port: new URL(url).port, file: f[respOf], rows: o.rows })

const pipeload = (input, template) => (f, url, o) => ({
  cmd: NODE,
  args: [CLI, 'import', f[input], ...template, '--json', '-q', '-u', url, ...o.pipeloadArgs],
  check: out => {
    let s
    try { s = JSON.parse(out.trim().split('\n').pop()) } catch { return 'no JSON summary on stdout' }
    if (s.errors !== 0) return `summary reports ${s.errors} errors`
    if (s.records !== undefined && s.records !== o.rows) return `summary reports ${s.records} records, expected ${o.rows}`
    return null
  }
})

const rowsPrinted = (f, o, out) => {
  let s
  try { s = JSON.parse(out.trim()) } catch { return 'no {"rows":N} on stdout' }
  return s.rows === o.rows ? null : `counted ${s.rows} rows, expected ${o.rows}`
}

const WORKLOADS = {
  a: {
    name: 'csv 5-col HSET',
    samples: 'usersSamples',
    tools: {
      'redis-cli --pipe': redisCliPipe('usersResp'),
      pipeload: pipeload('usersCsv', ['--key', 'user:{id}']),
      'tutorial script': (f, url, o) => ({
        cmd: NODE, args: [path.join(__dirname, 'tutorial.js'), f.usersCsv, url], check: out => rowsPrinted(f, o, out)
      })
    }
  },
  b: {
    name: 'ndjson HSET',
    samples: 'usersSamples',
    tools: {
      'redis-cli --pipe': redisCliPipe('usersResp'),
      pipeload: pipeload('usersNdjson', ['--key', 'user:{id}'])
    }
  },
  c: {
    name: 'csv 2-col SET',
    samples: 'kvSamples',
    tools: {
      'redis-cli --pipe': redisCliPipe('kvResp'),
      pipeload: pipeload('kvCsv', ['-c', 'SET {key} {value}'])
    }
  },
  d: {
    name: 'csv 5-col parse only',
    samples: null, // touches no server
    tools: {
      'csv-parse only': (f, url, o) => ({
        cmd: NODE, args: [path.join(__dirname, 'parse-only.js'), f.usersCsv], check: out => rowsPrinted(f, o, out)
      })
    }
  }
}

// ---- one run ----------------------------------------------------------------

/** DBSIZE and the sampled rows read back; returns error text or null. */
async function verifyServer (client, files, samplesKey, rows) {
  const dbsize = await client.dbsize()
  if (dbsize !== rows) return `DBSIZE ${dbsize}, expected ${rows}`
  const samples = JSON.parse(fs.readFileSync(files[samplesKey], 'utf8'))
  for (const s of samples) {
    if (s.hash) {
      const got = await client.hgetall(s.key)
      if (JSON.stringify(sortKeys(got)) !== JSON.stringify(sortKeys(s.hash))) {
        return `HGETALL ${s.key} = ${JSON.stringify(got)}, expected ${JSON.stringify(s.hash)}`
      }
    } else {
      const got = await client.get(s.key)
      if (got !== s.string) return `GET ${s.key} = ${JSON.stringify(got)}, expected ${JSON.stringify(s.string)}`
    }
  }
  return null
}

const sortKeys = o => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

async function runOne (server, client, poller, files, workload, toolName, o) {
  const spec = workload.tools[toolName](files, server.url, o)
  const usesServer = workload.samples !== null
  if (usesServer) await client.flushall()
  const sampler = usesServer ? await sampleServerMemory(poller) : null
  const serverCpu0 = procCpu(server.proc.pid)
  const r = await runTimed(spec.cmd, spec.args, { stdinFile: spec.stdinFile })
  const serverCpu = procCpu(server.proc.pid) - serverCpu0
  const peak = sampler ? await sampler.stop() : null
  let error = r.code !== 0 ? `exit code ${r.code}: ${r.stderr.trim().slice(0, 500)}` : spec.check(r.stdout)
  if (!error && usesServer) error = await verifyServer(client, files, workload.samples, o.rows)
  return {
    wall: r.wall,
    cpu: r.cpu,
    serverCpu: usesServer ? serverCpu : null,
    rssMB: r.rssMB,
    omemKB: peak ? peak.omem / 1024 : null,
    totMemKB: peak ? peak.totMem / 1024 : null,
    memSamples: peak ? peak.samples : null, // CLIENT LIST polls during the run
    ok: !error,
    error
  }
}

// ---- aggregation and the table ------------------------------------------------

/** runs: [{ workload, tool, ...metrics }] -> one row per workload/tool with medians and ratios. */
function summarize (runs, rows) {
  const groups = new Map()
  for (const r of runs) {
    const k = `${r.workload}\0${r.tool}`
    if (!groups.has(k)) groups.set(k, [])
    groups.get(k).push(r)
  }
  const out = []
  for (const list of groups.values()) {
    const { workload, tool } = list[0]
    const row = { workload, tool, runs: list.length }
    for (const m of ['wall', 'cpu', 'serverCpu', 'rssMB', 'omemKB', 'totMemKB']) row[m] = median(list.map(r => r[m]))
    row.rowsPerSec = rows / row.wall
    row.ok = list.every(r => r.ok)
    row.errors = list.filter(r => !r.ok).map(r => r.error)
    out.push(row)
  }
  const find = (w, t) => out.find(r => r.workload === w && r.tool === t)
  const parseOnly = find('d', 'csv-parse only')
  for (const row of out) {
    const cli = find(row.workload, 'redis-cli --pipe')
    row.speedVsCli = cli && row.workload !== 'd' ? cli.wall / row.wall : null
    row.cpuVsParse = parseOnly && row.workload === 'a' && row.tool !== 'redis-cli --pipe' ? row.cpu / parseOnly.cpu : null
  }
  return out
}

const fmt = (v, digits, suffix = '') => v === null || v === undefined ? '–' : v.toFixed(digits) + suffix

function table (summary) {
  const head = ['workload', 'tool', 'wall s', 'CPU s', 'srv CPU s', 'rows/s', 'speed vs cli', 'CPU vs parse', 'RSS MB', 'omem KB', 'tot-mem KB', 'ok']
  const body = summary.map(r => [
    `${r.workload} ${WORKLOADS[r.workload].name}`, r.tool,
    fmt(r.wall, 2), fmt(r.cpu, 2), fmt(r.serverCpu, 2),
    Math.round(r.rowsPerSec).toLocaleString('en-US'),
    fmt(r.speedVsCli, 2, 'x'), fmt(r.cpuVsParse, 2, 'x'),
    fmt(r.rssMB, 0), fmt(r.omemKB, 0), fmt(r.totMemKB, 0),
    r.ok ? '✓' : '✗'
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map(row => row[i].length)))
  const line = cells => cells.map((c, i) => i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join('  ')
  return [line(head), widths.map(w => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n')
}

// ---- main -------------------------------------------------------------------------

async function main () {
  const loadavg = os.loadavg()
  const o = options()
  const log = line => process.stderr.write(line + '\n')
  const files = ensureDatasets(o.rows, log)
  const server = await startRedis({ args: ['--save', '', '--appendonly', 'no'] })
  const runs = []
  try {
    const client = server.client()
    const poller = server.client()
    const redisVersion = /redis_version:(\S+)/.exec(await client.info('server'))[1]
    for (let run = 1; run <= o.runs; run++) {
      for (const w of o.only) {
        for (const tool of Object.keys(WORKLOADS[w].tools)) {
          log(`run ${run}/${o.runs}: ${w} ${WORKLOADS[w].name} — ${tool} …`)
          const r = await runOne(server, client, poller, files, WORKLOADS[w], tool, o)
          if (r.error) log(`  ✗ ${r.error}`)
          runs.push({ run, workload: w, tool, ...r })
        }
      }
    }
    const summary = summarize(runs, o.rows)
    const header = `${o.rows.toLocaleString('en-US')} rows, ${o.runs} run(s)${o.runs > 1 ? ' (medians)' : ''}` +
      (o.pipeloadArgs.length ? `, pipeload ${o.pipeloadArgs.join(' ')}` : ', pipeload defaults')
    const machine = machineLine(redisVersion, loadavg)
    const text = [header, '', table(summary), '', machine].join('\n')
    const errors = summary.filter(r => !r.ok).flatMap(r => r.errors.map(e => `✗ ${r.workload} ${r.tool}: ${e}`))
    printReport(text, errors, o.json ? { rows: o.rows, runs, summary, machine } : null)
  } finally {
    await server.stop()
  }
}

main().catch(err => {
  console.error(err)
  process.exit(2)
})
