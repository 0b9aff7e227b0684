'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// pipeload export --checkpoint / --resume against real servers: an export SIGKILLed right
// after a checkpoint (test/helpers/kill-after-checkpoint.js, which also slows the process so
// that the export spans several checkpoint writes on any machine), then --resume: the file,
// read line by line with JSON.parse (test/helpers/export-data.js), holds every key the test
// wrote with its own ioredis client, each key's last lines (its last first line and the
// parts after it, as a restore takes them) exactly the key; one server and a 3-master
// cluster; restored (import --restore) into another db and read back key by key, exact. A
// resume of another export is refused; a resume of a finished one writes nothing.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { spawn, execFileSync } = require('node:child_process')
const { startRedis } = require('./helpers/redis-server')
const keySlot = require('cluster-key-slot')
const { startCluster } = require('./helpers/cluster')
const { BIN, BASE_ENV, KILL_HOOK, runCli, spawnKillable } = require('./helpers/run-cli')
const { scaledMs } = require('./helpers/wait')
const { writeDataset, readExport, comparable } = require('./helpers/export-data')
const { exportKeys } = require('..')

// One key (or one page of a big key) a round trip, one in flight: with the kill hook's
// slowing, some 200-400 keys between two checkpoint writes on a 2-core machine, killed past
// 400 (one server: 3,615 keys and 125 pages) or 300 (the cluster: 2,415 keys), so that a
// machine several times faster is still killed mid-export.
const SLOW = ['--batch-size', '1', '--window', '1', '--page-size', '100', '--scan-count', '20']

/** `pipeload export …args`, spawned; `preload`: the kill hook's variables (helpers/run-cli.js spawnKillable). */
const exportCli = (args, preload = null) => spawnKillable(['export', ...args], preload)

/**
 * The keys of an export file as a restore leaves them: a key's first line replaces what came
 * before of it, its parts add to it. Each line must parse and the file end with a newline;
 * each key's last first line is followed by its parts 2, 3, … in order (readExport checks).
 */
function restoredKeys (text) {
  const lines = text.split('\n')
  expect(lines.pop(), 'the file ends with a newline').toBe('')
  const parsed = lines.map(l => JSON.parse(l))
  const lastFirst = new Map()
  parsed.forEach((r, i) => { if ((r.part ?? 1) === 1) lastFirst.set(JSON.stringify(r.key), i) })
  const kept = lines.filter((l, i) => i >= (lastFirst.get(JSON.stringify(parsed[i].key)) ?? Infinity))
  const got = readExport(kept.join('\n') + '\n')
  for (const [k, parts] of got.parts) expect(parts, k).toEqual(parts.map((_, i) => i + 1))
  return got.keys
}

/**
 * The keys of db `c` under `prefix`, read with the test's own client in writeDataset's shape
 * (test/helpers/export-data.js), ttl as PTTL (a number) or null: for comparable().
 */
async function readBack (c, prefix) {
  const hex = b => b.toString('hex')
  const pairs = flat => { const out = []; for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]); return out }
  const out = new Map()
  for (const key of await c.keysBuffer(prefix + '*')) {
    const type = await c.type(key)
    const pttl = await c.pttl(key)
    let value
    if (type === 'string') value = hex(await c.getBuffer(key))
    else if (type === 'hash') value = new Map(pairs(await c.callBuffer('HGETALL', key)).map(([f, v]) => [hex(f), hex(v)]))
    else if (type === 'list') value = (await c.lrangeBuffer(key, 0, -1)).map(hex)
    else if (type === 'set') value = (await c.smembersBuffer(key)).map(hex).sort()
    else if (type === 'zset') value = new Map(pairs(await c.zrangeBuffer(key, 0, -1, 'WITHSCORES')).map(([m, sc]) => [hex(m), sc.toString()]))
    else value = (await c.xrangeBuffer(key, '-', '+')).map(([id, fields]) => ({ id: id.toString(), fields: fields.map(hex) }))
    out.set(hex(key), { type, ttl: pttl > 0 ? pttl : null, value })
  }
  return out
}

/** kill -9 once a checkpoint counts past `after` keys, then --resume; returns the checkpoint the kill left. */
async function killThenResume (url, file, cp, after, more = []) {
  const args = [file, '-u', url, '--checkpoint', cp, ...SLOW, ...more]
  const first = await exportCli(args, { KILL_CHECKPOINT: cp, KILL_AFTER_RECORDS: String(after) })
  expect(first.signal, first.err).toBe('SIGKILL')
  const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
  expect(saved).toMatchObject({ kind: 'export', complete: false, clean: false })
  expect(saved.keys).toBeGreaterThan(after)
  expect(fs.statSync(file).size).toBeGreaterThanOrEqual(saved.bytes)
  // What the kill left after the checkpoint's length, a torn line last: here one longer than
  // all the resume writes, so that only cutting the file back removes it.
  fs.appendFileSync(file, '{"key":"torn by the kill","type":"string","ttl":null,"value":"' + 'x'.repeat(4 << 20))
  const r = await exportCli([...args, '--resume', '--json'])
  expect(r.code, r.err).toBe(0)
  const summary = JSON.parse(r.out)
  expect(summary.checkpoint).toMatchObject({ resumed: true, keptBytes: saved.bytes, nothingLeft: false })
  const done = JSON.parse(fs.readFileSync(cp, 'utf8'))
  expect(done).toMatchObject({ complete: true, clean: true, bytes: fs.statSync(file).size })
  expect(done.masters.every(m => m.done && m.cursor === '0')).toBe(true)
  return saved
}

describe('export --checkpoint / --resume, one server', () => {
  let srv, redis, tmp, want
  beforeAll(async () => {
    srv = await startRedis()
    redis = srv.client()
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-resume-'))
    want = await writeDataset(redis, 'e:', { small: 600 })
  })
  afterAll(async () => {
    await srv?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('kill -9 after a checkpoint, then --resume: every key, each key\'s last lines exact, nothing torn', async () => {
    const file = path.join(tmp, 'one.ndjson')
    const cp = path.join(tmp, 'one.ckpt')
    await killThenResume(srv.url, file, cp, 400)
    expect(comparable(restoredKeys(fs.readFileSync(file, 'utf8')))).toEqual(comparable(want))
    // Restored into db 1: the keys written twice leave the keyspace exact, read back by this test.
    const r = await runCli(['import', file, '--restore', '-u', `${srv.url}/1`, '--batch-size', '50'])
    expect(r.code, r.stderr).toBe(0)
    expect(comparable(await readBack(srv.client({ db: 1 }), 'e:'))).toEqual(comparable(want))
  }, scaledMs(120_000))

  it('a gzipped output: kill -9 after a checkpoint, then --resume: valid gzip (members end to end), every key exact', async () => {
    const file = path.join(tmp, 'one.ndjson.gz')
    const cp = path.join(tmp, 'gz.ckpt')
    await killThenResume(srv.url, file, cp, 400)
    const bytes = fs.readFileSync(file)
    expect(execFileSync('gzip', ['-t', file]).length).toBe(0) // gzip itself reads every member, no trailing garbage
    expect(comparable(restoredKeys(zlib.gunzipSync(bytes).toString('utf8')))).toEqual(comparable(want))
  }, scaledMs(120_000))

  it('a resume with another --match, --type, --db, output or target is refused (exit 2), the output untouched', async () => {
    const file = path.join(tmp, 'other.ndjson')
    const cp = path.join(tmp, 'other.ckpt')
    const args = [file, '-u', srv.url, '--checkpoint', cp, '--match', 'e:h:*']
    const first = await exportCli(args, { KILL_CHECKPOINT: cp, KILL_AFTER_RECORDS: '20' })
    // Killed, or done within one checkpoint interval: either way a checkpoint of this export.
    if (first.signal !== 'SIGKILL') expect(first.code, first.err).toBe(0)
    const before = fs.readFileSync(file)
    const cases = [
      [[file, '-u', srv.url, '--match', 'e:s:*'], '--match "e:h:*" (this run: "e:s:*")'],
      [[file, '-u', srv.url, '--match', 'e:h:*', '--type', 'hash'], '--type none (this run: hash)'],
      [[file, '-u', `${srv.url}/3`, '--match', 'e:h:*'], `target 127.0.0.1:${srv.port}/0 (this run: 127.0.0.1:${srv.port}/3)`],
      [[path.join(tmp, 'elsewhere.ndjson'), '-u', srv.url, '--match', 'e:h:*'], `output ${file} (this run: ${path.join(tmp, 'elsewhere.ndjson')})`]
    ]
    for (const [a, said] of cases) {
      const r = await runCli(['export', ...a, '--checkpoint', cp, '--resume'])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain(`pipeload: checkpoint ${cp}: it was written by another export: ${said}`)
      expect(r.stderr).not.toMatch(/\n\s+at /) // no stack trace
    }
    expect(fs.readFileSync(file).equals(before)).toBe(true)
    expect(fs.existsSync(path.join(tmp, 'elsewhere.ndjson'))).toBe(false)
    // Stdout cannot be cut back: refused before anything is opened.
    const out = await runCli(['export', '-', '-u', srv.url, '--checkpoint', path.join(tmp, 'out.ckpt')])
    expect(out.code).toBe(2)
    expect(out.stderr).toContain('checkpoint cannot be used with stdout')
    const same = await runCli(['export', file, '-u', srv.url, '--checkpoint', file])
    expect(same.code).toBe(2)
    expect(same.stderr).toContain(`the output ${file} is the same file as --checkpoint ${file}: each output needs its own file`)
    expect(fs.readFileSync(file).equals(before)).toBe(true)
    // --resume without a checkpoint there, and without --checkpoint at all.
    const none = await runCli(['export', file, '-u', srv.url, '--checkpoint', path.join(tmp, 'none.ckpt'), '--resume'])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('no such file, so there is nothing to resume')
    const bare = await runCli(['export', file, '-u', srv.url, '--resume'])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain('--resume needs --checkpoint <file>')
  }, scaledMs(60_000))

  it('SIGTERM stops cleanly: exit 143, the last checkpoint names the whole file; another master list, or an import, refuses it', async () => {
    const file = path.join(tmp, 'term.ndjson')
    const cp = path.join(tmp, 'term.ckpt')
    const args = [file, '-u', srv.url, '--checkpoint', cp, ...SLOW]
    const child = spawn(process.execPath, ['--require', KILL_HOOK, BIN, 'export', ...args], {
      // The kill hook only slows the export here (no checkpoint counts past the keyspace).
      env: { ...BASE_ENV, KILL_CHECKPOINT: cp, KILL_AFTER_RECORDS: String(10 * want.size) },
      stdio: 'ignore'
    })
    const exited = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal })))
    const deadline = Date.now() + scaledMs(30_000)
    while (!fs.existsSync(cp) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
    child.kill('SIGTERM')
    expect(await exited).toEqual({ code: 143, signal: null })
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved).toMatchObject({ complete: false, clean: true, bytes: fs.statSync(file).size })
    expect(saved.keys).toBeLessThan(want.size)
    // A cursor belongs to its master: a checkpoint of other masters is refused.
    const other = path.join(tmp, 'term-other.ckpt')
    fs.writeFileSync(other, JSON.stringify({ ...saved, masters: [{ master: '127.0.0.1:1', cursor: '0', done: false }] }))
    const moved = await runCli(['export', file, '-u', srv.url, '--checkpoint', other, '--resume'])
    expect(moved.code).toBe(2)
    expect(moved.stderr).toContain(`it was written for the masters 127.0.0.1:1; the masters now are 127.0.0.1:${srv.port}`)
    // An import told to resume from an export's checkpoint says what it is.
    const imp = await runCli(['import', file, '--restore', '-u', srv.url, '--checkpoint', cp, '--resume'])
    expect(imp.code).toBe(2)
    expect(imp.stderr).toContain('it is the checkpoint of an export (pipeload export --checkpoint), not of an import')
    const r = await runCli(['export', ...args, '--resume'])
    expect(r.code, r.stderr).toBe(0)
    expect(comparable(restoredKeys(fs.readFileSync(file, 'utf8')))).toEqual(comparable(want))
  }, scaledMs(90_000))

  it('a resume after the export finished says nothing is left and leaves the output as it is', async () => {
    const file = path.join(tmp, 'done.ndjson')
    const cp = path.join(tmp, 'done.ckpt')
    const r = await runCli(['export', file, '-u', srv.url, '--checkpoint', cp, '--batch-size', '100', '--page-size', '100', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ keys: want.size, checkpoint: { resumed: false } })
    expect(comparable(readExport(fs.readFileSync(file, 'utf8')).keys)).toEqual(comparable(want))
    const before = fs.statSync(file)
    const again = await runCli(['export', file, '-u', srv.url, '--checkpoint', cp, '--resume'])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`nothing left to export: checkpoint ${cp} records a complete export of ${want.size.toLocaleString('en-US')} keys to ${file}`)
    const after = fs.statSync(file)
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs])
    // Without --resume, a finished export's checkpoint is replaced: the export runs again.
    const fresh = await runCli(['export', file, '-u', srv.url, '--checkpoint', cp, '--json'])
    expect(fresh.code, fresh.stderr).toBe(0)
    expect(JSON.parse(fresh.stdout).keys).toBe(want.size)
  }, scaledMs(60_000))

  it('exportKeys({ checkpoint, resume }): an unfinished checkpoint is not overwritten without resume', async () => {
    const file = path.join(tmp, 'lib.ndjson')
    const cp = path.join(tmp, 'lib.ckpt')
    const ac = new AbortController()
    const run = exportKeys({ url: srv.url, output: file, checkpoint: cp, batchSize: 1, window: 1, pageSize: 100, signal: ac.signal, onProgress: p => { if (p.keys > 50) ac.abort() }, progressInterval: 1 })
    await expect(run).rejects.toMatchObject({ code: 'PIPELOAD_ABORTED' })
    // Stopped cleanly: the last checkpoint names the whole file.
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved).toMatchObject({ complete: false, clean: true, bytes: fs.statSync(file).size })
    await expect(exportKeys({ url: srv.url, output: file, checkpoint: cp })).rejects.toMatchObject({ code: 'PIPELOAD_CHECKPOINT_UNFINISHED' })
    const s = await exportKeys({ url: srv.url, output: file, checkpoint: cp, resume: true, batchSize: 50 })
    expect(s.checkpoint).toMatchObject({ resumed: true, keptBytes: saved.bytes })
    expect(comparable(restoredKeys(fs.readFileSync(file, 'utf8')))).toEqual(comparable(want))
  }, scaledMs(60_000))
})

describe('export --checkpoint / --resume, a 3-master cluster', () => {
  let cluster, client, tmp, want
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 })
    client = cluster.client()
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-resume-cluster-'))
    want = await writeDataset(client, 'c:', { big: 1500, small: 400 })
  }, scaledMs(120_000))
  afterAll(async () => {
    await cluster?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('kill -9 after a checkpoint, then --resume: every master SCANned on from its cursor, every key exact', async () => {
    const file = path.join(tmp, 'cluster.ndjson')
    const cp = path.join(tmp, 'cluster.ckpt')
    const saved = await killThenResume(cluster.nodes[1].url, file, cp, 300)
    expect(saved.masters.length).toBe(3)
    expect(comparable(restoredKeys(fs.readFileSync(file, 'utf8')))).toEqual(comparable(want))
  }, scaledMs(120_000))

  it('slots moved while the export was stopped (kill -9, then a reshard): the resume reads their keys again where they are now, every key', async () => {
    // 2,000 keys in the slots of one master only: the other two have none of them, so their
    // SCANs are done by the first checkpoint; half that master's slots then move to another
    // (keys and all), some of them holding keys its SCAN had not reached.
    const [from, to] = await cluster.masterPorts()
    const mine = (await cluster.slots()).filter(r => r[2] === from).map(([start, end]) => [start, end])
    const owned = slot => mine.some(([a, b]) => slot >= a && slot <= b)
    const moved = new Map()
    for (let i = 0; moved.size < 2000; i++) {
      const key = `m:{${i}}`
      if (owned(keySlot(key))) moved.set(key, `v${i}`)
    }
    const p = client.pipeline()
    for (const [k, v] of moved) p.set(k, v)
    await p.exec()
    const wantMoved = new Map([...moved].map(([k, v]) => [Buffer.from(k).toString('hex'), { type: 'string', ttl: null, value: Buffer.from(v).toString('hex') }]))
    const file = path.join(tmp, 'moved.ndjson')
    const cp = path.join(tmp, 'moved.ckpt')
    const args = [file, '-u', cluster.nodes[0].url, '--checkpoint', cp, '--match', 'm:*', ...SLOW]
    const first = await exportCli(args, { KILL_CHECKPOINT: cp, KILL_AFTER_RECORDS: '200' })
    expect(first.signal, first.err).toBe('SIGKILL')
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved.slots.filter(r => r[2] === `127.0.0.1:${from}`).map(r => [r[0], r[1]])).toEqual(mine)
    expect(saved.keys).toBeLessThan(moved.size)
    const half = Math.floor(mine.reduce((n, [a, b]) => n + b - a + 1, 0) / 2)
    await cluster.reshard(from, to, half, { pipeline: 100 })
    await cluster.settled()
    const r = await exportCli([...args, '--resume', '--json'])
    expect(r.code, r.err).toBe(0)
    expect(JSON.parse(r.out).cluster.slotsReread).toBe(half)
    expect(comparable(restoredKeys(fs.readFileSync(file, 'utf8')))).toEqual(comparable(wantMoved))
  }, scaledMs(180_000))
})
