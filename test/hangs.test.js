'use strict'
/* global describe, it, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// No hang: a server that accepts and never answers (or answers a few commands and then
// goes silent, or starts a bulk reply that never ends) ends every stage of a run within
// the timeouts given, with exit 4 and a message naming the target and the stage; the first
// Ctrl-C / SIGTERM ends any stage at once. Fake servers (test/helpers/fake-redis.js) stand
// in for the misbehaving Redis; bounds are generous (the timeouts plus 5 s on a quiet machine,
// that 5 s scaled to this machine: helpers/wait.js), not speed checks.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { startFakeRedis, ordinaryReply, bulk } = require('./helpers/fake-redis')
// Spawned: these tests are about the process ending (and run side by side).
const { runCliSpawned: runCli, BIN, ROOT, BASE_ENV } = require('./helpers/run-cli')
const { scaledMs } = require('./helpers/wait')
const { load, bench } = require('..')

// Taken in each test before its clock starts (the machine's load changes within a run).
const slackMs = () => scaledMs(5000)
// The timeouts the runs are given: 1 s on a quiet machine, scaled to this one in whole seconds.
// Fixed at 1 s, a loaded machine answered a reconnect's handshake (the fake server answers it)
// after the connect timeout, and the run ended with another message than the one tested.
function fast () {
  const s = Math.ceil(scaledMs(1000) / 1000)
  return { s, ms: s * 1000, args: ['--connect-timeout', `${s}s`, '--timeout', `${s}s`, '--retry-timeout', `${s}s`] }
}

let tmp
let csv
const fakes = []

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-hangs-'))
  csv = path.join(tmp, 'rows.csv')
  fs.writeFileSync(csv, 'id,name\n1,ada\n2,grace\n')
})

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
})

// The tests run side by side (describe.concurrent: most of each is waiting for a timeout), so
// a test's fake servers are closed when the file ends, not after each test (an afterEach
// would close those of the tests still running).
afterAll(async () => {
  while (fakes.length) await fakes.pop().close()
})

async function fake (answer) {
  const f = await startFakeRedis(answer)
  fakes.push(f)
  return f
}

const name = args => args.join(' ').toUpperCase()
const silent = () => null
// Answers the handshake and INFO (not a cluster), then nothing: the load's batches hang.
const handshakeOnly = args => /^(CLIENT|INFO|AUTH|SELECT)/.test(name(args)) ? ordinaryReply(args) : null
// The control connection (the first) works; every later one (the data plane) is silent.
const controlOnly = (args, conn) => conn.index === 0 ? ordinaryReply(args) : null
// A cluster node that never answers CLUSTER SLOTS.
// A Sentinel and its master in one: it names itself as the master and answers ioredis's
// role check, but never answers the data connection's INFO replication.
const sentinelMasterNoReplicationInfo = (args, conn) => {
  const n = name(args)
  if (n === 'SENTINEL GET-MASTER-ADDR-BY-NAME M') return `*2\r\n${bulk('127.0.0.1')}${bulk(String(conn.port))}`
  if (/^SENTINEL/.test(n)) return '*0\r\n'
  if (n === 'INFO REPLICATION') return null
  if (/^INFO/.test(n)) return bulk('# Replication\r\nrole:master\r\nloading:0\r\n')
  return /^(CLIENT|AUTH|SELECT)/.test(n) ? '+OK\r\n' : null
}
const clusterNoSlots = args => /^CLIENT/.test(name(args)) ? '+OK\r\n' : /^INFO/.test(name(args)) ? bulk('cluster_enabled:1\r\n') : null
// A one-node cluster (all slots on itself) that answers setup and CLUSTER SLOTS, never a batch.
const silentClusterNode = (args, { port }) => {
  const n = name(args)
  if (/^(CLIENT|AUTH|SELECT)/.test(n)) return '+OK\r\n'
  if (/^INFO/.test(n)) return bulk('cluster_enabled:1\r\n')
  if (/^CLUSTER SLOTS/.test(n)) return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n${bulk('127.0.0.1')}:${port}\r\n`
  return null
}
// The first command's reply is a bulk string of almost 1 GB that never comes.
const endlessBulk = (args, conn) => conn.commands.length === 1 ? '$999999999\r\nonly a few bytes' : null
const endlessBulkAfterHandshake = args => /^(CLIENT|INFO)/.test(name(args)) ? ordinaryReply(args) : '$999999999\r\nonly a few bytes'

// [what, answer, extra args, stage in the message, code in the message or exit]
const STAGES = [
  ['never answers: the control handshake', silent, [], /while sending CLIENT SETNAME/],
  ['never answers AUTH', silent, ['--user', 'u'], /while sending AUTH/, { REDISCLI_AUTH: 'not-printed' }],
  ['never answers SELECT', silent, ['-n', '3'], /while sending SELECT/],
  ['answers with a bulk header that never ends', endlessBulk, [], /while sending CLIENT SETNAME/],
  ['answers CLIENT SETNAME, never INFO cluster', args => /^CLIENT/.test(name(args)) ? '+OK\r\n' : null, [], /while asking INFO cluster/],
  ['the data connection never answers its handshake', controlOnly, [], /while sending CLIENT SETNAME/],
  ['the data connection never answers AUTH', controlOnly, [], /while sending AUTH/, { REDISCLI_AUTH: 'not-printed' }],
  ['a cluster node that never answers CLUSTER SLOTS', clusterNoSlots, [], /while asking for the cluster's slots \(CLUSTER SLOTS\)/],
  ['--tls to a server that does not speak it', silent, ['--tls'], /during the TLS handshake.*may not speak TLS on this port: drop --tls/],
  ['a sentinel that never answers', silent, 'sentinel', /while asking the sentinels where master "m" is/],
  ['a Sentinel master that never answers INFO replication', sentinelMasterNoReplicationInfo, 'sentinel-master', /while asking INFO replication/]
]

function cliArgs (f, extra) {
  if (extra === 'sentinel' || extra === 'sentinel-master') return ['import', csv, '--key', 'k:{id}', '--sentinel', `${f.host}:${f.port}`, '--master-name', 'm']
  return ['import', csv, '--key', 'k:{id}', '-h', f.host, '-p', String(f.port), ...extra]
}

describe.concurrent('hangs: every setup stage ends within --connect-timeout, exit 4, naming target and stage', () => {
  for (const [what, answer, extra, stage, env] of STAGES) {
    it(what, async ({ expect }) => {
      const f = await fake(answer)
      const t = fast()
      const bound = t.ms + slackMs()
      const t0 = Date.now()
      const res = await runCli([...cliArgs(f, extra), ...t.args], { env, timeoutMs: bound })
      expect(Date.now() - t0).toBeLessThan(bound)
      expect(res.code, res.stderr).toBe(4)
      expect(res.stderr).toMatch(extra === 'sentinel' ? `sentinel ${f.host}:${f.port}` : `${f.host}:${f.port}`)
      expect(res.stderr).toMatch(stage)
      expect(res.stderr).toMatch(`within ${t.s}s `) // --connect-timeout as given, 4s (issue 34 item 11)
      expect(res.stderr).not.toMatch(/\n\s+at |internal error|not-printed/)
      expect(f.state.connections).toBeGreaterThan(0)
    })
  }

  it('bench: a server that never answers', async ({ expect }) => {
    const f = await fake(silent)
    const t = fast()
    const res = await runCli(['bench', '-h', f.host, '-p', String(f.port), '--connect-timeout', `${t.s}s`], { timeoutMs: t.ms + slackMs() })
    expect(res.code, res.stderr).toBe(4)
    expect(res.stderr).toMatch(`${f.host}:${f.port} did not answer within ${t.s}s while sending CLIENT SETNAME`)
  })

  it('bench: a data connection that never answers', async ({ expect }) => {
    const f = await fake(controlOnly)
    const t = fast()
    const res = await runCli(['bench', '-h', f.host, '-p', String(f.port), '--connect-timeout', `${t.s}s`], { timeoutMs: t.ms + slackMs() })
    expect(res.code, res.stderr).toBe(4)
    expect(res.stderr).toMatch(`${f.host}:${f.port} did not answer within ${t.s}s while sending CLIENT SETNAME`)
    expect(f.state.connections).toBeGreaterThan(1)
  })

  it('bench: a server that stops answering the checks (GET) ends: exit 4', async ({ expect }) => {
    const f = await fake(args => /^(GET|HGET|MGET)$/i.test(args[0]) ? null : /^INCR$/i.test(args[0]) ? ':1\r\n' : ordinaryReply(args))
    const t = fast()
    const res = await runCli(['bench', '-h', f.host, '-p', String(f.port), '--count', '10', '--batch-sizes', '10', '--connect-timeout', `${t.s}s`], { timeoutMs: 2 * t.ms + slackMs() })
    expect(res.code, res.stderr).toBe(4)
    expect(res.stderr).toMatch(`Redis at ${f.host}:${f.port} did not answer a command of the benchmark within ${t.s}s (connect timeout)`) // as given)
    expect(res.stderr).not.toMatch(/\n\s+at |internal error/)
  })

  it('--connect-timeout must be a duration over 0', async ({ expect }) => {
    const res = await runCli(['import', csv, '--key', 'k:{id}', '--connect-timeout', '0'])
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/--connect-timeout must be a duration/)
  })
})

describe.concurrent('hangs: a server that goes silent mid-load hits --timeout and ends', () => {
  // Each reconnect succeeds (the handshake is answered) but brings no reply: the retry
  // time runs from the last reply, not from the last reconnect.
  for (const [what, answer] of [
    ['a cluster node that answers setup and CLUSTER SLOTS, never a batch', silentClusterNode],
    ['answers the handshake, never a batch', handshakeOnly],
    ['answers a batch with a bulk header that never ends', endlessBulkAfterHandshake]
  ]) {
    it(what, async ({ expect }) => {
      const f = await fake(answer)
      const t = fast()
      const bound = 3 * t.ms + slackMs()
      const t0 = Date.now()
      const res = await runCli([...cliArgs(f, []), ...t.args], { timeoutMs: bound })
      expect(Date.now() - t0).toBeLessThan(bound)
      expect(res.code, res.stderr).toBe(4)
      expect(res.stderr).toMatch(`Redis at ${f.host}:${f.port} sent no reply for ${t.s}s; still no reply after reconnecting for ${t.s}s`)
      expect(f.sent('HSET')).toBe(true)
    })
  }
})

/** Spawn the CLI; resolves `exited` with { code, stderr, at } (at: when it exited). */
function startCli (args, env = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...BASE_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const err = []
  child.stderr.on('data', d => err.push(d))
  child.stdout.resume()
  const exited = new Promise(resolve => child.on('close', code => resolve({ code, stderr: Buffer.concat(err).toString(), at: Date.now() })))
  return { child, exited }
}

/** The bound on an exit after a signal, and timeouts that no exit within it can come from. */
function signalBound () {
  const bound = slackMs()
  const twice = Math.ceil(2 * bound / 1000)
  return { bound, connect: ['--connect-timeout', `${Math.max(10, twice)}s`], reply: ['--timeout', `${Math.max(30, twice)}s`] }
}

describe.concurrent('hangs: the first Ctrl-C or SIGTERM ends any stage at once', () => {
  // Timeouts of twice the bound at least (10 s to connect and 30 s without a reply, the
  // defaults, where the bound is 5 s): an exit within the bound of the signal is the signal's
  // doing. Each waits for the fake server to see the stage begin.
  const cases = [
    ['the control handshake', silent, [], f => f.sent('CLIENT SETNAME')],
    ['INFO cluster', args => /^CLIENT/.test(name(args)) ? '+OK\r\n' : null, [], f => f.sent('INFO')],
    ['the data connection handshake', controlOnly, [], f => f.state.commands.some(c => c.conn === 1)],
    ['CLUSTER SLOTS', clusterNoSlots, [], f => f.sent('CLUSTER')],
    ['the TLS handshake', silent, ['--tls'], f => f.state.connections > 0],
    ['the sentinel lookup', silent, 'sentinel', f => f.state.commands.length > 0],
    ['INFO replication of a Sentinel master', sentinelMasterNoReplicationInfo, 'sentinel', f => f.sent('INFO replication')],
    ['mid-load, waiting for replies', handshakeOnly, [], f => f.sent('HSET')],
    ['mid-load on a cluster, waiting for replies', silentClusterNode, [], f => f.sent('HSET')]
  ]
  for (const [stage, answer, extra, began] of cases) {
    it(`SIGINT during ${stage}: exit 130`, async ({ expect }) => {
      const f = await fake(answer)
      const { bound, connect, reply } = signalBound()
      const { child, exited } = startCli([...cliArgs(f, extra), ...connect, ...reply])
      await f.until(() => began(f))
      const t0 = Date.now()
      child.kill('SIGINT')
      const res = await exited
      expect(res.at - t0).toBeLessThan(bound)
      expect(res.code, res.stderr).toBe(130)
      expect(res.stderr).toMatch(/aborted/)
      expect(res.stderr).not.toMatch(/\n\s+at |internal error/)
    })
  }

  it('SIGTERM during the control handshake: exit 143', async ({ expect }) => {
    const f = await fake(silent)
    const { bound, connect, reply } = signalBound()
    const { child, exited } = startCli([...cliArgs(f, []), ...connect, ...reply])
    await f.until(() => f.sent('CLIENT SETNAME'))
    const t0 = Date.now()
    child.kill('SIGTERM')
    const res = await exited
    expect(res.at - t0).toBeLessThan(bound)
    expect(res.code, res.stderr).toBe(143)
  })

  it('SIGINT during bench setup: exit 130', async ({ expect }) => {
    const f = await fake(silent)
    const { bound, connect } = signalBound()
    const { child, exited } = startCli(['bench', '-h', f.host, '-p', String(f.port), ...connect])
    await f.until(() => f.sent('CLIENT SETNAME'))
    const t0 = Date.now()
    child.kill('SIGINT')
    const res = await exited
    expect(res.at - t0).toBeLessThan(bound)
    expect(res.code, res.stderr).toBe(130)
  })
})

/** Resolves once the fake server has taken one connection of ours: any earlier one shows. */
async function probe (f) {
  const s = net.connect(f.port, f.host, () => s.write('*1\r\n$4\r\nPING\r\n'))
  s.on('error', () => {})
  await f.until(st => st.commands.some(c => c.args[0] === 'PING'))
  s.destroy()
}

describe.concurrent('hangs: the library honours signal and connectTimeout during setup', () => {
  const rec = [{ id: 1 }]

  it('load() with an already-aborted signal opens no connection at all', async ({ expect }) => {
    const f = await fake(ordinaryReply)
    const err = await load({ host: f.host, port: f.port, input: rec, key: 'k:{id}', signal: AbortSignal.abort() }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_ABORTED')
    await probe(f)
    expect(f.state.connections).toBe(1) // the probe's
  })

  it('bench() with an already-aborted signal opens no connection at all', async ({ expect }) => {
    const f = await fake(ordinaryReply)
    const err = await bench({ host: f.host, port: f.port, count: 10, batchSizes: [10], signal: AbortSignal.abort() }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_ABORTED')
    await probe(f)
    expect(f.state.connections).toBe(1)
  })

  it('aborting during the handshake rejects with PIPELOAD_ABORTED', async ({ expect }) => {
    const f = await fake(silent)
    const ac = new AbortController()
    const run = load({ host: f.host, port: f.port, input: rec, key: 'k:{id}', signal: ac.signal }).catch(e => e)
    await f.until(() => f.sent('CLIENT SETNAME'))
    ac.abort()
    const err = await run
    expect(err.code).toBe('PIPELOAD_ABORTED')
    expect(err.message).toMatch(/while sending CLIENT SETNAME/)
  })

  it('aborting while the data connection waits for its handshake', async ({ expect }) => {
    const f = await fake(controlOnly)
    const ac = new AbortController()
    const run = load({ host: f.host, port: f.port, input: rec, key: 'k:{id}', signal: ac.signal }).catch(e => e)
    await f.until(st => st.commands.some(c => c.conn === 1))
    ac.abort()
    expect((await run).code).toBe('PIPELOAD_ABORTED')
  })

  it('connectTimeout takes a duration; the error names target and stage', async ({ expect }) => {
    const f = await fake(silent)
    const err = await load({ host: f.host, port: f.port, input: rec, key: 'k:{id}', connectTimeout: '300ms' }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_TIMEOUT')
    expect(err.exitCode).toBe(4)
    expect(err.message).toBe(`Redis at ${f.host}:${f.port} did not answer within 300ms while sending CLIENT SETNAME (connect timeout)`) // as given
    expect(err.target).toBe(`${f.host}:${f.port}`)
  })

  it('bench() on a server that never answers: PIPELOAD_TIMEOUT', async ({ expect }) => {
    const f = await fake(silent)
    const err = await bench({ host: f.host, port: f.port, count: 10, batchSizes: [10], connectTimeout: 300 }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_TIMEOUT')
    expect(err.message).toMatch(`${f.host}:${f.port} did not answer within 300 ms`)
  })
})
