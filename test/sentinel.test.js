'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Sentinel: a master, a replica and one redis-sentinel, all private. pipeload asks the
// sentinel where master "m" is (ioredis SentinelConnector), the data plane goes there, and
// after a failover a lost or demoted connection asks the sentinel again. Run once per kind
// of NEWEST (Redis 7.0, the newest Redis, the newest Valkey: test/helpers/servers.js), each
// its own `<server> --sentinel`; the usage errors, refused before any connection, once.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startSentinelTrio } = require('./helpers/sentinel')
const { describeEachServer, serverKinds, NEWEST } = require('./helpers/servers')
// Spawned: the kinds' tests run side by side, so an in-process run could not tell what it left
// open from another kind's (test/helpers/run-cli.js).
const { runCliSpawned: runCli } = require('./helpers/run-cli')
const { load } = require('..')
const { connectData } = require('../lib/send/connection')
const { scaledMs } = require('./helpers/wait')

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

let tmp
let csv

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-sentinel-'))
  csv = path.join(tmp, 'users.csv')
  fs.writeFileSync(csv, 'id,name\n1,ada\n2,grace\n3,edsger\n')
})

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
})

// Refused before any connection is made: no server needed.
describe('sentinel: usage errors', () => {
  it('--sentinel without --master-name, and a bad sentinel URL: usage errors', async () => {
    const a = await runCli(['import', csv, '--key', 'x:{id}', '--sentinel', '127.0.0.1:26379'])
    expect(a.code).toBe(2)
    expect(a.stderr).toMatch(/^pipeload: --sentinel needs --master-name/)
    const b = await runCli(['import', csv, '--key', 'x:{id}', '-u', 'redis-sentinel://:s3cret@127.0.0.1:26379'])
    expect(b.code).toBe(2)
    expect(b.stderr).toMatch(/^pipeload: --url must be redis-sentinel:\/\//m)
    expect(b.stderr).not.toContain('s3cret')
  })
})

async function until (what, check, ms = scaledMs(20_000)) {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      if (await check()) return
    } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

describeEachServer('sentinel', server => {
  let trio
  let master
  let replica
  let sentinel

  beforeAll(async () => {
    trio = await startSentinelTrio(server)
    master = trio.master
    replica = trio.replica
    sentinel = trio.sentinel
  }, scaledMs(40_000))

  afterAll(async () => {
    await trio?.stop()
  })

  // Sequential: the failover test's failover is what the READONLY test after it relies on.
  describe.sequential('sentinel', () => {
    it('--sentinel host:port --master-name: loads into the master', async () => {
      const res = await runCli(['import', csv, '--key', 's1:{id}', '--sentinel', `127.0.0.1:${sentinel.port}`, '--master-name', 'm', '--json'])
      expect(res.code, res.stderr).toBe(0)
      expect(JSON.parse(res.stdout).target).toBe(`127.0.0.1:${master.port}`)
      expect(await master.client().hgetall('s1:2')).toEqual({ id: '2', name: 'grace' })
    })

    it('redis-sentinel://host:port,host:port/m: the first sentinel down, the second answers', async () => {
      const res = await runCli(['import', csv, '--key', 's2:{id}', '-u', `redis-sentinel://127.0.0.1:1,127.0.0.1:${sentinel.port}/m`, '--json'])
      expect(res.code, res.stderr).toBe(0)
      expect(JSON.parse(res.stdout).target).toBe(`127.0.0.1:${master.port}`)
      expect(await master.client().exists('s2:1', 's2:2', 's2:3')).toBe(3)
    })

    it('library: sentinels + masterName', async () => {
      const summary = await load({ sentinels: [{ host: '127.0.0.1', port: sentinel.port }], masterName: 'm', input: [{ id: 1 }], command: 'SET s3:{id} x' })
      expect(summary.loaded).toBe(1)
      expect(await master.client().get('s3:1')).toBe('x')
    })

    it('a master name the sentinel does not know: exit 4, one line', async () => {
      const res = await runCli(['import', csv, '--key', 's4:{id}', '--sentinel', `127.0.0.1:${sentinel.port}`, '--master-name', 'nosuch'])
      expect(res.code, res.stderr).toBe(4)
      expect(res.stderr.trim().split('\n')).toHaveLength(1)
      expect(res.stderr).toMatch(/^pipeload: cannot connect to Redis at master "nosuch" via sentinel 127\.0\.0\.1:\d+: /)
    })

    it('a failover during the load: the demoted master is left, the sentinel asked again, nothing lost', async () => {
      const N = 2048 // records reach the encoder 512 at a time: pause after the 2nd group
      let release
      const gate = new Promise(resolve => { release = resolve })
      async function * records () {
        for (let i = 0; i < N; i++) {
          if (i === N / 2) await gate
          yield { id: i }
        }
      }
      const reconnects = []
      const loading = load({
        sentinels: [{ host: '127.0.0.1', port: sentinel.port }],
        masterName: 'm',
        input: records(),
        command: 'SET fo:{id} v{id}',
        batchSize: 50,
        retryTimeout: '30s',
        onReconnect: e => reconnects.push(e)
      })
      const old = master.client()
      await until('the first half on the master', async () => Number(await old.dbsize()) > 0 && (await old.exists('fo:999')) === 1)
      // Acknowledged writes are on the replica before it is promoted (replication is
      // asynchronous: a failover can lose what the replica has not got yet, for any client).
      await old.call('WAIT', '1', '5000')
      const s = sentinel.client()
      await until('SENTINEL FAILOVER accepted', async () => (await s.call('SENTINEL', 'FAILOVER', 'm')) === 'OK')
      await until('the replica promoted and the old master demoted', async () => {
        const [, port] = await s.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'm')
        const role = await old.call('ROLE')
        return port === String(replica.port) && role[0] === 'slave' && role[3] === 'connected'
      })
      release()
      const summary = await loading
      expect(summary.loaded).toBe(N)
      expect(summary.errors).toBe(0)
      expect(reconnects.length).toBeGreaterThanOrEqual(1)
      expect(summary.target).toBe(`127.0.0.1:${master.port}`) // where it started
      expect(reconnects.at(-1).target).toBe(`127.0.0.1:${replica.port}`)
      const now = replica.client()
      const p = now.pipeline()
      for (let i = 0; i < N; i++) p.get(`fo:${i}`)
      const values = (await p.exec()).map(([, v]) => v)
      expect(values.filter((v, i) => v !== `v${i}`)).toEqual([])
    }, scaledMs(60_000))

    it('READONLY from a demoted master on a Sentinel data connection drops the connection (to ask again)', async () => {
      // Redis 7.0 closes client connections when a master is demoted, so the test above
      // reconnects on the close; a server that keeps them answers READONLY instead.
      const ep = { host: '127.0.0.1', port: master.port, target: `127.0.0.1:${master.port}`, sentinel: true } // a replica since the failover
      const conn = await connectData(ep, 5000)
      const replies = []
      const closed = new Promise(resolve => { conn.onClose = resolve })
      conn.onReply = r => replies.push(r)
      conn.onReplyError = e => replies.push(e)
      conn.write('*3\r\n$3\r\nSET\r\n$2\r\nro\r\n$1\r\n1\r\n*1\r\n$4\r\nPING\r\n')
      const reason = await closed
      expect(reason).toMatchObject({ code: 'PIPELOAD_CONNECTION_LOST', message: expect.stringMatching(/is a replica now \(READONLY .*\): asking Sentinel for the master/) })
      expect(replies).toEqual([]) // neither the error nor the PONG after it reached the Pipe
    })
  })
}, serverKinds(NEWEST), { concurrent: true }) // each kind mostly waits on its Sentinel's timers
