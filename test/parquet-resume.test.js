'use strict'
/* global describe, it, expect, beforeAll */

// --resume of a Parquet input after the loader is SIGKILLed mid-load (issue 24 item 4): the
// resumed run starts at the row group holding the first unacknowledged row, and reads none of
// the row groups before it. Proof without looking inside: between the runs, every byte of those
// row groups' column chunks (where DuckDB, which wrote the file, says they are) is overwritten
// with garbage, keeping the file's size and modification time (the checkpoint's identity); a
// run that decoded any of them would fail, and a whole read of the damaged file does. Each
// row is an INCR of its own counter, so the counters show how often it was sent: those the
// checkpoint counts exactly once, the rest once or twice (at-least-once after the checkpoint).
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { BIN, BASE_ENV, runCli } = require('./helpers/run-cli')
const { recordCounts } = require('./helpers/counters')
const { writeQuery, rowGroupsOf } = require('./helpers/parquet')
const { useHttpServer } = require('./helpers/http-server')
const { scaledMs } = require('./helpers/wait')

const ROWS = 300_000
const GROUP = 8192
// A whole number of seconds: set again after the damage, to the millisecond (utimes loses
// the sub-millisecond part of a real mtime, and the checkpoint compares mtimeMs exactly).
const MTIME = 1_700_000_000

let server
let redis
let dir

useServer('pipeload-parquet-resume-', s => { server = s.srv; redis = s.redis; dir = s.tmp })
const web = useHttpServer()

/** A fresh copy of the fixture for one case (each case damages its own). */
let fixture
beforeAll(async () => {
  fixture = path.join(dir, 'rows.parquet')
  await writeQuery(fixture, `SELECT i::BIGINT AS id, 'v' || i AS v, (i * 7919 % 10007) / 8.0 AS score FROM range(${ROWS}) t(i)`, `COMPRESSION zstd, ROW_GROUP_SIZE ${GROUP}`)
})

function copyFixture (name) {
  const file = path.join(dir, name)
  fs.copyFileSync(fixture, file)
  fs.utimesSync(file, MTIME, MTIME)
  return file
}

const KILL = path.join(__dirname, 'helpers', 'kill-after-checkpoint.js')

/** The CLI; with `killPast` { checkpoint, records }, SIGKILLed once a checkpoint counts more records. */
function start (file, args, killPast = null) {
  const preload = killPast ? ['--require', KILL] : []
  const env = killPast ? { ...BASE_ENV, KILL_CHECKPOINT: killPast.checkpoint, KILL_AFTER_RECORDS: String(killPast.records) } : BASE_ENV
  const child = spawn(process.execPath, [...preload, BIN, 'import', file, '-u', server.url, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  child.out = ''
  child.err = ''
  child.stdout.on('data', d => { child.out += d })
  child.stderr.on('data', d => { child.err += d })
  child.done = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal })))
  return child
}

/** Overwrite row groups [0, to) of `file` (byte spans from DuckDB) with garbage; size and mtime kept. */
function damage (file, groups, to) {
  const fd = fs.openSync(file, 'r+')
  try {
    for (const g of groups.slice(0, to)) fs.writeSync(fd, Buffer.alloc(g.end - g.start, 0xa7), 0, g.end - g.start, g.start)
  } finally {
    fs.closeSync(fd)
  }
  fs.utimesSync(file, MTIME, MTIME)
}

describe('Parquet: SIGKILL, then --resume from the row group of the first unacknowledged row', () => {
  const cases = [
    ['on this thread', [], []],
    ['in parse workers (--workers 2), resumed with --workers 3', ['--workers', '2'], ['--workers', '3']]
  ]
  for (const [where, loadWith, resumeWith] of cases) {
    it(`${where}: the row groups before it are not read; every row loaded, those checkpointed exactly once`, async () => {
      const name = `k${loadWith.length}`
      const file = copyFixture(`${name}.parquet`)
      const cp = path.join(dir, `${name}.checkpoint`)
      const prefix = `${name}:`
      const args = ['-c', `INCR ${prefix}{id}`, '--checkpoint', cp, '--batch-size', '200', '--window', '1', '--json']
      // Killed past three row groups: the resumed run has whole groups before its first to leave out.
      const first = start(file, [...args, ...loadWith], { checkpoint: cp, records: 3 * GROUP })
      expect((await first.done).signal, first.err).toBe('SIGKILL')
      const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
      expect(saved.complete).toBe(false)
      expect(saved.records).toBeLessThan(ROWS) // killed before the end: something is left to resume

      // The row group holding row saved.records (0-based), from DuckDB's footer.
      const groups = await rowGroupsOf(file)
      expect(groups.length).toBeGreaterThan(10)
      let at = 0
      let g0 = 0
      while (at + groups[g0].rows <= saved.records) at += groups[g0++].rows
      expect(g0).toBeGreaterThanOrEqual(3)
      damage(file, groups, g0)
      // The damage is seen by whatever reads those groups.
      const whole = await runCli(['import', file, '-c', 'INCR x:{id}', '--dry-run', 'resp'])
      expect(whole.code).not.toBe(0)
      expect(whole.stderr).toMatch(/row group 0\b/)

      const before = await recordCounts(redis, prefix, ROWS)
      for (let i = 0; i < saved.records; i++) if (before[i] !== 1) expect.fail(`row ${i} ran ${before[i]} times before the resume`)

      const second = start(file, [...args, '--resume', ...resumeWith])
      const { code } = await second.done
      expect(second.err).toBe('')
      expect(code).toBe(0)
      expect(JSON.parse(second.out)).toMatchObject({ resumedFrom: saved.records, records: ROWS, loaded: ROWS, errors: 0 })
      const after = await recordCounts(redis, prefix, ROWS)
      for (let i = 0; i < ROWS; i++) {
        const ok = i < saved.records ? after[i] === 1 : after[i] === 1 || after[i] === 2
        if (!ok) expect.fail(`row ${i} ran ${after[i]} times (checkpoint at ${saved.records})`)
      }
    }, scaledMs(120_000))
  }
})

describe('Parquet at a URL: SIGKILL, then --resume', () => {
  /** Serves `bytes` as a static file server does byte ranges (If-Range: the ETag). */
  function serve (route, bytes) {
    web.routes.set(route, (req, res) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range || '')
      if (!m) {
        res.writeHead(200, { etag: '"v1"', 'content-length': bytes.length })
        return res.end(bytes)
      }
      const first = Number(m[1])
      const last = Math.min(Number(m[2]), bytes.length - 1)
      res.writeHead(206, { etag: '"v1"', 'content-range': `bytes ${first}-${last}/${bytes.length}`, 'content-length': last - first + 1 })
      res.end(bytes.subarray(first, last + 1))
    })
  }

  it('the resumed run requests no byte of the row groups before the first unacknowledged row', async () => {
    const bytes = fs.readFileSync(fixture)
    serve('/lake/rows.parquet', bytes)
    const url = `${web.base}/lake/rows.parquet`
    const cp = path.join(dir, 'url.checkpoint')
    const prefix = 'url:'
    const args = ['-c', `INCR ${prefix}{id}`, '--checkpoint', cp, '--batch-size', '200', '--window', '1', '--json']
    const first = start(url, args, { checkpoint: cp, records: 3 * GROUP })
    expect((await first.done).signal, first.err).toBe('SIGKILL')
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved.records).toBeLessThan(ROWS)

    const groups = await rowGroupsOf(fixture)
    let at = 0
    let g0 = 0
    while (at + groups[g0].rows <= saved.records) at += groups[g0++].rows
    expect(g0).toBeGreaterThanOrEqual(3)
    const before = web.seen.length
    const second = start(url, [...args, '--resume'])
    const { code } = await second.done
    expect(second.err).toBe('')
    expect(code).toBe(0)
    expect(JSON.parse(second.out)).toMatchObject({ resumedFrom: saved.records, records: ROWS, loaded: ROWS, errors: 0 })
    // Every byte range the resumed run asked for lies outside row groups 0 … g0 - 1.
    const ranges = web.seen.slice(before).map(r => /^bytes=(\d+)-(\d+)$/.exec(r.headers.range || '')).map(m => m && [Number(m[1]), Number(m[2]) + 1])
    expect(ranges.length).toBeGreaterThan(2)
    expect(ranges.every(r => r !== null)).toBe(true) // nothing downloaded whole
    // The footer is read once as the file's last 64 KiB, which holds the last row groups'
    // bytes too when the kill came late (seen on Node 24: g0 within them); no column chunk
    // ends at the file's end (the footer follows them), so the rest are the chunks read.
    const tail = ranges.filter(([, e]) => e === bytes.length)
    expect(tail).toHaveLength(1)
    const chunks = ranges.filter(([, e]) => e !== bytes.length)
    for (const g of groups.slice(0, g0)) {
      expect(chunks.filter(([s, e]) => s < g.end && e > g.start), `row group [${g.start}, ${g.end})`).toEqual([])
    }
    // The row group of the first unacknowledged row and the last one were read.
    for (const g of [groups[g0], groups[groups.length - 1]]) expect(chunks.some(([s, e]) => s < g.end && e > g.start)).toBe(true)
    const after = await recordCounts(redis, prefix, ROWS)
    for (let i = 0; i < ROWS; i++) {
      const ok = i < saved.records ? after[i] === 1 : after[i] === 1 || after[i] === 2
      if (!ok) expect.fail(`row ${i} ran ${after[i]} times (checkpoint at ${saved.records})`)
    }
  }, scaledMs(120_000))
})

