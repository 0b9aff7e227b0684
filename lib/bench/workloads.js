'use strict'

const { ByteWriter, bulkBytes } = require('../encode/writer')

// The synthetic workloads: how to encode `n` commands starting at command number `from`
// under a key prefix, how to check afterwards that the server holds what was sent, and
// the names of the keys a row may have written (deleted by name: cleanup.js).
// Pure except verify(), which reads through the control client.
//
// A batch is handed to Pipe as one "record" (ends = [n]): Pipe needs per-record bookkeeping
// only to name the failed input line, and a synthetic command has none.

const HSET_FIELDS = 3

/** { buf, cmds, ends, lines } for Pipe.send(). */
function batchOf (buf, n, from) {
  return { buf, cmds: n, ends: [n], lines: [from + 1] }
}

/** Every command the same bytes (INCR one key, PING): encode a batch once per size. */
function constantWorkload (name, args, verify) {
  const keyed = args.length > 1
  return {
    name,
    keys: keyed,
    // The counter is created with the safety TTL before the row; INCR keeps a key's TTL.
    expires: keyed,
    create (prefix, ttlMs) {
      const key = prefix + 'counter'
      const one = encode(args.map(a => a === '{key}' ? key : a))
      const cache = new Map()
      return {
        key,
        batch (from, n) {
          let buf = cache.get(n)
          if (!buf) {
            buf = Buffer.allocUnsafe(one.length * n)
            for (let i = 0; i < n; i++) one.copy(buf, i * one.length)
            cache.set(n, buf)
          }
          return batchOf(buf, n, from)
        },
        prepare: keyed ? control => control.set(key, '0', 'PX', ttlMs) : null,
        verify: (control, sent, stats) => verify(control, key, sent, stats),
        expectedKeys: () => keyed ? 1 : 0,
        // The keys this row may have written: the counter (created before the row).
        * keys () { if (keyed) yield key }
      }
    }
  }
}

function encode (args) {
  const w = new ByteWriter(256)
  w.arrayHeader(args.length)
  for (const a of args) w.bulk(a)
  return Buffer.from(w.take())
}

/** One key per command (SET, HSET): encoded as they are sent, as an import would. */
function keyedWorkload (name, write, verifyOne, expires) {
  return {
    name,
    keys: true,
    expires,
    create (prefix, ttlMs) {
      const ttl = String(ttlMs)
      const w = new ByteWriter()
      const prefixBytes = prefix + name + ':'
      // Commands encoded so far: keys 0 … encoded - 1 may be on the server.
      let encoded = 0
      return {
        expectedKeys: sent => sent,
        batch (from, n) {
          for (let i = from; i < from + n; i++) write(w, prefixBytes + i, i, ttl)
          encoded = Math.max(encoded, from + n)
          return batchOf(w.take(), n, from)
        },
        async verify (control, sent, stats) {
          if (stats.errorReplies > 0 || stats.acked !== sent) return false
          if (sent === 0) return true
          return verifyOne(control, prefixBytes + (sent - 1), sent - 1)
        },
        // The keys this row may have written, by name: every key of a command encoded.
        * keys () { for (let i = 0; i < encoded; i++) yield prefixBytes + i }
      }
    }
  }
}

const SET = bulkBytes('SET')
const HSET = bulkBytes('HSET')
const PX = bulkBytes('PX')
const FIELD_NAMES = ['name', 'email', 'n'].map(bulkBytes)

const WORKLOADS = {
  incr: constantWorkload('incr', ['INCR', '{key}'], async (control, key, sent, stats) => {
    if (stats.errorReplies > 0 || stats.acked !== sent) return false
    const v = await control.get(key)
    return Number(v ?? 0) === sent
  }),
  ping: constantWorkload('ping', ['PING'], async (control, key, sent, stats) =>
    stats.errorReplies === 0 && stats.acked === sent),
  // SET … PX <safety TTL>: one command per key still, and nothing outlives a killed bench.
  set: keyedWorkload('set', (w, key, i, ttl) => {
    w.arrayHeader(5)
    w.bytes(SET)
    w.bulk(key)
    w.bulk('value-' + i)
    w.bytes(PX)
    w.bulk(ttl)
  }, async (control, key, i) => (await control.get(key)) === 'value-' + i, true),
  hset: keyedWorkload('hset', (w, key, i) => {
    w.arrayHeader(2 + HSET_FIELDS * 2)
    w.bytes(HSET)
    w.bulk(key)
    w.bytes(FIELD_NAMES[0]); w.bulk('user ' + i)
    w.bytes(FIELD_NAMES[1]); w.bulk('user' + i + '@example.com')
    w.bytes(FIELD_NAMES[2]); w.bulk(String(i))
  }, async (control, key, i) => (await control.hget(key, 'n')) === String(i), false)
}

module.exports = { WORKLOADS }
