'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// A Sentinel failover while the load goes on. The sentinel promotes the replica; the old
// master, not yet told, still takes writes until the sentinel demotes it, and then resyncs
// from the new master and drops them. Writes it acknowledged in that window are on no server
// any more: the loader must send them again to the new master (or fail), never count them
// loaded or checkpoint them. The list's contents on the new master, read back with LRANGE,
// are the oracle.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startSentinelTrio, masterPort } = require('./helpers/sentinel')
const { describeEachServer, serverKinds, NEWEST } = require('./helpers/servers')
const { waitFor, scaledMs } = require('./helpers/wait')
const { load } = require('..')

const BATCH = 1000
// Streaming, records go on until the promotion is seen: never more than this.
const LIMIT = 3_000_000

describeEachServer('sentinel: failover mid-load', server => {
  let trio
  let tmp

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-sentinel-loss-'))
    trio = await startSentinelTrio(server)
  }, scaledMs(40_000))

  afterAll(async () => {
    await trio?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  /**
   * The two servers as they are now, once the sentinel sees the replica linked to the master
   * (after the first test's failover, the old master must have resynced before another).
   */
  async function roles () {
    const s = trio.sentinel.client()
    const port = await masterPort(s)
    const [master, replica] = port === String(trio.master.port) ? [trio.master, trio.replica] : [trio.replica, trio.master]
    await waitFor('the sentinel to see the replica linked', async () => {
      const replicas = await s.call('SENTINEL', 'REPLICAS', 'm')
      return replicas.some(r => r[r.indexOf('port') + 1] === String(replica.port) && r[r.indexOf('master-link-status') + 1] === 'ok' && !r[r.indexOf('flags') + 1].includes('down'))
    }, 30_000, 100)
    return { master, replica, s }
  }

  /**
   * RPUSH records 0, 1, 2, … into `key`; SENTINEL FAILOVER once the old master holds some of
   * them: `paused`, with the load held until the replica is promoted (all acknowledged writes
   * are on it then), or while records go on until it is (the replica may be behind, the
   * promotion may fall inside a batch). Then 20,000 more, a pause until the old master has
   * acknowledged two batches after the promotion (the writes a failover takes away), and
   * 60,000 more.
   */
  async function loadAcrossFailover (key, paused) {
    const { master, replica, s } = await roles()
    const old = master.client()
    const promoted = replica.client()
    const checkpoint = path.join(tmp, `${key}.checkpoint`)
    const seen = { raced: false, checkpointed: null, records: 0 }
    let tookAfterPromotion = null
    const promotion = async () => {
      await waitFor('SENTINEL FAILOVER accepted', async () => (await s.call('SENTINEL', 'FAILOVER', 'm')) === 'OK', scaledMs(20_000), 100)
      await waitFor('the replica promoted', async () => (await promoted.call('ROLE'))[0] === 'master')
      tookAfterPromotion = Number(await old.llen(key))
    }
    // Records reach the encoder 512 at a time.
    async function * records () {
      let i = 0
      for (; i < 20_000; i++) yield { id: i }
      await waitFor('the old master to take the first batches', async () => Number(await old.llen(key)) >= 5 * BATCH)
      const promoting = promotion()
      if (paused) await promoting
      for (; tookAfterPromotion === null; i++) {
        if (i === LIMIT) throw new Error(`no promotion seen in ${LIMIT} records`)
        yield { id: i }
      }
      for (const end = i + 20_000; i < end; i++) yield { id: i }
      await waitFor('the old master to take writes after the promotion', async () => {
        const role = await old.call('ROLE')
        seen.raced = Number(await old.llen(key)) >= tookAfterPromotion + 2 * BATCH
        return role[0] === 'slave' || seen.raced
      })
      // The checkpoint never counts what only the old master has.
      const saved = fs.existsSync(checkpoint) ? JSON.parse(fs.readFileSync(checkpoint, 'utf8')).records : 0
      seen.checkpointed = { saved, promoted: Number(await promoted.llen(key)) }
      for (const end = i + 60_000; i < end; i++) yield { id: i }
      seen.records = i
    }
    const reconnects = []
    let summary = null
    let failure = null
    try {
      summary = await load({
        sentinels: [{ host: '127.0.0.1', port: trio.sentinel.port }],
        masterName: 'm',
        input: records(),
        command: `RPUSH ${key} {id}`,
        sameKey: true, // one list: what reached it shows what was lost or doubled
        batchSize: BATCH,
        retryTimeout: '60s',
        checkpoint,
        onReconnect: e => reconnects.push(e)
      })
    } catch (err) {
      failure = err
    }
    await waitFor('the sentinel to name the promoted replica', async () => (await masterPort(s)) === String(replica.port))
    const list = await promoted.lrange(key, 0, -1)
    const present = new Set(list)
    const missing = []
    for (let i = 0; i < seen.records; i++) if (!present.has(String(i))) missing.push(i)
    return { ...seen, summary, failure, reconnects, list, missing, replica, checkpoint }
  }

  function expectNothingLost (r) {
    const N = r.records
    if (r.failure) {
      // Failing is allowed, saying so: never a success with records missing.
      expect(r.failure.code).toMatch(/^PIPELOAD_/)
      return
    }
    expect(r.summary.loaded).toBe(N)
    expect({ missing: r.missing.length, first: r.missing.slice(0, 5) }).toEqual({ missing: 0, first: [] })
    // Sent again: the batch the promotion fell inside of may be there in part twice, and the
    // summary says so; never more than that one batch.
    const twice = r.list.length - N
    expect(twice).toBeGreaterThanOrEqual(0)
    expect(twice).toBeLessThanOrEqual(BATCH)
    if (twice > 0) expect(r.summary.possibleDuplicates).toBe(true)
    // Every record there twice was counted as re-sent (may have run twice); batches the new
    // master lacked whole were sent again without being counted so.
    expect(twice).toBeLessThanOrEqual(r.summary.resentCommands)
    expect(r.checkpointed.saved).toBeLessThanOrEqual(r.checkpointed.promoted)
    expect(JSON.parse(fs.readFileSync(r.checkpoint, 'utf8'))).toMatchObject({ records: N, complete: true })
    // The old master's demotion ends its connections (or it answers READONLY, or INFO says
    // role:slave): the load went on, or finished, on the new master, and what the old master
    // acknowledged after the promotion was sent there again.
    expect(r.reconnects.at(-1)?.target).toBe(`127.0.0.1:${r.replica.port}`)
    if (r.raced) expect(r.reconnects.reduce((n, e) => n + (e.lostBatches ?? 0), 0)).toBeGreaterThanOrEqual(2)
  }

  describe.sequential('failover', () => {
    it('RPUSH, the load held while the replica is promoted: what the old master took after it is sent again to the new master', async () => {
      expectNothingLost(await loadAcrossFailover('q1', true))
    }, scaledMs(120_000))

    it('RPUSH, SENTINEL FAILOVER while the load goes on: nothing lost, at most one batch twice', async () => {
      expectNothingLost(await loadAcrossFailover('q2', false))
    }, scaledMs(120_000))

    it('a user without +info: refused before anything is sent; without +wait: loads, the replicas asked less often', async () => {
      const { master } = await roles()
      const c = master.client()
      // ACLs are the server's own (not replicated): set on the master the sentinel names now.
      await c.call('ACL', 'SETUSER', 'noinfo', 'on', '>pw', '~acl:*', '+rpush', '+wait')
      await c.call('ACL', 'SETUSER', 'nowait', 'on', '>pw', '~acl:*', '+rpush', '+info')
      const opts = user => ({ sentinels: [{ host: '127.0.0.1', port: trio.sentinel.port }], masterName: 'm', username: user, password: 'pw', batchSize: 100 })
      const input = n => Array.from({ length: n }, (_, i) => ({ id: i }))
      const refused = await load({ ...opts('noinfo'), input: input(10), command: 'RPUSH acl:a {id}', sameKey: true }).then(() => null, e => e)
      expect(refused).toMatchObject({ code: 'PIPELOAD_CONNECTION_FAILED', message: expect.stringMatching(/answered INFO replication with NOPERM.*\(the user needs \+info\)$/) })
      expect(await c.exists('acl:a')).toBe(0)
      const summary = await load({ ...opts('nowait'), input: input(3000), command: 'RPUSH acl:b {id}', sameKey: true })
      expect(summary.loaded).toBe(3000)
      expect(await c.lrange('acl:b', 0, -1)).toEqual(input(3000).map(r => String(r.id)))
    }, scaledMs(60_000))
  })
}, serverKinds(NEWEST), { concurrent: true })
