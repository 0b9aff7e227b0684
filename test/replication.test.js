'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// lib/send/replication.js: what a Sentinel load keeps until the replicas have it, and what a
// failover took. The INFO texts are as Redis 7.0 writes them (\r\n line ends).

const { parseReplication, failoverPlan, Replicas } = require('../lib/send/replication')

const OLD = 'a'.repeat(40)
const NEW = 'b'.repeat(40)
const NONE = '0'.repeat(40)

function info ({ role = 'master', replid = OLD, replid2 = NONE, offset, second = -1, replicas = [] }) {
  return ['# Replication', `role:${role}`, `connected_slaves:${replicas.length}`,
    ...replicas.map((r, i) => `slave${i}:ip=127.0.0.1,port=${r.port},state=${r.state ?? 'online'},offset=${r.offset},lag=0`),
    'master_failover_state:no-failover', `master_replid:${replid}`, `master_replid2:${replid2}`,
    `master_repl_offset:${offset}`, `second_repl_offset:${second}`, 'repl_backlog_active:1', ''].join('\r\n')
}

describe('replication', () => {
  it('parseReplication: role, IDs, offsets, the replicas; null for anything else', () => {
    expect(parseReplication(info({ offset: 1234, replicas: [{ port: 7001, offset: 1200 }, { port: 7002, state: 'wait_bgsave', offset: 0 }] }))).toEqual({
      role: 'master', replid: OLD, replid2: NONE, offset: 1234, secondOffset: -1,
      replicas: [{ id: '127.0.0.1:7001', state: 'online', offset: 1200 }, { id: '127.0.0.1:7002', state: 'wait_bgsave', offset: 0 }]
    })
    expect(parseReplication(info({ role: 'slave', offset: 5 })).role).toBe('slave')
    expect(parseReplication('OK')).toBe(null)
    expect(parseReplication(7)).toBe(null)
  })

  it('Replicas: confirmed up to the online replica furthest behind; one that left holds it back for forgetMs', () => {
    const r = new Replicas(1000)
    expect(r.update(parseReplication(info({ offset: 100 })), 0)).toBe(100) // no replica: nothing to fail over to
    expect(r.update(parseReplication(info({ offset: 200, replicas: [{ port: 1, offset: 150 }, { port: 2, offset: 180 }] })), 10)).toBe(150)
    expect(r.update(parseReplication(info({ offset: 300, replicas: [{ port: 1, offset: 290 }, { port: 2, state: 'send_bulk', offset: 0 }] })), 20)).toBe(180)
    // Port 2 gone (promoted, say): its last offset counts until it has been away 1000 ms.
    expect(r.update(parseReplication(info({ offset: 400, replicas: [{ port: 1, offset: 400 }] })), 500)).toBe(180)
    expect(r.update(parseReplication(info({ offset: 500, replicas: [{ port: 1, offset: 500 }] })), 1011)).toBe(500)
    // Another history: its replicas are others.
    expect(r.update(parseReplication(info({ replid: NEW, offset: 10 })), 1012)).toBe(10)
  })

  it('Replicas.probe: WAIT for the online replicas, then INFO; INFO alone without replicas or when WAIT was refused', () => {
    const r = new Replicas(1000)
    expect(r.probe(5)).toMatchObject({ extra: 1 })
    r.update(parseReplication(info({ offset: 1, replicas: [{ port: 1, offset: 1 }, { port: 2, offset: 1 }] })), 0)
    expect(r.probe(0)).toMatchObject({ extra: 1 })
    const p = r.probe(5)
    expect(p.extra).toBe(2)
    expect(p.buf.toString()).toBe('*3\r\n$4\r\nWAIT\r\n$1\r\n2\r\n$1\r\n5\r\n*2\r\n$4\r\nINFO\r\n$11\r\nreplication\r\n')
    r.waitRefused = true
    expect(r.probe(5)).toMatchObject({ extra: 1 })
  })

  it('failoverPlan: the same master keeps waiting; a promoted replica has what is at or below second_repl_offset - 1', () => {
    const held = [{ from: 100, tag: 200 }, { from: 200, tag: 300 }, { from: 300, tag: 400 }]
    const was = { replid: OLD, confirmedTag: 100 }
    expect(failoverPlan(held, was, { replid: OLD })).toEqual({ same: true })
    // Promoted at offset 300 exactly (second_repl_offset 301): two kept, the third lost whole.
    expect(failoverPlan(held, was, { replid: NEW, replid2: OLD, secondOffset: 301 })).toEqual({ same: false, known: true, confirm: 2, partial: false, lostConfirmed: false })
    // Promoted inside the second batch: the first kept, the second may be there in part.
    expect(failoverPlan(held, was, { replid: NEW, replid2: OLD, secondOffset: 251 })).toEqual({ same: false, known: true, confirm: 1, partial: true, lostConfirmed: false })
    // Promoted before what was confirmed: records counted as loaded are gone.
    expect(failoverPlan(held, was, { replid: NEW, replid2: OLD, secondOffset: 51 })).toMatchObject({ lostConfirmed: true })
    // Another history: nothing kept can be shown to be there.
    expect(failoverPlan(held, was, { replid: NEW, replid2: NONE, secondOffset: -1 })).toEqual({ same: false, known: false, confirm: 0, partial: true, lostConfirmed: false })
  })
})
