'use strict'
/* global describe, it, expect, afterEach */

// Re-sent commands are counted and said: after a link that goes silent (the proxy below
// keeps passing commands to a real server but stops passing its replies back, in the middle
// of a batch), --timeout
// closes the connection and every unacknowledged batch is sent again. The server ran
// those commands already, so with `INCR c:{id}` (one counter per record) each re-sent
// command shows as a counter above 1: the sum of (count - 1) over the records, read back
// from the server, is the number of commands that ran twice, and it must equal the
// summary's resentCommands.

const net = require('node:net')
const { startRedis } = require('./helpers/redis-server')
const { recordCounts } = require('./helpers/counters')
const { runCli } = require('./helpers/run-cli')
const { startFakeRedis, ordinaryReply, bulk } = require('./helpers/fake-redis')
const { load } = require('..')
const { notIdempotent } = require('../lib/encode/idempotent')
const { formatSummary } = require('../lib/run/reporter')
const { scaledMs } = require('./helpers/wait')

const ROWS = 60_000
const closers = []

afterEach(async () => {
  while (closers.length) await closers.pop()()
})

/**
 * A TCP proxy to `port`. The first connection that has carried more than `silentAfter`
 * bytes towards the server (the data connection; the control connection carries a few
 * hundred) passes `then` more bytes of replies back and no more: the replies stop in the
 * middle of a batch (an INCR reply is 4 bytes), so the batch re-sent first had some of its
 * commands answered. Commands still pass on to the server. Every other connection passes
 * both ways.
 */
async function silentReplyProxy (port, silentAfter, then = 1002) {
  let tripped = 0
  const sockets = new Set()
  const server = net.createServer(client => {
    const upstream = net.connect(port, '127.0.0.1')
    let up = 0
    let left = Infinity // reply bytes still passed back
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('error', () => {})
      s.on('close', () => { client.destroy(); upstream.destroy() })
    }
    client.on('data', d => {
      up += d.length
      if (left === Infinity && tripped === 0 && up > silentAfter) { left = then; tripped++ }
      upstream.write(d)
    })
    upstream.on('data', d => {
      if (left < d.length) d = d.subarray(0, left)
      if (left !== Infinity) left -= d.length
      if (d.length) client.write(d)
    })
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const close = () => {
    for (const s of sockets) s.destroy()
    return new Promise(resolve => server.close(() => resolve()))
  }
  closers.push(close)
  return { port: server.address().port, tripped: () => tripped }
}

async function redis () {
  const srv = await startRedis()
  closers.push(() => srv.stop())
  return srv
}

function * rows (n) {
  for (let i = 0; i < n; i++) yield { id: i }
}

/** Commands that ran more than once, from the counters: sum of (count - 1), and no record missing. */
async function ranTwice (client, prefix, n) {
  const counts = await recordCounts(client, prefix, n)
  expect(counts.filter(c => c === 0).length).toBe(0)
  return counts.reduce((sum, c) => sum + c - 1, 0)
}

describe('which templates are safe to re-send', () => {
  it('names the commands that add to what is there, once each; unknown counts as unsafe; map() is unknown', () => {
    expect(notIdempotent(['HSET u:{id} *', 'SET k:{id} {v}', 'SADD s {x}', 'ZADD z {score} {id}', 'EXPIRE u:{id} 60', 'DEL old:{id}', 'JSON.SET j:{id} $ {$}'])).toEqual([])
    expect(notIdempotent(['RPUSH l {id}', 'hincrby h:{id} n 1', 'XADD s * id {id}', 'RPUSH l2 {id}', 'ZADD z INCR 1 {id}', 'TS.ADD t {ts} {v}', 'APPEND a {x}'])).toEqual(['RPUSH', 'HINCRBY', 'XADD', 'ZADD INCR', 'TS.ADD', 'APPEND'])
    expect(notIdempotent(['ZADD z incr 1 {id}'])).toEqual(['ZADD INCR'])
    expect(notIdempotent(null)).toBe(null)
  })

  it('the summary warns only when re-sent commands may have run twice', () => {
    const s = { input: 'a.csv', target: 't', records: 2, loaded: 2, commands: 2, errors: 0, durationMs: 1, batches: 1, reconnects: 1, resentBatches: 2, resentCommands: 1000 }
    expect(formatSummary({ ...s, notIdempotent: [], possibleDuplicates: false })).not.toMatch(/warning/)
    expect(formatSummary({ ...s, notIdempotent: ['RPUSH', 'INCR'], possibleDuplicates: true }).split('\n').at(-1))
      .toBe('warning: 1,000 commands were re-sent after a lost connection and may have run twice: RPUSH, INCR are not idempotent (docs/resume.md "Re-sent commands")')
    expect(formatSummary({ ...s, notIdempotent: null, possibleDuplicates: true })).toMatch(/may have run twice: the commands of map\(\) are not known to be idempotent/)
    expect(formatSummary({ ...s, notIdempotent: [], possibleDuplicates: false })).toMatch(/· 1 reconnect, 2 batches re-sent \(1,000 commands\)$/m)
    // A cluster node that died: its unanswered commands re-routed to the new owner, no reconnect.
    expect(formatSummary({ ...s, reconnects: 0, resentBatches: 0, notIdempotent: [], possibleDuplicates: false })).toMatch(/· 1,000 commands re-sent$/m)
  })

  it('a resume after an unclean stop: its own warning line, beside a reconnect\'s', () => {
    const s = { input: 'a.csv', target: 't', records: 2, loaded: 2, commands: 2, errors: 0, durationMs: 1, batches: 1, reconnects: 0, resentBatches: 0, resentCommands: 0, resumedFrom: 1 }
    const unclean = 'warning: resumed after an unclean stop (the checkpoint was not closed: kill -9, a crash, or replies not awaited), so the commands acknowledged after its last write were re-sent and may have run twice: '
    expect(formatSummary({ ...s, uncleanStop: true, notIdempotent: ['RPUSH'], possibleDuplicates: true }).split('\n').slice(2))
      .toEqual([unclean + 'RPUSH is not idempotent (docs/resume.md "Re-sent commands")'])
    expect(formatSummary({ ...s, uncleanStop: true, notIdempotent: [], possibleDuplicates: false })).not.toMatch(/warning/)
    const both = formatSummary({ ...s, reconnects: 1, resentBatches: 1, resentCommands: 5, uncleanStop: true, notIdempotent: null, possibleDuplicates: true }).split('\n').slice(2)
    expect(both).toEqual([
      'warning: 5 commands were re-sent after a lost connection and may have run twice: the commands of map() are not known to be idempotent (docs/resume.md "Re-sent commands")',
      unclean + 'the commands of map() are not known to be idempotent (docs/resume.md "Re-sent commands")'
    ])
  })
})

describe('re-sent commands', () => {
  it('a link that goes silent: resentCommands equals the commands the server ran twice', async () => {
    const srv = await redis()
    const proxy = await silentReplyProxy(srv.port, 200_000)
    const events = []
    const summary = await load({
      url: `redis://127.0.0.1:${proxy.port}`,
      input: rows(ROWS),
      command: 'INCR rs:{id}',
      batchSize: 500,
      window: 8,
      timeout: '500ms',
      retryTimeout: '10s',
      onReconnect: e => events.push(e)
    })
    expect(proxy.tripped()).toBe(1)
    expect(summary).toMatchObject({ records: ROWS, loaded: ROWS, errors: 0, reconnects: 1, notIdempotent: ['INCR'], possibleDuplicates: true })
    const twice = await ranTwice(srv.client(), 'rs:', ROWS)
    expect(twice).toBeGreaterThan(500) // several batches were in flight
    expect(summary.resentCommands).toBe(twice)
    expect(events.map(e => e.resentCommands)).toEqual([twice])
    expect(summary.resentBatches).toBe(events[0].resentBatches)
  }, scaledMs(60_000))

  it('the CLI says it in the text summary and in --json; SET over keys from the record is idempotent', async () => {
    const srv = await redis()
    const proxy = await silentReplyProxy(srv.port, 200_000)
    const csv = 'id\n' + Array.from({ length: ROWS }, (_, i) => i).join('\n') + '\n'
    const common = ['--batch-size', '500', '--window', '8', '--timeout', '500ms', '--retry-timeout', '10s', '-u', `redis://127.0.0.1:${proxy.port}`]
    const text = await runCli(['import', ...common, '-c', 'INCR cli:{id}', '--format', 'csv', '-'], { input: csv })
    expect(text.code).toBe(0)
    const twice = await ranTwice(srv.client(), 'cli:', ROWS)
    expect(twice).toBeGreaterThan(500)
    expect(text.stdout + text.stderr).toMatch(new RegExp(`1 reconnect, 1?\\d batches re-sent \\(${twice.toLocaleString('en-US')} commands\\)`))
    expect(text.stdout + text.stderr).toMatch(`warning: ${twice.toLocaleString('en-US')} commands were re-sent after a lost connection and may have run twice: INCR is not idempotent`)

    const proxy2 = await silentReplyProxy(srv.port, 200_000)
    const json = await runCli(['import', ...common.slice(0, -1), `redis://127.0.0.1:${proxy2.port}`, '--json', '-c', 'SET set:{id} {id}', '--format', 'csv', '-'], { input: csv })
    expect(json.code).toBe(0)
    const s = JSON.parse(json.stdout)
    expect(s).toMatchObject({ reconnects: 1, notIdempotent: [], possibleDuplicates: false })
    expect(s.resentCommands).toBeGreaterThan(500)
    expect(json.stderr).not.toMatch(/may have run twice/)
  }, scaledMs(60_000))

  it('error replies of a batch re-sent after a silence: each reply counted once, the first answer of a command the final one', async () => {
    // One server (no cluster). Its first data connection answers 1,245 commands (two batches
    // of 500 and 245 of the third: ids 1243 and 1244, answered OK, come after the third's last
    // refused one, 1242) and then nothing, though it still takes (runs) the commands it is
    // sent; later connections answer all. Every command of a record whose id % 7 === 3 is
    // refused, and a command run a second time is refused too (as XADD with an explicit id
    // is). So after the re-send, the commands the first connection answered come back
    // refused: their first answer stands (an OK stays loaded, an error is not counted
    // again); the ones it took without answering did run twice, and their refusal counts.
    const N = 20_000
    const ran = new Set()
    const unanswered = new Set() // ids the first data connection ran without answering
    let silentConn = null
    const fake = await startFakeRedis((args, conn) => {
      if (args[0] !== 'SET') return ordinaryReply(args)
      const id = Number(args[1].slice(3))
      const again = ran.has(id)
      ran.add(id)
      conn.sets = (conn.sets || 0) + 1
      if (silentConn === null && conn.sets > 1245) silentConn = conn.index
      if (conn.index === silentConn) { unanswered.add(id); return null }
      if (id % 7 === 3) return `-ERR bad value for ${id}\r\n`
      return again ? `-ERR ran twice: ${id}\r\n` : '+OK\r\n'
    })
    closers.push(() => fake.close())
    const failed = []
    const summary = await load({
      url: `redis://127.0.0.1:${fake.port}`, input: rows(N), command: 'SET rs:{id} v', batchSize: 500, window: 8, timeout: '500ms', retryTimeout: '10s',
      onError: 'skip', maxFailures: N, onFailure: f => failed.push(Number(f.message.split(' ').at(-1)))
    })
    expect(silentConn).not.toBe(null)
    expect(unanswered.size).toBeGreaterThan(500) // whole batches and the rest of a partly answered one
    // The oracle: the ids the server refused whatever the order, and those it ran twice.
    const expected = new Set(unanswered)
    for (let id = 0; id < N; id++) if (id % 7 === 3) expected.add(id)
    expect(summary).toMatchObject({ records: N, loaded: N - expected.size, errors: expected.size, errorReplies: expected.size })
    expect(failed.length).toBe(expected.size) // each failed record reported once
    expect(new Set(failed)).toEqual(expected)
  }, scaledMs(60_000))

  it('a cluster node that goes silent: only its unanswered commands are re-sent, and counted', async () => {
    // A one-node cluster (all slots on itself). Its first data connection answers 1,250
    // INCRs (two and a half batches of 500) and then nothing; later connections answer all.
    let silentConn = null
    const fake = await startFakeRedis((args, conn) => {
      const n = args.join(' ').toUpperCase()
      if (/^(CLIENT|AUTH|SELECT)/.test(n)) return '+OK\r\n'
      if (/^INFO/.test(n)) return bulk('cluster_enabled:1\r\n')
      if (/^CLUSTER SLOTS/.test(n)) return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n${bulk('127.0.0.1')}:${conn.port}\r\n`
      if (!n.startsWith('INCR ')) return ordinaryReply(args)
      conn.incrs = (conn.incrs || 0) + 1
      if (silentConn === null && conn.incrs > 1250) silentConn = conn.index
      return conn.index === silentConn ? null : ':1\r\n'
    })
    closers.push(() => fake.close())
    const summary = await load({
      url: `redis://127.0.0.1:${fake.port}`, input: rows(20_000), command: 'INCR rs:{id}', batchSize: 500, window: 8, timeout: '500ms', retryTimeout: '10s'
    })
    expect(silentConn).not.toBe(null)
    const incrs = fake.state.commands.filter(c => c.args[0] === 'INCR').map(c => c.args[1])
    const twice = incrs.length - new Set(incrs).size
    expect(new Set(incrs).size).toBe(20_000)
    expect(twice).toBeGreaterThan(500)
    expect(summary).toMatchObject({ records: 20_000, loaded: 20_000, reconnects: 1, possibleDuplicates: true })
    expect(summary.resentCommands).toBe(twice)
  }, scaledMs(60_000))
})
