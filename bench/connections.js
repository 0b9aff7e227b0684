'use strict'

// node bench/connections.js [--rows N --runs N --io-threads 1,4 --connections 1,2,4
//                            --server valkey9 --base <dir> --json]
// Issue 35 item 1: one server, `--connections n` against `redis-cli --pipe` on the same
// commands (pipeload's own `--dry-run resp` of the file, written once), for each
// --io-threads setting the server is started with. --base <dir>: a checkout of pipeload
// from before --connections (its bin/pipeload.js, with the default settings), run beside
// --connections 1 to show the one-connection path costs nothing. Runs are interleaved
// (every tool once, then again, --runs times), each from an empty server; the table gives
// median wall seconds, rows/s and the ratio to `--pipe` of the same server setting, and the
// loader's CPU and peak RSS. Every run is checked: exit code, DBSIZE = rows.

const fs = require('node:fs')
const path = require('node:path')
const os = require('node:os')
const { parseArgs } = require('node:util')
const { ensureDatasets } = require('./datasets')
const { runTimed, positiveIntFlag, median, printReport } = require('./measure')
const { startRedis } = require('../test/helpers/redis-server.js')
const { serverKinds } = require('../test/helpers/servers.js')
const { writeDryRunResp } = require('./pipe-cli')

const CLI = path.join(__dirname, '..', 'bin', 'pipeload.js')
const TEMPLATE = ['--key', 'user:{id}']

function list (name, value) {
  return value.split(',').filter(Boolean).map(v => positiveIntFlag(name, v))
}

function options () {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '2000000' },
      runs: { type: 'string', default: '3' },
      'io-threads': { type: 'string', default: '1,4' },
      connections: { type: 'string', default: '1,2,4' },
      server: { type: 'string', default: 'valkey9' },
      base: { type: 'string', default: '' },
      json: { type: 'boolean', default: false }
    }
  })
  return {
    rows: positiveIntFlag('rows', values.rows),
    runs: positiveIntFlag('runs', values.runs),
    ioThreads: list('io-threads', values['io-threads']),
    connections: list('connections', values.connections),
    server: values.server,
    base: values.base ? path.resolve(values.base) : null,
    json: values.json
  }
}

/** The tools of one row each: name and how it runs against `url`. */
function tools (o, files) {
  const t = [{ name: 'redis-cli --pipe', cmd: o.cli, args: url => ['-u', url, '--pipe'], stdin: files.resp }]
  if (o.base) t.push({ name: 'pipeload before (main)', cmd: process.execPath, args: url => [path.join(o.base, 'bin', 'pipeload.js'), 'import', files.csv, ...TEMPLATE, '-u', url, '-q', '--json'] })
  for (const n of o.connections) {
    t.push({ name: `pipeload --connections ${n}`, cmd: process.execPath, args: url => [CLI, 'import', files.csv, ...TEMPLATE, '-u', url, '-q', '--json', '--connections', String(n)] })
  }
  return t
}

async function measureServer (o, files, threads, log) {
  const srv = await startRedis({ server: o.kind, args: ['--io-threads', String(threads), '--save', '', '--appendonly', 'no'] })
  const admin = srv.client()
  const rows = tools(o, files).map(t => ({ ...t, threads, walls: [], cpus: [], rss: [], errors: [] }))
  try {
    for (let run = 0; run < o.runs; run++) {
      for (const t of rows) {
        await admin.flushall()
        const r = await runTimed(t.cmd, t.args(srv.url), { stdinFile: t.stdin })
        const keys = await admin.dbsize()
        if (r.code !== 0 || keys !== o.rows) t.errors.push(`${t.name}, io-threads ${threads}: exit ${r.code}, DBSIZE ${keys} (${r.stderr.trim().slice(0, 200)})`)
        t.walls.push(r.wall)
        t.cpus.push(r.cpu)
        t.rss.push(r.rssMB)
        log(`io-threads ${threads} run ${run + 1}: ${t.name} ${r.wall.toFixed(2)} s`)
      }
    }
  } finally {
    admin.disconnect()
    await srv.stop()
  }
  const cli = median(rows[0].walls)
  return rows.map(t => ({ tool: t.name, ioThreads: threads, wall: median(t.walls), walls: t.walls, cpu: median(t.cpus), rssMB: median(t.rss), vsCli: cli / median(t.walls), errors: t.errors }))
}

function table (o, results) {
  const lines = [`${o.rows.toLocaleString('en-US')} HSET (5 fields) into one ${o.kind.label}; medians of ${o.runs} interleaved runs`,
    '| io-threads | tool | wall s | rows/s | vs --pipe | loader CPU s | RSS MB | walls |', '| --- | --- | --- | --- | --- | --- | --- | --- |']
  for (const r of results) {
    lines.push(`| ${r.ioThreads} | ${r.tool} | ${r.wall.toFixed(2)} | ${Math.round(o.rows / r.wall).toLocaleString('en-US')} | ${r.vsCli.toFixed(2)}x | ${r.cpu.toFixed(2)} | ${Math.round(r.rssMB)} | ${r.walls.map(w => w.toFixed(2)).join(' ')} |`)
  }
  lines.push('', ...goalLines(results))
  lines.push(`machine: ${os.cpus()[0].model.trim()}, ${os.availableParallelism()} cores, node ${process.version}, load average at start ${o.loadavg.map(x => x.toFixed(2)).join(' ')}`)
  return lines.join('\n')
}

/**
 * Issue 35's goals for one server: with I/O threads (io-threads > 1), the best pipeload row
 * ≥ 1.3x `--pipe`; without, every --connections row at least as fast as the pipeload before
 * it (--base), when measured.
 */
function goalLines (results) {
  const lines = []
  for (const threads of [...new Set(results.map(r => r.ioThreads))]) {
    const rows = results.filter(r => r.ioThreads === threads && r.tool.startsWith('pipeload --connections'))
    if (!rows.length) continue
    if (threads > 1) {
      const best = rows.reduce((a, b) => (b.vsCli > a.vsCli ? b : a))
      lines.push(`goal, io-threads ${threads}: one pipeload process ≥ 1.3x --pipe: best ${best.tool} ${best.vsCli.toFixed(2)}x (${best.vsCli >= 1.3 ? 'met' : 'missed'})`)
    } else {
      const base = results.find(r => r.ioThreads === threads && r.tool === 'pipeload before (main)')
      const one = rows.find(r => r.tool === 'pipeload --connections 1')
      if (base && one) lines.push(`goal, io-threads ${threads}: --connections 1 ≥ 1.0x the pipeload before it: ${(base.wall / one.wall).toFixed(2)}x (${base.wall / one.wall >= 1 ? 'met' : 'missed'})`)
    }
  }
  return lines
}

async function main () {
  const o = options()
  o.loadavg = os.loadavg()
  const [kind] = serverKinds([o.server])
  if (!kind.bin) throw new Error(`no ${o.server} server here: ${kind.missing}`)
  o.kind = kind
  o.cli = kind.cli
  const log = msg => process.stderr.write(msg + '\n')
  const data = ensureDatasets(o.rows, log)
  // The commands redis-cli --pipe sends: pipeload's own dry run of the same file and template.
  const resp = path.join(path.dirname(data.usersCsv), `users-${o.rows}.pipeload.resp`)
  if (!fs.existsSync(resp)) {
    // Renamed into place once whole: a run stopped half-way leaves no short file to reuse.
    await writeDryRunResp({ cli: CLI, args: [data.usersCsv, ...TEMPLATE], out: resp + '.part' })
    fs.renameSync(resp + '.part', resp)
  }
  const files = { csv: data.usersCsv, resp }
  const results = []
  for (const threads of o.ioThreads) results.push(...await measureServer(o, files, threads, log))
  printReport(table(o, results), results.flatMap(r => r.errors), o.json ? results : null)
}

main().catch(err => { console.error(err); process.exitCode = 1 })
