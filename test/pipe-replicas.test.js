'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// The Pipe with Sentinel keeps answered batches until the master's replicas have them
// (lib/send/replication.js). What a real server will not do on demand: a replica that stays
// connected and never catches up, and one that leaves and never comes back. A fake master
// answers INFO replication as told; every batch moves its offset on.

const { startFakeRedis, ordinaryReply, bulk } = require('./helpers/fake-redis')
const { connectData } = require('../lib/send/connection')
const { Pipe } = require('../lib/send/pipe')
const { parseReplication } = require('../lib/send/replication')
const { encodeCommand } = require('../lib/encode/resp')
const { waitFor } = require('./helpers/wait')

const REPLID = 'c'.repeat(40)

/** A fake master whose replica is at `replica()` (null: not connected); each SET moves it 100 on. */
async function fakeMaster (replica) {
  let offset = 1000
  const infos = [] // { at, replica } of each INFO replication answered
  const fake = await startFakeRedis(args => {
    const name = args[0].toUpperCase()
    if (name === 'SET') { offset += 100; return '+OK\r\n' }
    if (name === 'WAIT') return ':0\r\n'
    if (name === 'INFO' && args[1] === 'replication') {
      const r = replica(offset)
      infos.push({ at: Date.now(), replica: r })
      const slave = r === null ? [] : [`slave0:ip=127.0.0.1,port=1,state=online,offset=${r},lag=0`]
      return bulk(['# Replication', 'role:master', `connected_slaves:${slave.length}`, ...slave, `master_replid:${REPLID}`, `master_replid2:${'0'.repeat(40)}`, `master_repl_offset:${offset}`, 'second_repl_offset:-1', ''].join('\r\n'))
    }
    return ordinaryReply(args)
  })
  return { fake, infos }
}

async function pipeTo (fake, forgetMs, acks, signal) {
  const ep = { host: fake.host, port: fake.port, target: `${fake.host}:${fake.port}`, sentinel: true }
  const conn = await connectData(ep, 5000)
  const info = parseReplication(`role:master\r\nmaster_replid:${REPLID}\r\nmaster_repl_offset:1000\r\nsecond_repl_offset:-1\r\nslave0:ip=127.0.0.1,port=1,state=online,offset=1000,lag=0\r\n`)
  const pipe = new Pipe({ conn, window: 1, file: 'x', onFailure: () => {}, onAck: b => acks.push(b), replicated: info, forgetMs, signal })
  await pipe.send(setBatch(1))
  return { pipe, conn }
}

function setBatch (line) {
  return { buf: Buffer.from(encodeCommand(['SET', 'k', 'v'])), cmds: 1, ends: [1], lines: [line], records: 1, fileIndex: 0 }
}

describe('Pipe with Sentinel: replicas', () => {
  it('a replica connected that never catches up: the batch is not counted, and the load fails after twice forgetMs', async () => {
    const { fake, infos } = await fakeMaster(() => 1000)
    const acks = []
    const { pipe, conn } = await pipeTo(fake, 200, acks)
    try {
      const err = await pipe.finish().then(() => null, e => e)
      expect(err).toMatchObject({ code: 'PIPELOAD_TIMEOUT', message: expect.stringMatching(/^the replicas of Redis at 127\.0\.0\.1:\d+ confirmed none of the last batch it answered for \d+ ms \(a replica connected but not catching up\)/) })
      expect(acks).toEqual([])
      expect(infos.length).toBeGreaterThan(2) // the batch's INFO, then probes
    } finally {
      conn.end()
      await fake.close()
    }
  })

  it('a replica that leaves holds the batch for forgetMs (it may have been promoted), then no longer', async () => {
    let left = false
    const { fake, infos } = await fakeMaster(() => left ? null : 1000)
    const acks = []
    const { pipe, conn } = await pipeTo(fake, 300, acks)
    try {
      await fake.until(() => infos.length >= 1)
      left = true
      await pipe.finish()
      expect(acks.map(b => b.lines)).toEqual([[1]])
      expect(pipe.fatal).toBe(null)
      // Counted only after an INFO without the replica at least forgetMs after its last with it.
      const lastWith = infos.findLast(i => i.replica !== null).at
      expect(infos.at(-1).at - lastWith).toBeGreaterThanOrEqual(300)
    } finally {
      conn.end()
      await fake.close()
    }
  })

  it('an abort while kept batches hold the sender back: send() and finish() return at once, nothing counted', async () => {
    const { fake } = await fakeMaster(() => null) // the replica left: nothing is confirmed for forgetMs
    const acks = []
    const ac = new AbortController()
    const { pipe, conn } = await pipeTo(fake, 60_000, acks, ac.signal)
    try {
      // window 1: 4 kept batches at most (the first sent by pipeTo), then send() waits for the replicas.
      for (let line = 2; line <= 4; line++) await pipe.send(setBatch(line))
      await waitFor('4 batches answered and kept', () => pipe.held.length === 4 && pipe.inflight.length === 0)
      let sent = false
      const pending = pipe.send(setBatch(5)).then(() => { sent = true })
      await new Promise(resolve => setImmediate(resolve))
      expect(sent).toBe(false)
      ac.abort()
      await pending
      await pipe.finish()
      expect(acks).toEqual([])
    } finally {
      conn.end()
      await fake.close()
    }
  })
})
