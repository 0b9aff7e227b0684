'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// docs/export.md "Faults" against a real server: the export's data connection killed
// (CLIENT KILL) while it reads, several times, and a server that stays away past
// --retry-timeout; an ACL user without the rights the export reads with; keys deleted and
// retyped while they are read, in the summary and --json. The expected keyspace is what the
// test wrote with its own client (test/helpers/export-data.js); the file is read with JSON.parse
// as a restore reads it: a key's part 1 replaces what came before it, parts follow in order.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Writable } = require('node:stream')
const { startRedis } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { writeDataset, readExport, restoredText, comparable } = require('./helpers/export-data')
const { dataConnections } = require('./helpers/data-connections')
const { waitFor, scaledMs } = require('./helpers/wait')
const { exportKeys } = require('..')
const { connectData } = require('../lib/send/connection')
const { Requests } = require('../lib/export/requests')
const { MasterReader } = require('../lib/export/master')
const { ExportStats } = require('../lib/export/stats')
const { CursorLedger } = require('../lib/export/cursors')
const { reconnector, runIdOf } = require('../lib/export/reconnect')
const { line } = require('../lib/export/ndjson')

const PAD = 'x'.repeat(200)

/** A Writable that keeps what it gets and calls hold() at its `at`-th chunk, going on once hold() resolves. */
function heldOutput (at, hold) {
  const chunks = []
  const out = new Writable({
    highWaterMark: 1024,
    write (c, e, cb) {
      chunks.push(c)
      if (chunks.length % at === 0) hold(chunks.length / at).then(() => cb(), cb)
      else cb()
    }
  })
  return { out, text: () => Buffer.concat(chunks).toString('utf8') }
}

describe('export faults: a lost connection', () => {
  let srv, redis, want
  beforeAll(async () => {
    srv = await startRedis()
    redis = srv.client()
    want = await writeDataset(redis, 'f:')
  })
  afterAll(async () => { await srv?.stop() })

  async function killDataConnection () {
    const conns = await waitFor('the export\'s data connection', async () => {
      const c = dataConnections(await redis.call('CLIENT', 'LIST'))
      return c.length === 1 && c
    }, scaledMs(20_000))
    await redis.call('CLIENT', 'KILL', 'ID', conns[0].id)
  }

  it('reconnects and goes on from the last SCAN cursor written whole: every key, big keys from part 1', async () => {
    // Killed three times while the output holds a chunk (batches in flight, big keys between pages).
    const { out, text } = heldOutput(2, async n => { if (n <= 3) await killDataConnection() })
    const s = await exportKeys({ url: srv.url, output: out, batchSize: 50, pageSize: 100, scanCount: 50, window: 3, retryTimeout: scaledMs(20_000) })
    const got = readExport(restoredText(text()))
    expect(comparable(got.keys)).toEqual(comparable(want))
    expect(s).toMatchObject({ reconnects: 3, rescans: 0 })
    expect(s.keys).toBeGreaterThanOrEqual(want.size)
  })

  it('the server restarted mid-export (its data saved and loaded again): every key', async () => {
    const { out, text } = heldOutput(2, async n => {
      if (n !== 1) return
      await redis.call('SAVE')
      await srv.restart()
    })
    const s = await exportKeys({ url: srv.url, output: out, batchSize: 50, pageSize: 100, scanCount: 50, window: 3, retryTimeout: scaledMs(20_000) })
    expect(comparable(readExport(restoredText(text())).keys)).toEqual(comparable(want))
    expect(s).toMatchObject({ reconnects: 1, rescans: 1 })
  })

  it('a frozen server (SIGSTOP): nothing for --timeout while replies are due, the connection counts as lost; after SIGCONT the export reads on from its cursor, every key', async () => {
    const TIMEOUT = scaledMs(400)
    let woken = null
    const { out, text } = heldOutput(2, async n => {
      if (n !== 1) return
      srv.proc.kill('SIGSTOP')
      // Woken long after the export gave up on its frozen connection (a few --timeout), while
      // it tries to connect again (each attempt timed out by the frozen server, as the first).
      woken = new Promise(resolve => setTimeout(() => { srv.proc.kill('SIGCONT'); resolve() }, 6 * TIMEOUT))
    })
    const s = await exportKeys({ url: srv.url, output: out, batchSize: 50, pageSize: 100, scanCount: 50, window: 3, timeout: TIMEOUT, connectTimeout: TIMEOUT, retryTimeout: scaledMs(20_000) })
    await woken
    expect(comparable(readExport(restoredText(text())).keys)).toEqual(comparable(want))
    // The same process after SIGCONT: its cursor holds, nothing is scanned again.
    expect(s.reconnects).toBeGreaterThanOrEqual(1)
    expect(s.rescans).toBe(0)
  })

  it('a big key whose pages were being read when the connection died is read again from part 1', async () => {
    const db = srv.client({ db: 3 })
    const expected = {}
    const fields = n => Array.from({ length: n }, (_, i) => [`f${i}`, `value ${i}`]).flat()
    for (const t of ['a', 'b', 'c', 'd', 'e', 'f']) {
      await db.hset(`big:${t}`, ...fields(1000))
      expected[`big:${t}`] = 1000
    }
    // The connection is killed while part 5 of the 2nd and of the 4th key is being written:
    // the rest of that key is not read yet (its next page waits to be sent).
    const endpoint = { host: srv.host, port: srv.port, db: 3, target: srv.url }
    const conn = await connectData(endpoint, 5000, undefined, { buffers: true })
    const requests = new Requests(conn)
    const runId = await runIdOf(requests)
    const stats = new ExportStats()
    const lines = []
    const seen = []
    const reader = new MasterReader({
      requests,
      stats,
      plan: { window: 1, batchSize: 1, pageSize: 100, scanCount: 1, maxElements: 100_000 },
      reconnect: reconnector({ endpoint, runId, connectTimeout: 5000, retryTimeout: scaledMs(20_000) }),
      emit: async r => {
        lines.push(r)
        if (r.part === 1 && !seen.includes(r.key.toString())) seen.push(r.key.toString())
        if (r.part === 5 && [2, 4].includes(seen.indexOf(r.key.toString()) + 1) && lines.filter(l => l.part === 5 && l.key.equals(r.key)).length === 1) await killDataConnection()
      }
    })
    try {
      await reader.run()
    } finally {
      reader.requests.close()
    }
    const text = lines.map(line).join('')
    const got = {}
    for (const l of restoredText(text).trim().split('\n')) {
      const r = JSON.parse(l)
      got[r.key] = (got[r.key] ?? 0) + Object.keys(r.value).length
    }
    expect(got).toEqual(expected)
    expect(stats.reconnects).toBe(2)
    // The 2nd and 4th keys: parts 1 to 5, then again from part 1.
    for (const k of [seen[1], seen[3]]) expect(lines.filter(l => l.key.toString() === k).map(l => l.part).slice(0, 6)).toEqual([1, 2, 3, 4, 5, 1])
    await db.flushdb()
  })

  it('a restart mid-read: the ledger the checkpoint saves then holds the new process\'s cursors only, from 0', async () => {
    const db = srv.client({ db: 4 })
    const want = new Map()
    for (let i = 0; i < 600; i++) want.set(`s:${i}`, `value ${i}`)
    await db.mset(...[...want].flat())
    const endpoint = { host: srv.host, port: srv.port, db: 4, target: srv.url }
    const requests = new Requests(await connectData(endpoint, 5000, undefined, { buffers: true }))
    const ledger = new CursorLedger()
    const stats = new ExportStats()
    const got = new Map()
    let restarted = false
    let markAfter = null
    const reader = new MasterReader({
      requests,
      ledger,
      stats,
      plan: { window: 2, batchSize: 10, pageSize: 100, scanCount: 20, maxElements: 100_000 },
      reconnect: reconnector({ endpoint, runId: await runIdOf(requests), connectTimeout: 5000, retryTimeout: scaledMs(20_000) }),
      emit: async r => {
        if (stats.reconnects === 1 && markAfter === null) markAfter = ledger.mark()
        got.set(r.key.toString(), r.value.toString())
        if (got.size === 300 && !restarted) {
          // Several SCAN replies written whole by now: the mark is a cursor of this process.
          expect(ledger.mark().cursor).not.toBe('0')
          restarted = true
          await redis.call('SAVE')
          await srv.restart()
        }
      }
    })
    try {
      await reader.run()
    } finally {
      reader.requests.close()
    }
    // The first record after the reconnect: the new SCAN from 0 is not written whole yet.
    expect(markAfter).toEqual({ cursor: '0', done: false })
    expect(ledger.mark()).toEqual({ cursor: '0', done: true })
    expect(stats).toMatchObject({ reconnects: 1, rescans: 1 })
    expect(got).toEqual(want)
    await db.flushdb()
  })

  it('past --retry-timeout: exit 4, one line naming the loss and the retry timeout', async () => {
    const other = await startRedis()
    const c = other.client()
    await writeDataset(c, 'g:', { big: 5000, small: 50 })
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-faults-'))
    try {
      // The output is a FIFO read slowly by no one: the server is stopped while the export waits.
      const run = runCli(['export', path.join(tmp, 'out.ndjson'), '-u', other.url, '--retry-timeout', '1s', '--page-size', '10', '--batch-size', '5', '-q'])
      await waitFor('the export to read', async () => dataConnections(await c.call('CLIENT', 'LIST')).length === 1, scaledMs(20_000))
      await other.stop()
      const r = await run
      expect(r.code).toBe(4)
      expect(r.stderr).toMatch(/^pipeload: connection to Redis at .* (closed by the server|failed).*could not reconnect within 1s/)
      expect(r.stderr).not.toMatch(/\n\s+at /)
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })
})

describe('export faults: ACL rights', () => {
  let srv, redis, tmp
  beforeAll(async () => {
    srv = await startRedis()
    redis = srv.client()
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-faults-'))
    await redis.hset('acl:1', 'a', '1')
    await redis.call('ACL', 'SETUSER', 'noscan', 'on', '>pw', '~*', '+@all', '-scan')
    await redis.call('ACL', 'SETUSER', 'nohscan', 'on', '>pw', '~*', '+@all', '-hscan', '-pttl')
    await redis.call('ACL', 'SETUSER', 'blind', 'on', '>pw', '~*', '+@all', '-acl', '-type')
  })
  afterAll(async () => {
    await srv?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('a user without +scan, or a read command: exit 4 before writing anything, naming the command and how to allow it', async () => {
    for (const [user, names, allow] of [['noscan', 'SCAN', '+scan'], ['nohscan', 'PTTL, HSCAN', '+pttl +hscan']]) {
      const file = path.join(tmp, `${user}.ndjson`)
      const r = await runCli(['export', file, '-p', String(srv.port), '--user', user], { env: { REDISCLI_AUTH: 'pw' } })
      expect(r.code, r.stderr).toBe(4)
      expect(r.stderr).toContain(`pipeload: the ACL user "${user}" may not run ${names}, which export reads with`)
      expect(r.stderr).toContain(`ACL SETUSER ${user} ${allow}`)
      expect(r.stderr).not.toMatch(/\n\s+at /)
      expect(fs.existsSync(file), 'nothing written').toBe(false)
    }
  })

  it('a user who may not ask ACL DRYRUN: the refused read stops the export, exit 4, PIPELOAD_PERMISSION_DENIED', async () => {
    const r = await runCli(['export', path.join(tmp, 'blind.ndjson'), '-p', String(srv.port), '--user', 'blind'], { env: { REDISCLI_AUTH: 'pw' } })
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/^pipeload: Redis at .* refused TYPE of key "acl:1": NOPERM/)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })
})

describe('export faults: --match for keys found by CLUSTER GETKEYSINSLOT (lib/export/glob.js)', () => {
  let srv, redis
  beforeAll(async () => {
    srv = await startRedis()
    redis = srv.client()
  })
  afterAll(async () => { await srv?.stop() })

  it('matches as the server\'s SCAN MATCH does', async () => {
    const { globMatch } = require('../lib/export/glob')
    const keys = ['user:1', 'user:12', 'usr:1', 'user:', 'h\\llo', 'hallo', 'hello', 'hxllo', 'a*b', 'a[b', 'session:7x', 'session:x',
      'é:1', '*', '', 'x]y', 'b-c', 'ab', 'abc', 'aXbYc']
    const patterns = ['user:*', 'user:?', 'h[ae]llo', 'h[^e]llo', 'h[a-e]llo', 'h[e-a]llo', 'a\\*b', 'a\\[b', 'session:[0-9]*', '*', '**', '?',
      'a*c', 'a*b*c', '*:1', '[', 'x]*', '[a-]*', 'h\\\\llo', '[\\]]*', 'é*', 'h[]llo', '[^]abc']
    for (const k of keys.filter(k => k !== '')) await redis.set(k, '1')
    for (const p of patterns) {
      const server = new Set()
      let cursor = '0'
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', p, 'COUNT', 1000)
        cursor = next
        for (const k of found) server.add(k)
      } while (cursor !== '0')
      const ours = keys.filter(k => k !== '' && globMatch(p, Buffer.from(k)))
      expect(ours.sort(), p).toEqual([...server].sort())
    }
  })
})

describe('export faults: keys deleted and retyped while they are read', () => {
  let srv, redis, tmp
  beforeAll(async () => {
    srv = await startRedis()
    redis = srv.client()
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-faults-'))
  })
  afterAll(async () => {
    await srv?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('the summary and --json count them; what is written is what the keys were when read', async () => {
    const n = 3000
    for (let i = 0; i < n; i += 500) await redis.mset(...Array.from({ length: 500 }, (_, j) => [`d:${i + j}`, `v${i + j}:${PAD}`]).flat())
    // Once the first chunk is written (every key SCANned in one SCAN, most not read yet): every 3rd key
    // deleted, every 3rd+1 a hash now.
    let done = false
    const { out, text } = heldOutput(1, async () => {
      if (done) return
      done = true
      const p = redis.pipeline()
      for (let i = 0; i < n; i++) {
        if (i % 3 === 0) p.del(`d:${i}`)
        else if (i % 3 === 1) { p.del(`d:${i}`); p.hset(`d:${i}`, 'h', String(i)) }
      }
      await p.exec()
    })
    const s = await exportKeys({ url: srv.url, output: out, batchSize: 20, window: 1, scanCount: 10000 })
    const got = readExport(text())
    // Keys read before the change are as they were; every key read after it is as it is now.
    for (const [k, e] of got.keys) {
      const i = Number(Buffer.from(k, 'hex').toString().slice(2))
      if (e.type === 'hash') expect(i % 3, `d:${i}`).toBe(1)
      else expect(Buffer.from(e.value, 'hex').toString()).toBe(`v${i}:${PAD}`)
    }
    expect(s.deleted).toBeGreaterThan(n / 3 - 200)
    expect(s.keys + s.deleted).toBe(n)
    expect(s.types.hash).toBeGreaterThan(n / 3 - 200)
    const { formatExportSummary } = require('../lib/export/report')
    expect(formatExportSummary({ ...s, output: 'x' })).toContain(`skipped: ${s.deleted.toLocaleString('en-US')} deleted before they were read`)
    // --json: the same counts, from the CLI.
    await redis.del(...Array.from({ length: n }, (_, i) => `d:${i}`))
    await redis.set('j:1', 'x')
    const r = await runCli(['export', path.join(tmp, 'j.ndjson'), '-u', srv.url, '--json'])
    expect(r.code).toBe(0)
    const j = JSON.parse(r.stdout)
    expect(j).toMatchObject({ keys: 1, deleted: 0, changed: 0, restarted: 0, reconnects: 0, rescans: 0 })
  })
})
