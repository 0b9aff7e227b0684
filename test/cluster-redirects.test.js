'use strict'
/* global describe, it, expect */

// Cluster nodes that redirect (MOVED, ASK) or refuse (TRYAGAIN) without end: a scripted
// node that says it owns every slot and then answers each data command with a redirect to
// itself. Before, such a node kept a load busy forever (every MOVED is a reply, so no
// timeout fired), a MOVED slot was used as an array index unchecked, and SIGINT, SIGTERM
// and abort() were not heeded. Now a command follows at most 16 redirections (as ioredis),
// a redirect's slot and address are checked, and an abort ends the run once a grace passes
// without a final reply.

const { spawn } = require('node:child_process')
const slotOf = require('cluster-key-slot') // the reference for slots, not our own hashing
const { scriptedServer, usual } = require('./helpers/scripted-server')
const { runCliSpawned, BIN, BASE_ENV, ROOT } = require('./helpers/run-cli')
const { waitFor, scaledMs } = require('./helpers/wait')
const { load } = require('..')

const CSV = 'id\n1\n2\n3\n' // the case: 3 rows
// Deadlines grow with a slower machine (helpers/wait.js scaledMs).
const scaled = scaledMs

const bulk = t => `$${Buffer.byteLength(t)}\r\n${t}\r\n`

/**
 * A one-node "cluster": INFO says cluster_enabled:1, CLUSTER SLOTS gives it every slot,
 * and `data(args, self)` answers each data command (self: "127.0.0.1:port"); `delayMs`
 * holds each data reply back that long.
 */
async function clusterNode (data, { delayMs = 0 } = {}) {
  const counts = { data: 0, slots: 0 }
  const node = await scriptedServer((args, conn) => {
    const cmd = args[0].toUpperCase()
    if (cmd === 'INFO') return bulk('# Cluster\r\ncluster_enabled:1\r\n')
    if (cmd === 'CLUSTER') { counts.slots++; return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n${bulk('127.0.0.1')}:${node.port}\r\n` }
    const ordinary = usual(args)
    if (ordinary !== null) return ordinary
    counts.data++
    const reply = data(args, `127.0.0.1:${node.port}`)
    if (!delayMs) return reply
    setTimeout(() => { if (!conn.socket.destroyed) conn.socket.write(reply) }, delayMs)
    return null
  })
  node.counts = counts
  return node
}

const movedToSelf = (args, self) => `-MOVED ${slotOf(args[1])} ${self}\r\n`

/** Spawn an import into `url`; resolves { child, exited } (exited: { code, stderr }). */
function startImport (url, killAfterMs) {
  const child = spawn(process.execPath, [BIN, 'import', '-u', url, '-c', 'SET k:{id} {id}', '--format', 'csv', '-'], { cwd: ROOT, env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', d => { stderr += d })
  child.stdout.resume()
  child.stdin.end(CSV)
  // Before the fix the run never ended: kill it, so that the test fails on its assertions.
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
  const exited = new Promise(resolve => child.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stderr }) }))
  return { child, exited }
}

describe('a cluster node that redirects every command to itself (a redirect storm)', () => {
  it('the run fails within 5 s (scaled to the machine), exit 4, the message names the node and the redirect', async () => {
    const node = await clusterNode(movedToSelf)
    try {
      const started = Date.now()
      const r = await runCliSpawned(['import', '-u', node.url, '-c', 'SET k:{id} {id}', '--format', 'csv', '-'], { input: CSV, timeoutMs: scaled(20_000) })
      const ms = Date.now() - started
      expect(r.code).toBe(4)
      const port = node.port
      expect(r.stderr).toMatch(new RegExp(`^pipeload: a command of <stdin>:[234] was redirected 16 times and cluster node 127\\.0\\.0\\.1:${port} redirected it again \\(MOVED \\d+ 127\\.0\\.0\\.1:${port}\\): the nodes do not agree which one owns its slot \\(a redirect loop\\)$`, 'm'))
      expect(r.stderr).not.toMatch(/\n\s+at /)
      expect(ms).toBeLessThan(scaled(5000)) // before: 2,969,244 MOVED in two minutes, and on
      // Each command followed 16 redirections and no more: 3 commands, 17 sends each at most.
      expect(node.counts.data).toBeLessThanOrEqual(3 * 17)
    } finally {
      await node.close()
    }
  }, 60_000)

  it('ASK to itself is bounded the same way (library: PIPELOAD_CLUSTER_REDIRECT with target and reply)', async () => {
    const node = await clusterNode((args, self) => args[0].toUpperCase() === 'ASKING' ? '+OK\r\n' : `-ASK ${slotOf(args[1])} ${self}\r\n`)
    try {
      const err = await load({ url: node.url, input: [{ id: 1 }], command: 'SET k:{id} {id}' }).then(() => null, e => e)
      expect(err).toMatchObject({ code: 'PIPELOAD_CLUSTER_REDIRECT', exitCode: 4, target: `127.0.0.1:${node.port}`, reply: `ASK ${slotOf('k:1')} 127.0.0.1:${node.port}` })
      expect(err.message).toMatch(/was redirected 16 times/)
    } finally {
      await node.close()
    }
  }, 30_000)

  for (const [signal, code, atCommand] of [['SIGINT', 130, 1], ['SIGINT', 130, 4], ['SIGTERM', 143, 2]]) {
    it(`${signal} after the storm's command ${atCommand} ends the run (exit ${code}), long before the redirect limit`, async () => {
      // Each MOVED held back 400 ms: the 16 redirections of a command take 6.4 s at least.
      const node = await clusterNode(movedToSelf, { delayMs: 400 })
      try {
        const { child, exited } = startImport(node.url, scaled(20_000))
        await waitFor(`the node to get data command ${atCommand}`, () => node.counts.data >= atCommand, scaled(20_000))
        const sentAt = Date.now()
        child.kill(signal)
        const r = await exited
        expect(r.code).toBe(code) // before: killed (SIGKILL) with the storm still going
        expect(r.stderr).toMatch(/^pipeload: the load was aborted \(the cluster gave no command a final reply for 1000 ms; last reply: MOVED \d+ 127\.0\.0\.1:\d+ from 127\.0\.0\.1:\d+\)$/m)
        expect(Date.now() - sentAt).toBeLessThan(scaled(3000)) // the grace (1 s) and an exit
      } finally {
        await node.close()
      }
    }, 60_000)
  }

  it('abort() settles the load during the storm: PIPELOAD_ABORTED', async () => {
    const node = await clusterNode(movedToSelf, { delayMs: 400 })
    try {
      const ac = new AbortController()
      const loading = load({ url: node.url, input: [{ id: 1 }, { id: 2 }], command: 'SET k:{id} {id}', signal: ac.signal }).then(() => null, e => e)
      await waitFor('the node to get a data command', () => node.counts.data >= 2, scaled(20_000))
      ac.abort()
      const abortedAt = Date.now()
      const err = await Promise.race([loading, new Promise(resolve => setTimeout(resolve, scaled(5000), 'still running'))])
      expect(err).toMatchObject({ code: 'PIPELOAD_ABORTED' }) // before: 'still running'
      expect(Date.now() - abortedAt).toBeLessThan(scaled(3000))
    } finally {
      await node.close()
    }
  }, 30_000)
})

describe('a cluster node that keeps refusing (TRYAGAIN)', () => {
  it('--retry-timeout 1s: exit 4 once it runs out, the message naming the node and its reply', async () => {
    const node = await clusterNode(() => '-TRYAGAIN Multiple keys request during rehashing of slot\r\n')
    try {
      const r = await runCliSpawned(['import', '-u', node.url, '-c', 'SET k:{id} {id}', '--format', 'csv', '--retry-timeout', '1s', '-'], { input: CSV, timeoutMs: scaled(20_000) })
      expect(r.code).toBe(4)
      // before: "(last reply: TRYAGAIN …)", not saying which node
      expect(r.stderr).toMatch(new RegExp(`^pipeload: the cluster accepted no command for 1s \\(last reply: TRYAGAIN Multiple keys request during rehashing of slot from 127\\.0\\.0\\.1:${node.port}\\)$`, 'm'))
    } finally {
      await node.close()
    }
  }, 60_000)

  it('SIGINT ends the run at once rather than after the retry timeout (60 s)', async () => {
    const node = await clusterNode(() => '-TRYAGAIN Multiple keys request during rehashing of slot\r\n')
    try {
      const { child, exited } = startImport(node.url, scaled(20_000))
      await waitFor('three refusals', () => node.counts.data >= 3, scaled(20_000))
      const sentAt = Date.now()
      child.kill('SIGINT')
      const r = await exited
      expect(r.code).toBe(130) // before: killed (SIGKILL), still parking and re-sending
      expect(r.stderr).toMatch(/^pipeload: the load was aborted \(the cluster gave no command a final reply for 1000 ms; last reply: TRYAGAIN Multiple keys request during rehashing of slot from 127\.0\.0\.1:\d+\)$/m)
      expect(Date.now() - sentAt).toBeLessThan(scaled(3000))
    } finally {
      await node.close()
    }
  }, 60_000)
})

/**
 * Two scripted masters: `a` owns slots 0..8191 and answers every data command with +OK, `b`
 * owns 8192..16383 and answers each with `bReply`. Both give the same CLUSTER SLOTS.
 */
async function twoNodes (bReply) {
  const ports = {}
  const counts = { a: 0, b: 0 }
  const slots = () => `*2\r\n*3\r\n:0\r\n:8191\r\n*2\r\n${bulk('127.0.0.1')}:${ports.a}\r\n*3\r\n:8192\r\n:16383\r\n*2\r\n${bulk('127.0.0.1')}:${ports.b}\r\n`
  const make = (name, data) => scriptedServer(args => {
    const cmd = args[0].toUpperCase()
    if (cmd === 'INFO') return bulk('# Cluster\r\ncluster_enabled:1\r\n')
    if (cmd === 'CLUSTER') return slots()
    const ordinary = usual(args)
    if (ordinary !== null) return ordinary
    counts[name]++
    return data
  })
  const a = await make('a', '+OK\r\n')
  const b = await make('b', bReply)
  ports.a = a.port
  ports.b = b.port
  return { a, b, counts, close: () => Promise.all([a.close(), b.close()]) }
}

describe('a cluster node that keeps refusing while the others accept', () => {
  it('the run fails once one command was refused for the retry time, though other nodes make progress (exit 4, node and reply named)', async () => {
    const nodes = await twoNodes('-TRYAGAIN Multiple keys request during rehashing of slot\r\n')
    // k:0 hashes to b's half (cluster-key-slot: 13951), k:2, k:3, k:6 … to a's: one record
    // for b first, then one for a every 50 ms for as long as the run lasts (20 s at most).
    const forA = Array.from({ length: 400 }, (_, i) => i).filter(i => slotOf(`k:${i}`) < 8192)
    expect(slotOf('k:0')).toBeGreaterThanOrEqual(8192)
    const child = spawn(process.execPath, [BIN, 'import', '-u', nodes.a.url, '-c', 'SET k:{id} {id}', '--format', 'csv', '-b', '1', '--retry-timeout', '1s', '-'], { cwd: ROOT, env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', d => { stderr += d })
    child.stdout.resume()
    child.stdin.on('error', () => {})
    child.stdin.write('id\n0\n')
    let k = 0
    const feed = setInterval(() => { if (k === 400) child.stdin.end(); else child.stdin.write(`${forA[k++ % forA.length]}\n`) }, 50)
    const kill = setTimeout(() => child.kill('SIGKILL'), scaled(40_000))
    try {
      const started = Date.now()
      const code = await new Promise(resolve => child.on('exit', resolve))
      const ms = Date.now() - started
      expect(code).toBe(4)
      expect(stderr).toMatch(new RegExp(`^pipeload: cluster node 127\\.0\\.0\\.1:${nodes.b.port} kept refusing a command of <stdin>:2 for 1s \\(retry timeout\\), while other nodes accepted theirs \\(last reply: TRYAGAIN Multiple keys request during rehashing of slot\\)$`, 'm'))
      expect(nodes.counts.a).toBeGreaterThan(3) // the other node did make progress meanwhile
      // Before: the run went on for as long as the input lasted (400 rows, 20 s), a's replies
      // counting as the cluster's progress, and failed a second after the input ended.
      expect(ms).toBeLessThan(scaled(5000))
    } finally {
      clearInterval(feed)
      clearTimeout(kill)
      await nodes.close()
    }
  }, 120_000)
})

describe('a cluster node that refuses every connection', () => {
  it('--retry-timeout 1s: exit 4 within seconds, the message naming the node and the refusal', async () => {
    const { deadPort } = require('./helpers/redis-server')
    const dead = await deadPort()
    // The seed says slots 0..16383 live on a port nobody listens on.
    const seed = await scriptedServer(args => {
      const cmd = args[0].toUpperCase()
      if (cmd === 'INFO') return bulk('# Cluster\r\ncluster_enabled:1\r\n')
      if (cmd === 'CLUSTER') return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n${bulk('127.0.0.1')}:${dead.port}\r\n`
      // A data command sent here is answered as a cluster node owning no slot would: MOVED
      // to the dead node (answering +OK let a run that sent its commands here end with exit 0).
      return usual(args) ?? `-MOVED 0 127.0.0.1:${dead.port}\r\n`
    })
    try {
      const started = Date.now()
      const r = await runCliSpawned(['import', '-u', seed.url, '-c', 'SET k:{id} {id}', '--format', 'csv', '--retry-timeout', '1s', '-'], { input: CSV, timeoutMs: scaled(20_000) })
      expect(r.code).toBe(4)
      expect(r.stderr).toMatch(new RegExp(`^pipeload: could not connect to cluster node 127\\.0\\.0\\.1:${dead.port} within 1s and no other node took over its slots \\(last error: cannot connect to Redis at 127\\.0\\.0\\.1:${dead.port}: .*ECONNREFUSED.*\\)$`, 'm'))
      expect(r.stderr).not.toMatch(/\n\s+at /)
      expect(Date.now() - started).toBeLessThan(scaled(6000))
    } finally {
      await seed.close()
      await dead.close()
    }
  }, 60_000)
})

describe('redirects with a slot or address that cannot be', () => {
  const cases = [
    ['MOVED 1000000000 {self}', 'a slot outside 0..16383'],
    ['MOVED 16384 {self}', 'a slot outside 0..16383'],
    ['MOVED -1 {self}', 'a slot outside 0..16383'],
    ['MOVED abc {self}', 'a slot outside 0..16383'],
    ['ASK 99999 {self}', 'a slot outside 0..16383'],
    ['MOVED 12', 'an address that is not host:port'],
    ['MOVED 12 127.0.0.1:0', 'an address that is not host:port'],
    ['ASK 12 127.0.0.1', 'an address that is not host:port']
  ]
  it.each(cases)('%s: PIPELOAD_CLUSTER_REDIRECT at once, naming the node and the reply', async (reply, what) => {
    const node = await clusterNode((args, self) => `-${reply.replace('{self}', self)}\r\n`)
    try {
      const err = await load({ url: node.url, input: [{ id: 1 }, { id: 2 }, { id: 3 }], command: 'SET k:{id} {id}' }).then(() => null, e => e)
      const self = `127.0.0.1:${node.port}`
      const sent = reply.replace('{self}', self)
      expect(err).toMatchObject({ code: 'PIPELOAD_CLUSTER_REDIRECT', target: self, reply: sent })
      expect(err.message).toBe(`cluster node ${self} sent a redirect with ${what}: ${sent}`)
      expect(node.counts.data).toBe(3) // nothing re-sent
    } finally {
      await node.close()
    }
  }, 30_000)

  it('the CLI: exit 4, the message, no stack', async () => {
    const node = await clusterNode(() => '-MOVED 1000000000 127.0.0.1:1\r\n')
    try {
      const r = await runCliSpawned(['import', '-u', node.url, '-c', 'SET k:{id} {id}', '--format', 'csv', '-'], { input: CSV, timeoutMs: scaled(20_000) })
      expect(r.code).toBe(4)
      expect(r.stderr).toMatch(new RegExp(`^pipeload: cluster node 127\\.0\\.0\\.1:${node.port} sent a redirect with a slot outside 0\\.\\.16383: MOVED 1000000000 127\\.0\\.0\\.1:1$`, 'm'))
      expect(r.stderr).not.toMatch(/\n\s+at /)
    } finally {
      await node.close()
    }
  }, 30_000)
})

describe('a slot map refresh still on its way when the run ends', () => {
  it('opens no client of its own once closed (one would retry for ever and keep the process alive)', async () => {
    const { Topology } = require('../lib/send/cluster-topology')
    let fail
    const control = {
      isCluster: false,
      status: 'ready',
      options: { host: '127.0.0.1', port: 1 },
      stream: { remoteAddress: '127.0.0.1', remotePort: 1 },
      cluster: () => new Promise((resolve, reject) => { fail = reject })
    }
    const topology = new Topology(control, 10000, undefined)
    topology.known = ['127.0.0.1:1'] // a node of an earlier map, asked when the control client fails
    const refresh = topology.slots().then(() => null, e => e)
    while (!fail) await new Promise(resolve => setImmediate(resolve)) // CLUSTER SLOTS asked
    topology.close() // the run ends: then its control client is closed, failing the CLUSTER SLOTS
    fail(new Error('Connection is closed.'))
    const err = await refresh
    expect(topology.clients.size).toBe(0) // before: 1, an ioredis client reconnecting every 500 ms
    topology.close()
    expect(err).toMatchObject({ code: 'PIPELOAD_CONNECTION_FAILED' })
  })
})
