'use strict'
/* global describe, it, expect, afterEach */

// Faults injected into real servers during a load: connections killed, the server
// restarted, the server frozen. Afterwards the data must equal the input exactly and the
// counts must be right; re-sent batches make delivery at-least-once (HSET is idempotent).
// Run against every server kind found: Redis 7.0 and 8.0, Valkey 8.0 and 9.1 (test/helpers/servers.js).
const { startRedis, describeEachServer } = require('./helpers/redis-server')
const { load } = require('..')
const { scaledMs } = require('./helpers/wait')

// Records of a load with faults: enough that the fault comes mid-load (and, killed over and
// over, at most ROWS: the kills come on a timer); each record's hash checked afterwards.
const ROWS = 500_000
const KILL_ROWS = 150_000
const RESTART_ROWS = 200_000
const servers = []

afterEach(async () => {
  while (servers.length) await servers.pop().stop()
})

async function server (kind, args) {
  const s = await startRedis({ args, server: kind })
  servers.push(s)
  return s
}

const row = i => ({ id: i, name: `name-${i}`, score: String((i * 7919) % 10007) })

function * rows (n) {
  for (let i = 0; i < n; i++) yield row(i)
}

// The records whose hash r:{id} is not exactly { id, name, score } as rows() makes them, for
// ids ARGV[1] to ARGV[2] (the first 10 found), checked on the server: one EVAL a range instead
// of an HGETALL a key (500,000 of those took 6.5 s).
const BAD_RECORDS = `local bad = {}
for id = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  local h = redis.call('HGETALL', 'r:' .. id)
  local f = {}
  for j = 1, #h, 2 do f[h[j]] = h[j + 1] end
  if #h ~= 6 or f.id ~= tostring(id) or f.name ~= 'name-' .. id or f.score ~= tostring((id * 7919) % 10007) then
    bad[#bad + 1] = id
    if #bad == 10 then break end
  end
end
return bad`

/** Every key present with exactly its fields, and nothing else. */
async function expectExactly (redis, n) {
  expect(await redis.dbsize()).toBe(n)
  for (let i = 0; i < n; i += 20_000) {
    const bad = await redis.eval(BAD_RECORDS, 0, i, Math.min(n, i + 20_000) - 1)
    if (bad.length) expect.fail(`r:${bad[0]} is ${JSON.stringify(await redis.hgetall(`r:${bad[0]}`))} (${bad.length > 1 ? `and r:${bad.slice(1).join(', r:')} are wrong too` : 'the only one wrong in its range'})`)
  }
}

function expectCounts (summary, n) {
  expect(summary).toMatchObject({ records: n, loaded: n, errors: 0, errorReplies: 0 })
  expect(summary.acknowledged).toBe(summary.commands)
}

/** Run `fault` every `ms` while the load runs: `count` so far, `stop()` resolves with the last. */
function repeatedly (ms, fault) {
  let stop = false
  let count = 0
  const done = (async () => {
    while (!stop) {
      await new Promise(resolve => setTimeout(resolve, ms))
      if (!stop && await fault()) count++
    }
  })()
  return {
    get count () { return count },
    async stop () { stop = true; await done; return count }
  }
}

describeEachServer('connection faults', kind => {
  it(`runs on ${kind.name} (INFO server)`, async () => {
    const srv = await server(kind)
    expect(await srv.identity()).toEqual({ name: kind.name, version: kind.version })
  })

  it('survives its connection being killed over and over (CLIENT KILL)', async () => {
    const srv = await server(kind)
    const admin = srv.client()
    const killing = repeatedly(150, async () => {
      const list = String(await admin.call('CLIENT', 'LIST'))
      const ids = [...list.matchAll(/id=(\d+) .*name=pipeload-data/g)].map(m => m[1])
      for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', id)
      return ids.length > 0
    })
    // KILL_ROWS records, and more (up to ROWS) until the connection has been killed 4 times:
    // records after each of the first 3 kills, whatever the machine's speed.
    let n = 0
    function * input () {
      while (n < KILL_ROWS || (killing.count < 4 && n < ROWS)) yield row(n++)
    }
    const reconnects = []
    const summary = await load({ url: srv.url, input: input(), key: 'r:{id}', onReconnect: e => reconnects.push(e) })
    const kills = await killing.stop()
    expect(kills).toBeGreaterThan(2)
    expect(summary.reconnects).toBeGreaterThan(2)
    expect(reconnects.length).toBe(summary.reconnects)
    expectCounts(summary, n)
    await expectExactly(admin, n)
  }, scaledMs(120_000))

  it('survives a server restart mid-load (appendfsync always)', async () => {
    const srv = await server(kind, ['--appendonly', 'yes', '--appendfsync', 'always'])
    let restarted = false
    async function * slowThenRestart () {
      let i = 0
      for (const r of rows(RESTART_ROWS)) {
        if (i++ === RESTART_ROWS / 2) { await srv.restart(); restarted = true }
        yield r
      }
    }
    const summary = await load({ url: srv.url, input: slowThenRestart(), key: 'r:{id}', retryTimeout: 30_000 })
    expect(restarted).toBe(true)
    expect(summary.reconnects).toBeGreaterThanOrEqual(1)
    expectCounts(summary, RESTART_ROWS)
    await expectExactly(srv.client(), RESTART_ROWS)
  }, scaledMs(120_000))

  it('detects a frozen server (SIGSTOP) by --timeout and finishes after SIGCONT', async () => {
    const srv = await server(kind)
    let frozen = false
    async function * freezeMidway () {
      let i = 0
      for (const r of rows(200_000)) {
        if (i++ === 100_000) {
          srv.proc.kill('SIGSTOP')
          frozen = true
          setTimeout(() => srv.proc.kill('SIGCONT'), 2500)
        }
        yield r
      }
    }
    const started = Date.now()
    const summary = await load({ url: srv.url, input: freezeMidway(), key: 'r:{id}', timeout: 500, connectTimeout: 1000, retryTimeout: 30_000 })
    expect(frozen).toBe(true)
    expect(Date.now() - started).toBeGreaterThan(2500)
    expect(summary.reconnects).toBeGreaterThanOrEqual(1)
    expectCounts(summary, 200_000)
    await expectExactly(srv.client(), 200_000)
  }, scaledMs(120_000))

  it('gives up after --retry-timeout with a clear error and the counts so far', async () => {
    const srv = await server(kind)
    async function * stopMidway () {
      let i = 0
      for (const r of rows(100_000)) {
        if (i++ === 50_000) await srv.kill('SIGKILL')
        yield r
      }
    }
    const err = await load({ url: srv.url, input: stopMidway(), key: 'r:{id}', retryTimeout: 800 }).then(() => null, e => e)
    expect(err.code).toBe('PIPELOAD_CONNECTION_LOST')
    expect(err.message).toMatch(/could not reconnect within 800 ms/)
    expect(err.summary.loaded).toBeGreaterThan(10_000)
    expect(err.summary.loaded).toBeLessThanOrEqual(50_000)
  }, scaledMs(60_000))
})
