'use strict'

// npm run bench:export [-- --keys N --runs N --server redis7 --to valkey9 --masters 3
//                         --big-hash N --mixed N --no-redis-dump --json]
// Issue 36's goals for `pipeload export`, ratios measured in one run:
// 1. N hashes of 5 fields (bench/datasets.js users, loaded with redis-cli --pipe) exported to
//    NDJSON by pipeload, by a hand-written ioredis SCAN + pipeline loop
//    (./export-ioredis-loop.js) and by the npm package redis-dump (--json), interleaved
//    --runs times (redis-dump once: it is the slow one); wall, keys/s, ratios, CPU, peak RSS;
//    each output's line count checked (pipeload, the loop).
//    The same hashes from a cluster of --masters masters (0: none), against the one server.
// 2. One hash of --big-hash fields exported: peak RSS, and the fields counted in the output.
// 3. A round trip: --mixed keys of every type (./export-data.js: TTLs, bytes that are not
//    UTF-8, big keys in parts) exported from a --server and restored with
//    `import --restore` into a fresh --to server, then compared key by key by this script's
//    own client: TYPE, DEBUG DIGEST-VALUE (the server's own digest of the value), and the
//    TTL (present on the same keys, restored ≤ exported).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const readline = require('node:readline')
const { parseArgs } = require('node:util')
const { spawnSync } = require('node:child_process')
const Redis = require('ioredis')
const { ensureDatasets } = require('./datasets')
const { mixedResp, bigHashResp } = require('./export-data')
const { runTimed, positiveIntFlag, median, printReport } = require('./measure')
const { startRedis } = require('../test/helpers/redis-server.js')
const { startCluster } = require('../test/helpers/cluster.js')
const { serverKinds } = require('../test/helpers/servers.js')

const CLI = path.join(__dirname, '..', 'bin', 'pipeload.js')
const LOOP = path.join(__dirname, 'export-ioredis-loop.js')
const SERVER_ARGS = ['--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes']

function options () {
  const { values } = parseArgs({
    options: {
      keys: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '3' },
      server: { type: 'string', default: 'redis7' },
      to: { type: 'string', default: '' },
      'big-hash': { type: 'string', default: '5000000' },
      mixed: { type: 'string', default: '' },
      masters: { type: 'string', default: '3' },
      'no-redis-dump': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false }
    }
  })
  const keys = positiveIntFlag('keys', values.keys)
  return {
    keys,
    runs: positiveIntFlag('runs', values.runs),
    from: kindOf(values.server),
    to: kindOf(values.to || values.server),
    bigHash: positiveIntFlag('big-hash', values['big-hash']),
    mixed: values.mixed ? positiveIntFlag('mixed', values.mixed) : keys,
    masters: Number(values.masters) === 0 ? 0 : positiveIntFlag('masters', values.masters),
    redisDump: !values['no-redis-dump'],
    json: values.json
  }
}

function kindOf (id) {
  const [kind] = serverKinds([id])
  if (!kind.bin) throw new Error(`no ${id} server here: ${kind.missing}`)
  return kind
}

/** Feed a RESP file to `redis-cli --pipe` (no pipeload code on the way in). */
function pipeIn (kind, url, file) {
  const r = spawnSync(kind.cli, ['-u', url, '--pipe'], { input: fs.readFileSync(file), maxBuffer: 1 << 26 })
  if (r.status !== 0) throw new Error(`redis-cli --pipe of ${file}: exit ${r.status}: ${r.stderr}${r.stdout}`)
  if (!/errors: 0,/.test(String(r.stdout))) throw new Error(`redis-cli --pipe of ${file}: ${r.stdout}`)
}

/** Newlines in a file, read in blocks. */
function lineCount (file) {
  const fd = fs.openSync(file, 'r')
  const buf = Buffer.allocUnsafe(1 << 20)
  let n = 0
  let got
  while ((got = fs.readSync(fd, buf, 0, buf.length)) > 0) {
    for (let i = buf.indexOf(10); i !== -1 && i < got; i = buf.indexOf(10, i + 1)) n++
  }
  fs.closeSync(fd)
  return n
}

function redisDumpBin () {
  try { return require.resolve('redis-dump/bin/cli/redis-dump') } catch { return null }
}

function exportTools (o, out) {
  const t = [
    { name: 'pipeload export', args: url => [CLI, 'export', out('pipeload.ndjson'), '-u', url, '-q'], lines: out('pipeload.ndjson') },
    { name: 'ioredis SCAN + pipeline loop', args: url => [LOOP, url, out('loop.ndjson')], lines: out('loop.ndjson') }
  ]
  const dump = o.redisDump && redisDumpBin()
  if (dump) t.push({ name: 'redis-dump --json', once: true, args: url => [dump, '-p', new URL(url).port, '--json'], stdoutTo: out('redis-dump.json') })
  return t
}

/** Part 1: the same keyspace exported by each tool, interleaved. */
async function hashesTable (o, srv, dir, log) {
  const data = ensureDatasets(o.keys, log)
  pipeIn(o.from, srv.url, data.usersResp)
  const out = name => path.join(dir, name)
  const rows = exportTools(o, out).map(t => ({ ...t, walls: [], cpus: [], rss: [], errors: [] }))
  for (let run = 0; run < o.runs; run++) {
    for (const t of rows) {
      if (t.once && run > 0) continue
      const r = await runTimed(process.execPath, t.args(srv.url))
      if (t.stdoutTo) fs.writeFileSync(t.stdoutTo, r.stdout)
      if (r.code !== 0) t.errors.push(`${t.name}: exit ${r.code}: ${r.stderr.trim().slice(0, 300)}`)
      else if (t.lines && lineCount(t.lines) !== o.keys) t.errors.push(`${t.name}: ${lineCount(t.lines)} lines for ${o.keys} keys`)
      t.walls.push(r.wall)
      t.cpus.push(r.cpu)
      t.rss.push(r.rssMB)
      log(`run ${run + 1}: ${t.name} ${r.wall.toFixed(2)} s, ${Math.round(r.rssMB)} MB`)
    }
  }
  const results = rows.map(t => ({ tool: t.name, wall: median(t.walls), walls: t.walls, cpu: median(t.cpus), rssMB: Math.max(...t.rss), errors: t.errors }))
  const loop = results[1].wall
  for (const r of results) r.vsLoop = loop / r.wall
  return results
}

/**
 * Part 1b: the same hashes exported from a cluster of --masters masters (filled by pipeload
 * import: redis-cli --pipe does not route), every master read side by side, against the
 * one-server export of part 1: the "a 3-master cluster ≥ 2x one server" (16 cores).
 */
async function clusterRow (o, dir, log) {
  const data = ensureDatasets(o.keys, log)
  const c = await startCluster({ masters: o.masters, server: o.from })
  try {
    const fill = await runTimed(process.execPath, [CLI, 'import', data.usersCsv, '--key', 'user:{id}', '-u', c.url, '-q'])
    if (fill.code !== 0) throw new Error(`filling the cluster: exit ${fill.code}: ${fill.stderr}`)
    const file = path.join(dir, 'cluster.ndjson')
    const walls = []
    const rss = []
    const cpus = []
    const errors = []
    for (let run = 0; run < o.runs; run++) {
      const r = await runTimed(process.execPath, [CLI, 'export', file, '-u', c.url, '-q'])
      if (r.code !== 0) errors.push(`cluster export: exit ${r.code}: ${r.stderr.trim().slice(0, 300)}`)
      else if (lineCount(file) !== o.keys) errors.push(`cluster export: ${lineCount(file)} lines for ${o.keys} keys`)
      walls.push(r.wall)
      rss.push(r.rssMB)
      cpus.push(r.cpu)
      log(`cluster run ${run + 1}: ${r.wall.toFixed(2)} s`)
    }
    return { tool: `pipeload export, cluster of ${o.masters} masters`, wall: median(walls), walls, cpu: median(cpus), rssMB: Math.max(...rss), errors }
  } finally {
    await c.stop()
  }
}

/** Part 2: one big hash. */
async function bigHash (o, srv, dir, log) {
  await srv.client().flushall()
  pipeIn(o.from, srv.url, bigHashResp(o.bigHash, log))
  const file = path.join(dir, 'bighash.ndjson')
  const r = await runTimed(process.execPath, [CLI, 'export', file, '-u', srv.url, '-q'])
  let fields = 0
  let lines = 0
  for await (const line of readline.createInterface({ input: fs.createReadStream(file) })) {
    const rec = JSON.parse(line)
    lines++
    fields += Array.isArray(rec.value) ? rec.value.length : Object.keys(rec.value).length
  }
  const errors = r.code !== 0 ? [`big hash: exit ${r.code}: ${r.stderr.trim().slice(0, 300)}`] : fields !== o.bigHash ? [`big hash: ${fields} fields written of ${o.bigHash}`] : []
  log(`big hash: ${r.wall.toFixed(2)} s, ${Math.round(r.rssMB)} MB, ${lines} lines`)
  return { fields: o.bigHash, wall: r.wall, rssMB: r.rssMB, lines, errors }
}

/**
 * Every key of `a` compared with `b`: type, DEBUG DIGEST-VALUE, TTL. A dump holds each TTL
 * as the milliseconds left when the key was read, so the restored expiry may be later than
 * the source's by the time from the export's start to the restore's (`slackMs`), no more.
 */
async function compareKeyspaces (a, b, slackMs) {
  const wrong = []
  let keys = 0
  for await (const batch of a.scanBufferStream({ count: 1000 })) {
    const read = c => {
      const p = c.pipeline()
      for (const k of batch) p.type(k).call('DEBUG', 'DIGEST-VALUE', k).pttl(k)
      return p.exec()
    }
    const [ra, rb] = await Promise.all([read(a), read(b)])
    batch.forEach((k, i) => {
      const [ta, da, pa] = ra.slice(3 * i, 3 * i + 3).map(x => String(x[1]))
      const [tb, db, pb] = rb.slice(3 * i, 3 * i + 3).map(x => String(x[1]))
      const ttlOk = (pa === '-1') ? pb === '-1' : Number(pb) > 0 && Number(pb) <= Number(pa) + slackMs
      if (ta !== tb || da !== db || !ttlOk) wrong.push(`${k.toString('hex')}: ${ta}/${tb} ${da}/${db} ttl ${pa}/${pb}`)
    })
    keys += batch.length
  }
  return { keys, wrong }
}

/** Part 3: export the mixed keyspace, restore it into a fresh server, compare. */
async function roundTrip (o, srv, dir, log) {
  await srv.client().flushall()
  pipeIn(o.from, srv.url, mixedResp(o.mixed, log))
  const file = path.join(dir, 'mixed.ndjson')
  const exportStart = Date.now()
  const ex = await runTimed(process.execPath, [CLI, 'export', file, '-u', srv.url, '-q'])
  const to = await startRedis({ server: o.to, args: SERVER_ARGS })
  try {
    const im = await runTimed(process.execPath, [CLI, 'import', file, '--restore', '-u', to.url, '-q'])
    const slackMs = Date.now() - exportStart
    const errors = [ex, im].filter(r => r.code !== 0).map(r => `round trip: exit ${r.code}: ${r.stderr.trim().slice(0, 300)}`)
    const a = srv.client()
    const b = to.client()
    const { keys, wrong } = await compareKeyspaces(a, b, slackMs)
    const [na, nb] = [await a.dbsize(), await b.dbsize()]
    b.disconnect()
    if (na !== nb) errors.push(`round trip: ${na} keys exported, ${nb} restored`)
    if (wrong.length) errors.push(`round trip: ${wrong.length} keys differ, e.g. ${wrong.slice(0, 3).join('; ')}`)
    log(`round trip: ${keys} keys compared, ${wrong.length} differ`)
    return { keys, differ: wrong.length, exportWall: ex.wall, exportRssMB: ex.rssMB, restoreWall: im.wall, restoreRssMB: im.rssMB, errors }
  } finally {
    await to.stop()
  }
}

function report (o, r) {
  const n = o.keys.toLocaleString('en-US')
  const lines = [`Export of ${n} hashes (5 fields) from one ${o.from.label} to NDJSON; medians of ${o.runs} interleaved runs (redis-dump: one run)`,
    '| tool | wall s | keys/s | vs the ioredis loop | CPU s | peak RSS MB | walls |', '| --- | --- | --- | --- | --- | --- | --- |']
  for (const t of r.hashes) {
    lines.push(`| ${t.tool} | ${t.wall.toFixed(2)} | ${Math.round(o.keys / t.wall).toLocaleString('en-US')} | ${t.vsLoop.toFixed(2)}x | ${t.cpu.toFixed(2)} | ${Math.round(t.rssMB)} | ${t.walls.map(w => w.toFixed(2)).join(' ')} |`)
  }
  const b = r.big
  lines.push('', `One hash of ${b.fields.toLocaleString('en-US')} fields: ${b.wall.toFixed(2)} s, peak RSS ${Math.round(b.rssMB)} MB, ${b.lines} lines`)
  const m = r.round
  lines.push(`Round trip of ${o.mixed.toLocaleString('en-US')} mixed keys + 7 big ones, ${o.from.label} → ${o.to.label}: export ${m.exportWall.toFixed(2)} s (${Math.round(m.exportRssMB)} MB), restore ${m.restoreWall.toFixed(2)} s (${Math.round(m.restoreRssMB)} MB); ${m.keys.toLocaleString('en-US')} keys compared, ${m.differ} differ`)
  lines.push('', ...goals(r))
  lines.push(`machine: ${os.cpus()[0].model.trim()}, ${os.availableParallelism()} cores, node ${process.version}, load average at start ${o.loadavg.map(x => x.toFixed(2)).join(' ')}`)
  return lines.join('\n')
}

function goals (r) {
  const pl = r.hashes[0]
  const dump = r.hashes.find(t => t.tool.startsWith('redis-dump'))
  const mark = ok => (ok ? 'met' : 'missed')
  const out = [`goal: pipeload export ≥ 2x the ioredis loop: ${pl.vsLoop.toFixed(2)}x (${mark(pl.vsLoop >= 2)})`]
  if (dump) out.push(`goal: ≥ 5x redis-dump: ${(dump.wall / pl.wall).toFixed(2)}x (${mark(dump.wall / pl.wall >= 5)})`)
  else out.push('goal: ≥ 5x redis-dump: not measured (redis-dump not installed, or --no-redis-dump)')
  const cl = r.hashes.find(t => t.vsOne !== undefined)
  if (cl) out.push(`goal: a ${cl.tool.split('of ')[1]} cluster ≥ 2x one server (on 16 cores): ${cl.vsOne.toFixed(2)}x on ${os.availableParallelism()} cores (${os.availableParallelism() >= 16 ? mark(cl.vsOne >= 2) : 'not a 16-core machine: not judged'})`)
  out.push(`goal: round trip exact: ${r.round.differ} keys differ (${mark(r.round.differ === 0 && !r.round.errors.length)})`)
  const rss = Math.max(pl.rssMB, r.big.rssMB, r.round.exportRssMB)
  out.push(`goal: export peak RSS ≤ 150 MB: ${Math.round(rss)} MB at most (${mark(rss <= 150)})`)
  return out
}

async function main () {
  const o = options()
  o.loadavg = os.loadavg()
  const log = msg => process.stderr.write(msg + '\n')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-bench-export-'))
  const srv = await startRedis({ server: o.from, args: SERVER_ARGS })
  try {
    const r = {}
    r.hashes = await hashesTable(o, srv, dir, log)
    if (o.masters) {
      const c = await clusterRow(o, dir, log)
      c.vsLoop = r.hashes[1].wall / c.wall
      c.vsOne = r.hashes[0].wall / c.wall
      r.hashes.push(c)
    }
    r.big = await bigHash(o, srv, dir, log)
    r.round = await roundTrip(o, srv, dir, log)
    const errors = [...r.hashes.flatMap(t => t.errors), ...r.big.errors, ...r.round.errors]
    printReport(report(o, r), errors, o.json ? r : null)
  } finally {
    await srv.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch(err => { console.error(err); process.exitCode = 1 })
