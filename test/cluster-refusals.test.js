'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// A cluster that refuses what it will always refuse ends the run at once, with the
// server's reason: SELECT on masters without cluster databases (redis-server 7 here). A
// run still connecting to a cluster node ends on the first SIGTERM. (The CROSSSLOT hint is
// checked here too, against the same cluster.)

const { spawn } = require('node:child_process')
const { startCluster } = require('./helpers/cluster')
const { startFakeRedis, ordinaryReply, bulk } = require('./helpers/fake-redis')
const { deadPort } = require('./helpers/redis-server')
const { runCli, BIN, BASE_ENV } = require('./helpers/run-cli')
const { load } = require('..')
const { scaledMs } = require('./helpers/wait')

const CSV = 'id\n' + Array.from({ length: 2000 }, (_, i) => i).join('\n') + '\n'
let cluster

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 })
}, scaledMs(60_000))

afterAll(async () => {
  await cluster?.stop()
})

describe('cluster: refusals that another attempt cannot change', () => {
  it('masters that refuse SELECT (-u …/2): exit 4 at once with the server\'s reason, no stack', async () => {
    // --retry-timeout: 5 s on a quiet machine, scaled to this one; "at once" is within 4/5 of it.
    const retryS = Math.ceil(scaledMs(5000) / 1000)
    const started = Date.now()
    const r = await runCli(['import', '-u', `${cluster.url}/2`, '-c', 'SET sel:{id} {id}', '--format', 'csv', '--retry-timeout', `${retryS}s`, '-'], { input: CSV })
    const ms = Date.now() - started
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/^pipeload: cannot connect to Redis at 127\.0\.0\.1:\d+: SELECT 2 was refused: ERR SELECT is not allowed in cluster mode \(a cluster has database 0 only, unless Valkey 9 cluster-databases allows more: drop -n \/ the \/db of the URL\)$/m)
    expect(r.stderr).not.toMatch(/\n\s+at /)
    expect(ms).toBeLessThan(retryS * 800) // before: refreshed the slot map for the whole --retry-timeout, then another message
  }, scaledMs(60_000))

  it('the library: PIPELOAD_CONNECTION_FAILED with the command and the reply', async () => {
    const err = await load({ url: `${cluster.url}/2`, input: [{ id: 1 }], command: 'SET sel:{id} {id}', retryTimeout: '5s' }).then(() => null, e => e)
    expect(err).toMatchObject({ code: 'PIPELOAD_CONNECTION_FAILED', command: 'SELECT', reply: 'ERR SELECT is not allowed in cluster mode' })
  }, scaledMs(30_000))

  it('the first SIGTERM ends a run still connecting to a cluster node (its master does not answer)', async () => {
    const dead = await deadPort()
    // A one-node cluster map whose only master is a port nobody listens on: the run keeps
    // connecting, refreshing the map between attempts (backoff 0.1 s doubling to 2 s).
    const fake = await startFakeRedis(args => {
      const n = args.join(' ').toUpperCase()
      if (/^INFO/.test(n)) return bulk('cluster_enabled:1\r\n')
      if (/^CLUSTER SLOTS/.test(n)) return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n${bulk('127.0.0.1')}:${dead.port}\r\n`
      return ordinaryReply(args)
    })
    try {
      const child = spawn(process.execPath, [BIN, 'import', '-u', `redis://127.0.0.1:${fake.port}`, '-c', 'SET t:{id} {id}', '--format', 'csv', '-'], { env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] })
      let stderr = ''
      child.stderr.on('data', d => { stderr += d })
      child.stdin.end(CSV)
      const exited = new Promise(resolve => child.on('exit', (code, signal) => resolve({ code, signal })))
      // The 7th map: the attempts so far waited 0.1 + 0.2 + 0.4 + 0.8 + 1.6 s; the next wait is 2 s.
      await fake.until(s => s.commands.filter(c => /^CLUSTER$/i.test(c.args[0])).length >= 7)
      const termAt = Date.now()
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      const { code } = await exited
      clearTimeout(timer)
      expect(code).toBe(143)
      expect(Date.now() - termAt).toBeLessThan(1000) // before: after that 2 s wait, and more
      expect(stderr).toMatch(/^pipeload: the load was aborted while connecting to cluster node 127\.0\.0\.1:\d+$/m)
    } finally {
      await fake.close()
      await dead.close()
    }
  }, scaledMs(60_000))
})

describe('cluster: keys in different slots', () => {
  it('the CROSSSLOT hint says how to write a hash tag in a template, and that way loads', async () => {
    const crossing = await runCli(['import', '-u', cluster.url, '-c', 'MSET user:{id}:name n{id} user:{id}:tags t{id}', '--format', 'csv', '--on-error', 'skip', '--json', '-'], { input: CSV })
    expect(crossing.code).toBe(1)
    const s = JSON.parse(crossing.stdout)
    expect(s.failures[0]).toMatchObject({ line: 2, code: 'PIPELOAD_CROSSSLOT' })
    expect(s.failures[0].message).toBe('command 1 of the record (MSET) has keys in different hash slots; a cluster needs them in one slot: ' +
      'give them a common hash tag (the part of a key between { and }); in a template a literal brace is written twice: ' +
      'user:{{{id}}}:name and user:{{{id}}}:tags both hash by the id')

    // Written as the hint says, every record loads, each key on the master the server routes it to.
    const tagged = await runCli(['import', '-u', cluster.url, '-c', 'MSET user:{{{id}}}:name n{id} user:{{{id}}}:tags t{id}', '--format', 'csv', '--json', '-'], { input: CSV })
    expect(tagged.code).toBe(0)
    expect(JSON.parse(tagged.stdout)).toMatchObject({ records: 2000, loaded: 2000, errors: 0 })
    const client = cluster.client()
    expect(await client.get('user:{1999}:name')).toBe('n1999')
    expect(await client.get('user:{7}:tags')).toBe('t7')
  }, scaledMs(60_000))
})
