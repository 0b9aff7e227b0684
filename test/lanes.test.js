'use strict'
/* global describe, it, expect */

// Issue 35 item 1, the splitter of lib/send/lanes.js without a server: data connections of
// this test's own that record what is written to them and answer when the test says. Which
// connection a key belongs to is computed here with cluster-key-slot (ioredis' own slot
// function, not pipeload's).

const keySlot = require('cluster-key-slot')
const { Lanes } = require('../lib/send/lanes')
const { encodeCommand } = require('../lib/encode/resp')

function fakeConn (i) {
  return {
    target: `fake-${i}`,
    closed: false,
    socket: null,
    written: [],
    write (buf) { this.written.push(Buffer.from(buf)); return true },
    end () { this.closed = true },
    close () { this.closed = true }
  }
}

/** An encoded batch of records, each a list of commands (arrays of strings). */
function batchOf (records, seq) {
  const bufs = []
  const ends = []
  let cmds = 0
  for (const cs of records) {
    for (const c of cs) bufs.push(Buffer.from(encodeCommand(c)))
    cmds += cs.length
    ends.push(cmds)
  }
  return { buf: Buffer.concat(bufs), cmds, ends, lines: records.map((_, i) => seq * 100 + i + 1), offsets: null, records: records.length, fileIndex: 0, seq }
}

function lanesOf (n, acked, failures = []) {
  const conns = Array.from({ length: n }, (_, i) => fakeConn(i))
  const lanes = new Lanes({ conns, window: 8, file: 'test', onFailure: (f, b) => failures.push([f, b]), onAck: b => acked.push(b.seq) })
  return { lanes, conns }
}

/** The keys (second argument) of every command written to a connection, in order. */
function keysWritten (conn) {
  const text = Buffer.concat(conn.written).toString()
  return [...text.matchAll(/\*3\r\n\$\d+\r\n\w+\r\n\$\d+\r\n([^\r]*)\r\n/g)].map(m => m[1])
}

/** A key whose slot is on connection `lane` of `n`, by cluster-key-slot. */
function keyOn (lane, n, from = 0) {
  for (let i = from; ; i++) if (keySlot(`k${i}`) % n === lane) return `k${i}`
}

describe('lanes: each command on the connection of its slot', () => {
  it('every key goes to connection slot % n, its commands in input order; no command lost or repeated', async () => {
    for (const n of [2, 3, 4]) {
      const acked = []
      const { lanes, conns } = lanesOf(n, acked)
      const sent = []
      for (let b = 0; b < 5; b++) {
        const records = []
        for (let r = 0; r < 40; r++) {
          const key = `k${(b * 40 + r) * 7 % 53}`
          sent.push(key)
          records.push([['RPUSH', key, String(b * 40 + r)]])
        }
        await lanes.send(batchOf(records, b))
      }
      const all = []
      for (const [i, conn] of conns.entries()) {
        const keys = keysWritten(conn)
        for (const k of keys) expect(keySlot(k) % n, `${k} on connection ${i} of ${n}`).toBe(i)
        all.push(...keys)
        expect(keys).toEqual(sent.filter(k => keySlot(k) % n === i))
      }
      expect(all.length).toBe(sent.length)
      lanes.close()
    }
  })
})

describe('lanes: acknowledged in input order across connections', () => {
  it('a batch answered on one connection waits for the batches before it on another', async () => {
    const acked = []
    const { lanes, conns } = lanesOf(2, acked)
    const a = keyOn(0, 2)
    const b = keyOn(1, 2)
    await lanes.send(batchOf([[['SET', a, '1']]], 0)) // connection 0 only
    await lanes.send(batchOf([[['SET', b, '1']]], 1)) // connection 1 only
    await lanes.send(batchOf([[['SET', a, '2'], ['SET', b, '2']]], 2)) // both
    conns[1].onReply('OK') // batch 1 answered first
    conns[1].onReply('OK') // batch 2's part on connection 1
    expect(acked).toEqual([])
    conns[0].onReply('OK') // batch 0: then 1, whose only part was answered already
    expect(acked).toEqual([0, 1])
    conns[0].onReply('OK')
    expect(acked).toEqual([0, 1, 2])
    expect(lanes.stats).toMatchObject({ batches: 3, commands: 4, acked: 4, ackedRecords: 3, failedRecords: 0 })
    await lanes.finish()
  })

  it('a record failing on two connections counts once, with its position', async () => {
    const acked = []
    const failures = []
    const { lanes, conns } = lanesOf(2, acked, failures)
    await lanes.send(batchOf([[['SET', keyOn(0, 2), '1'], ['SET', keyOn(1, 2), '1']], [['SET', keyOn(0, 2, 100), '1']]], 0))
    conns[1].onReplyError(new Error('WRONGTYPE one'))
    conns[0].onReplyError(new Error('WRONGTYPE two'))
    conns[0].onReply('OK')
    expect(failures.map(([f]) => [f.line, f.message])).toEqual([[1, 'WRONGTYPE one']])
    expect(acked).toEqual([0])
    expect(lanes.stats).toMatchObject({ errorReplies: 2, failedRecords: 1, ackedRecords: 2 })
    await lanes.finish()
  })
})
