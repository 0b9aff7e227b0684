'use strict'

// The keyspaces of bench/export.js, as RESP files for `redis-cli --pipe` (independent of
// lib/: own PRNG from ./datasets, own RESP encoder over bytes). Cached under bench/.data/.
//   mixed-N: N keys of every type (strings, hashes, lists, sets, zsets, streams in turn),
//     one in ten with a TTL of an hour, one in seven holding bytes that are not UTF-8, and
//     six big keys (BIG elements each) that an export writes in parts.
//   bighash-N: one hash of N fields.

const fs = require('node:fs')
const path = require('node:path')
const { prng, DATA_DIR } = require('./datasets')

const BIG = 50_000

/** One command as RESP bytes; arguments are strings (UTF-8) or Buffers. */
function respBytes (args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)]
  for (const a of args) {
    const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a))
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'))
  }
  return Buffer.concat(parts)
}

/** A buffered writer of RESP commands to `file`, renamed into place when closed. */
function respFile (file) {
  const tmp = file + '.tmp'
  const fd = fs.openSync(tmp, 'w')
  let chunks = []
  let size = 0
  const flush = () => { fs.writeSync(fd, Buffer.concat(chunks)); chunks = []; size = 0 }
  return {
    command (args) {
      const b = respBytes(args)
      chunks.push(b)
      size += b.length
      if (size > 1 << 20) flush()
    },
    close () { flush(); fs.closeSync(fd); fs.renameSync(tmp, file) }
  }
}

/** A value of key i: text, or (one in seven) bytes that are not valid UTF-8. */
function value (rnd, i, j) {
  if ((i + j) % 7 === 3) return Buffer.from([0xff, 0xfe, i & 0xff, (i >> 8) & 0xff, j & 0xff, 0xc3])
  return `v${Math.floor(rnd() * 1e9).toString(36)}-${j}`
}

function smallKey (w, rnd, i) {
  const key = `mixed:${i}`
  switch (i % 6) {
    case 0: w.command(['SET', key, (i % 50 === 0) ? '' : value(rnd, i, 0)]); break
    case 1: w.command(['HSET', key, 'name', value(rnd, i, 1), 'age', String(i % 90), 'city', value(rnd, i, 2)]); break
    case 2: w.command(['RPUSH', key, value(rnd, i, 1), value(rnd, i, 2), value(rnd, i, 1)]); break
    case 3: w.command(['SADD', key, value(rnd, i, 1), value(rnd, i, 2), value(rnd, i, 3)]); break
    case 4: w.command(['ZADD', key, '1.5', value(rnd, i, 1), String(i), value(rnd, i, 2), '-inf', value(rnd, i, 3)]); break
    case 5: w.command(['XADD', key, `${i + 1}-0`, 'kind', value(rnd, i, 1), 'n', String(i)]); break
  }
  if (i % 10 === 0) w.command(['PEXPIRE', key, '3600000'])
}

function bigKeys (w, rnd) {
  for (let j = 0; j < BIG; j += 500) {
    const hash = ['HSET', 'mixed:big:hash']
    const list = ['RPUSH', 'mixed:big:list']
    const set = ['SADD', 'mixed:big:set']
    const zset = ['ZADD', 'mixed:big:zset']
    for (let k = j; k < j + 500; k++) {
      hash.push(`f${k}`, value(rnd, k, 1))
      list.push(value(rnd, k, 2))
      set.push(`m${k}`)
      zset.push(String(k / 3), `m${k}`)
      w.command(['XADD', 'mixed:big:stream', `${k + 1}-1`, 'k', String(k)])
    }
    for (const c of [hash, list, set, zset]) w.command(c)
  }
  w.command(['SET', 'mixed:big:string', 'x'.repeat(4 << 20)])
}

/** bench/.data/mixed-N.resp, written once. */
function mixedResp (keys, log = () => {}) {
  const file = path.join(DATA_DIR, `mixed-${keys}.resp`)
  if (fs.existsSync(file)) return file
  fs.mkdirSync(DATA_DIR, { recursive: true })
  log(`generating ${keys} mixed keys (RESP) …`)
  const w = respFile(file)
  const rnd = prng(36)
  for (let i = 0; i < keys; i++) smallKey(w, rnd, i)
  bigKeys(w, rnd)
  w.close()
  return file
}

/** bench/.data/bighash-N.resp: HSET bighash with N fields, 1,000 a command. */
function bigHashResp (fields, log = () => {}) {
  const file = path.join(DATA_DIR, `bighash-${fields}.resp`)
  if (fs.existsSync(file)) return file
  fs.mkdirSync(DATA_DIR, { recursive: true })
  log(`generating one hash of ${fields} fields (RESP) …`)
  const w = respFile(file)
  for (let j = 0; j < fields; j += 1000) {
    const c = ['HSET', 'bighash']
    for (let k = j; k < Math.min(fields, j + 1000); k++) c.push(`field:${k}`, `value-${k}`)
    w.command(c)
  }
  w.close()
  return file
}

module.exports = { mixedResp, bigHashResp, respBytes, BIG }
