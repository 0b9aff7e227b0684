#!/usr/bin/env node
'use strict'

// npm run bench:parquet [-- --rows N --runs N --formats parquet,csv,ndjson --pipeload-args '…' --json]
// Parquet input against the same rows as CSV and NDJSON (bench/flights.js: 5 columns, zstd,
// ~11 row groups), in one run, runs interleaved:
//   1. `pipeload import <file> --key 'flight:{id}' --dry-run resp > /dev/null`: reading,
//      decoding, mapping and encoding only; rows/s of each format and Parquet's ratio to CSV;
//   2. a real load of each into a private redis-server, and `redis-cli --pipe` fed the RESP of
//      the same commands (the server's limit); each one's speed as a ratio to redis-cli's;
//   3. the peak RSS of each (GNU time), the Parquet load's against the issue's bound.
// Before timing, Parquet's dry-run output is compared byte for byte with the RESP file, and
// every load is checked (DBSIZE, sampled hashes read back). Goals (issue 24): Parquet dry-run
// rows/s ≥ CSV's; Parquet load ≥ 0.9x redis-cli --pipe; peak RSS of the 3M-row load ≤ 250 MB.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { ensureFlights } = require('./flights')
const { runTimed, procCpu, positiveIntFlag, median, machineLine, printReport } = require('./measure')
const { startRedis } = require('../test/helpers/redis-server.js')

const CLI = path.join(__dirname, '..', 'bin', 'pipeload.js')
const NODE = process.execPath
const FORMATS = ['parquet', 'csv', 'ndjson']
const TEMPLATE = ['--key', 'flight:{id}']
const GOALS = { dryVsCsv: 1, loadVsCli: 0.9, rssMB: 250 }

function options () {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '3000000' },
      runs: { type: 'string', default: '1' },
      formats: { type: 'string', default: FORMATS.join(',') },
      'pipeload-args': { type: 'string', default: '' },
      json: { type: 'boolean', default: false }
    }
  })
  const formats = values.formats.split(',').map(s => s.trim()).filter(Boolean)
  for (const f of formats) if (!FORMATS.includes(f)) throw new Error(`--formats: unknown format "${f}" (use ${FORMATS.join(',')})`)
  return {
    rows: positiveIntFlag('rows', values.rows),
    runs: positiveIntFlag('runs', values.runs),
    formats,
    pipeloadArgs: values['pipeload-args'].split(/\s+/).filter(Boolean),
    json: values.json
  }
}

const quote = a => `'${String(a).replace(/'/g, "'\\''")}'`

/** The dry run of one format, its output thrown away: the shell's redirect, as a user would. */
function dryRun (file, o) {
  const args = [CLI, 'import', file, ...TEMPLATE, '--dry-run', 'resp', ...o.pipeloadArgs]
  return ['/bin/sh', ['-c', `${quote(NODE)} ${args.map(quote).join(' ')} > /dev/null`]]
}

/** Parquet's dry-run output is the RESP of the same commands, byte for byte (not timed). */
function checkSameCommands (files, o) {
  const args = [CLI, 'import', files.parquet, ...TEMPLATE, '--dry-run', 'resp', ...o.pipeloadArgs]
  const r = spawnSync('/bin/sh', ['-c', `${quote(NODE)} ${args.map(quote).join(' ')} | cmp - ${quote(files.resp)}`], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`the Parquet dry run does not give the RESP of the same rows: ${(r.stdout + r.stderr).trim().slice(0, 500)}`)
}

function pipeloadLoad (file, url, o) {
  return [NODE, [CLI, 'import', file, ...TEMPLATE, '--json', '-q', '-u', url, ...o.pipeloadArgs]]
}

function summaryError (stdout, rows) {
  let s
  try { s = JSON.parse(stdout.trim().split('\n').pop()) } catch { return 'no JSON summary on stdout' }
  if (s.errors !== 0) return `summary reports ${s.errors} errors`
  return s.records === rows ? null : `summary reports ${s.records} records, expected ${rows}`
}

function cliError (stdout, rows) {
  const m = /errors: (\d+), replies: (\d+)/.exec(stdout)
  if (!m) return 'no "errors: N, replies: N" line'
  return m[1] === '0' && Number(m[2]) === rows ? null : `redis-cli: ${m[0]}`
}

/** DBSIZE and the sampled rows read back; error text or null. */
async function verifyServer (client, files, rows) {
  const dbsize = await client.dbsize()
  if (dbsize !== rows) return `DBSIZE ${dbsize}, expected ${rows}`
  for (const s of JSON.parse(fs.readFileSync(files.samples, 'utf8'))) {
    const got = await client.hgetall(s.key)
    const same = Object.keys(got).length === Object.keys(s.hash).length && Object.entries(s.hash).every(([k, v]) => got[k] === v)
    if (!same) return `HGETALL ${s.key} = ${JSON.stringify(got)}, expected ${JSON.stringify(s.hash)}`
  }
  return null
}

async function timedDry (files, format, o) {
  const [cmd, args] = dryRun(files[format], o)
  const r = await runTimed(cmd, args)
  return { wall: r.wall, cpu: r.cpu, rssMB: r.rssMB, serverCpu: null, error: r.code === 0 ? null : `exit code ${r.code}: ${r.stderr.trim().slice(0, 500)}` }
}

async function timedLoad (server, client, files, tool, o) {
  await client.flushall()
  const cli = tool === 'redis-cli --pipe'
  const [cmd, args] = cli ? ['redis-cli', ['-p', String(new URL(server.url).port), '--pipe']] : pipeloadLoad(files[tool], server.url, o)
  const cpu0 = procCpu(server.proc.pid)
  const r = await runTimed(cmd, args, { stdinFile: cli ? files.resp : undefined })
  const serverCpu = procCpu(server.proc.pid) - cpu0
  let error = r.code !== 0 ? `exit code ${r.code}: ${r.stderr.trim().slice(0, 500)}` : cli ? cliError(r.stdout, o.rows) : summaryError(r.stdout, o.rows)
  if (!error) error = await verifyServer(client, files, o.rows)
  return { wall: r.wall, cpu: r.cpu, rssMB: r.rssMB, serverCpu, error }
}

function summarize (runs, o) {
  const groups = new Map()
  for (const r of runs) {
    const k = `${r.mode}|${r.tool}`
    if (!groups.has(k)) groups.set(k, [])
    groups.get(k).push(r)
  }
  const rows = [...groups.values()].map(list => {
    const row = { mode: list[0].mode, tool: list[0].tool }
    for (const m of ['wall', 'cpu', 'serverCpu', 'rssMB']) row[m] = median(list.map(r => r[m]))
    row.rssMaxMB = Math.max(...list.map(r => r.rssMB))
    row.rowsPerSec = o.rows / row.wall
    row.errors = list.filter(r => r.error).map(r => r.error)
    return row
  })
  const find = (mode, tool) => rows.find(r => r.mode === mode && r.tool === tool)
  for (const r of rows) {
    const base = r.mode === 'dry-run' ? find('dry-run', 'csv') : find('load', 'redis-cli --pipe')
    r.ratio = base && base !== r ? base.wall / r.wall : null
  }
  return rows
}

const fix = (v, d, suffix = '') => v === null || v === undefined ? '–' : v.toFixed(d) + suffix

function table (rows) {
  const head = ['mode', 'input', 'wall s', 'CPU s', 'srv CPU s', 'rows/s', 'ratio', 'RSS MB', 'RSS MB max', 'ok']
  const body = rows.map(r => [r.mode, r.tool, fix(r.wall, 2), fix(r.cpu, 2), fix(r.serverCpu, 2),
    Math.round(r.rowsPerSec).toLocaleString('en-US'),
    r.ratio === null ? '–' : `${r.ratio.toFixed(2)}x ${r.mode === 'dry-run' ? 'csv' : 'cli'}`,
    fix(r.rssMB, 0), fix(r.rssMaxMB, 0), r.errors.length ? '✗' : '✓'])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map(b => b[i].length)))
  const line = cells => cells.map((c, i) => i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join('  ')
  return [line(head), widths.map(w => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n')
}

/** Each goal of the issue that this run measured: met or missed, with the figure. */
function goals (rows) {
  const find = (mode, tool) => rows.find(r => r.mode === mode && r.tool === tool)
  const out = []
  const dry = find('dry-run', 'parquet')
  if (dry && dry.ratio !== null) out.push([`dry run: Parquet rows/s ≥ ${GOALS.dryVsCsv.toFixed(2)}x CSV's`, dry.ratio >= GOALS.dryVsCsv, `${dry.ratio.toFixed(2)}x`])
  const load = find('load', 'parquet')
  if (load && load.ratio !== null) out.push([`load: Parquet ≥ ${GOALS.loadVsCli}x redis-cli --pipe`, load.ratio >= GOALS.loadVsCli, `${load.ratio.toFixed(2)}x`])
  if (load) out.push([`load: peak RSS ≤ ${GOALS.rssMB} MB`, load.rssMaxMB <= GOALS.rssMB, `${load.rssMaxMB.toFixed(0)} MB (max of runs)`])
  return out.map(([what, met, got]) => `${met ? 'met   ' : 'MISSED'}  ${what}: ${got}`)
}

async function main () {
  const loadavg = os.loadavg()
  const o = options()
  const log = line => process.stderr.write(line + '\n')
  const files = await ensureFlights(o.rows, log)
  if (o.formats.includes('parquet')) {
    log('checking that the Parquet dry run gives the same commands as the RESP file …')
    checkSameCommands(files, o)
  }
  const server = await startRedis({ args: ['--save', '', '--appendonly', 'no'] })
  const runs = []
  try {
    const client = server.client()
    const redisVersion = /redis_version:(\S+)/.exec(await client.info('server'))[1]
    for (let run = 1; run <= o.runs; run++) {
      for (const format of o.formats) { // interleaved: a noisy minute hits every format alike
        log(`run ${run}/${o.runs}: dry run ${format} …`)
        runs.push({ run, mode: 'dry-run', tool: format, ...await timedDry(files, format, o) })
      }
      for (const tool of ['redis-cli --pipe', ...o.formats]) {
        log(`run ${run}/${o.runs}: load ${tool} …`)
        runs.push({ run, mode: 'load', tool, ...await timedLoad(server, client, files, tool, o) })
      }
      for (const r of runs.filter(x => x.run === run && x.error)) log(`  ✗ ${r.mode} ${r.tool}: ${r.error}`)
    }
    const rows = summarize(runs, o)
    const size = f => `${(fs.statSync(files[f]).size / 1048576).toFixed(0)} MB`
    const machine = machineLine(redisVersion, loadavg)
    const text = [
      `${o.rows.toLocaleString('en-US')} flight rows (5 columns), ${o.runs} run(s)${o.runs > 1 ? ' (medians)' : ''}, pipeload ${o.pipeloadArgs.length ? o.pipeloadArgs.join(' ') : 'defaults'}; ` +
        `files: ${o.formats.map(f => `${f} ${size(f)}`).join(', ')}, resp ${size('resp')}`,
      '', table(rows), '', ...goals(rows), '', machine
    ].join('\n')
    const errors = rows.flatMap(r => r.errors.map(e => `✗ ${r.mode} ${r.tool}: ${e}`))
    printReport(text, errors, o.json ? { rows: o.rows, runs, summary: rows, machine } : null)
  } finally {
    await server.stop()
  }
}

main().catch(err => {
  console.error(err.message)
  process.exit(2)
})
