'use strict'

// For the export tests: a keyspace of every type written with the test's own ioredis client
// (the expected keyspace is what was written, not what pipeload reads back), and an
// exported NDJSON file read with JSON.parse into the same shape, parts merged.
// A keyspace: Map of key (hex of its bytes) -> { type, ttl: true (has one) | null, value }
// with value: string Buffer; hash Map hex(field) -> hex(value); list [hex]; set sorted [hex];
// zset Map hex(member) -> score string; stream [{ id, fields: [hex, hex, …] }].

const hex = b => Buffer.from(b).toString('hex')
const TTL_MS = 1_000_000

// Bytes that are not valid UTF-8: a lone continuation byte, an overlong form, 0xff.
const BAD = Buffer.from([0x80, 0xc0, 0xaf, 0xff, 0x00, 0x41])

/**
 * Write the dataset under `prefix` (a string) with ioredis `client` (a server or a cluster:
 * one key a command). `big`: elements of each big key; `small`: small keys of each type.
 */
async function writeDataset (client, prefix, { big = 2500, small = 300 } = {}) {
  const want = new Map()
  const key = (...parts) => Buffer.concat([Buffer.from(prefix), ...parts.map(p => Buffer.from(p))])
  const put = (k, type, value, ttl = null) => want.set(hex(k), { type, ttl, value })
  const p = pipelineOf(client)
  for (let i = 0; i < small; i++) {
    const ttl = i % 5 === 0
    const s = key(`s:${i}`)
    const sv = i % 7 === 0 ? Buffer.alloc(0) : Buffer.from(`value ${i} é ✓`)
    p.set(s, sv)
    put(s, 'string', hex(sv), ttl || null)
    const h = key(`h:${i}`)
    const fields = [`f${i}`, `v${i}`, 'name', `n"\\${i}`, 'empty', '']
    p.hset(h, ...fields)
    put(h, 'hash', new Map(pairsOf(fields.map(hex))), ttl || null)
    const l = key(`l:${i}`)
    const items = ['a', 'b', 'a', String(i)]
    p.rpush(l, ...items)
    put(l, 'list', items.map(hex), ttl || null)
    const st = key(`st:${i}`)
    p.sadd(st, 'x', 'y', String(i))
    put(st, 'set', ['x', 'y', String(i)].map(hex).sort(), ttl || null)
    const z = key(`z:${i}`)
    p.zadd(z, '1.5', 'ada', 'inf', 'bob', '-inf', 'eve', String(i), 'n')
    put(z, 'zset', new Map([['ada', '1.5'], ['bob', 'inf'], ['eve', '-inf'], ['n', String(i)]].map(([m, sc]) => [hex(m), sc])), ttl || null)
    const x = key(`x:${i}`)
    p.xadd(x, `${i + 1}-1`, 'kind', 'login', 'n', String(i))
    p.xadd(x, `${i + 1}-2`, 'kind', 'logout')
    put(x, 'stream', [{ id: `${i + 1}-1`, fields: ['kind', 'login', 'n', String(i)].map(hex) }, { id: `${i + 1}-2`, fields: ['kind', 'logout'].map(hex) }], ttl || null)
    if (ttl) for (const k of [s, h, l, st, z, x]) p.pexpire(k, TTL_MS)
  }
  // Binary keys and values.
  const bs = key(BAD, ':s')
  p.set(bs, BAD)
  put(bs, 'string', hex(BAD))
  const bh = key(BAD, ':h')
  p.hset(bh, BAD, BAD, 'plain', BAD)
  put(bh, 'hash', new Map([[hex(BAD), hex(BAD)], [hex('plain'), hex(BAD)]]))
  const bl = key(BAD, ':l')
  p.rpush(bl, BAD, '', 'ok')
  put(bl, 'list', [hex(BAD), '', hex('ok')])
  const bz = key(BAD, ':z')
  p.zadd(bz, '2', BAD)
  put(bz, 'zset', new Map([[hex(BAD), '2']]))
  const bx = key(BAD, ':x')
  p.xadd(bx, '5-5', BAD, BAD)
  put(bx, 'stream', [{ id: '5-5', fields: [hex(BAD), hex(BAD)] }])
  await p.exec()
  // Big keys, written in pieces.
  const bigHash = key('big:h')
  const bigList = key('big:l')
  const bigSet = key('big:s')
  const bigZset = key('big:z')
  const bigStream = key('big:x')
  const h = new Map(); const l = []; const s = []; const z = new Map(); const x = []
  for (let from = 0; from < big; from += 500) {
    const q = pipelineOf(client)
    const to = Math.min(big, from + 500)
    const hf = []; const li = []; const si = []; const zi = []
    for (let i = from; i < to; i++) {
      hf.push(`field:${i}`, `value:${i}`); h.set(hex(`field:${i}`), hex(`value:${i}`))
      li.push(`item:${i}`); l.push(hex(`item:${i}`))
      si.push(`member:${i}`); s.push(hex(`member:${i}`))
      zi.push(String(i * 0.5), `m:${i}`); z.set(hex(`m:${i}`), String(i * 0.5))
      q.xadd(bigStream, `${1000 + i}-0`, 'i', String(i))
      x.push({ id: `${1000 + i}-0`, fields: ['i', String(i)].map(hex) })
    }
    q.hset(bigHash, ...hf)
    q.rpush(bigList, ...li)
    q.sadd(bigSet, ...si)
    q.zadd(bigZset, ...zi)
    await q.exec()
  }
  await client.pexpire(bigHash, TTL_MS)
  put(bigHash, 'hash', h, true)
  put(bigList, 'list', l)
  put(bigSet, 'set', s.sort())
  put(bigZset, 'zset', z)
  put(bigStream, 'stream', x)
  return want
}

/**
 * client.pipeline(), or for an ioredis Cluster (whose pipelines take one slot) the same calls
 * sent one by one, all awaited by exec().
 */
function pipelineOf (client) {
  if (!client.isCluster) return client.pipeline()
  const sent = []
  return new Proxy({}, {
    get: (_, name) => name === 'exec' ? () => Promise.all(sent) : (...args) => { sent.push(client[name](...args)) }
  })
}

function pairsOf (flat) {
  const out = []
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]])
  return out
}

/** A string of the file: text, or the base64 marker object. */
function bytesOf (v) {
  if (typeof v === 'string') return Buffer.from(v, 'utf8')
  if (v && typeof v === 'object' && typeof v.base64 === 'string' && Object.keys(v).length === 1) return Buffer.from(v.base64, 'base64')
  throw new Error(`not a string of the format: ${JSON.stringify(v)}`)
}

const hx = v => hex(bytesOf(v))

/** field/value pairs of a hash or a stream entry's fields: an object or [name, value] pairs. */
function fieldPairs (v) {
  if (Array.isArray(v)) return v.map(([f, x]) => [hx(f), hx(x)])
  return Object.entries(v).map(([f, x]) => [hex(f), hx(x)])
}

/**
 * Read an exported NDJSON text: { keys: Map as above (ttl: the first line's ms), lines,
 * parts: Map hex(key) -> the part numbers in file order }; throws where a part does not
 * follow a line of its key.
 */
function readExport (text) {
  const keys = new Map()
  const parts = new Map()
  const lines = text.split('\n')
  if (lines.pop() !== '') throw new Error('the file does not end with a newline')
  let before = null // the key of the line before
  for (const lineText of lines) {
    const r = JSON.parse(lineText)
    const k = hx(r.key)
    const part = r.part ?? 1
    // A key's parts are consecutive (docs/export.md).
    if (part > 1 && before !== k) throw new Error(`part ${part} of ${k} does not follow a line of its key`)
    before = k
    if (!parts.has(k)) parts.set(k, [])
    parts.get(k).push(part)
    if (part === 1) {
      if (keys.has(k)) throw new Error(`key ${k} written twice`)
      keys.set(k, { type: r.type, ttl: r.ttl, value: empty(r.type) })
    }
    const e = keys.get(k)
    if (!e || e.type !== r.type) throw new Error(`part ${part} of ${k} without its first line, or of another type`)
    add(e, r.value)
  }
  return { keys, lines: lines.length, parts }
}

function empty (type) {
  return type === 'hash' || type === 'zset' ? new Map() : type === 'string' ? null : []
}

function add (e, v) {
  switch (e.type) {
    case 'string': e.value = hx(v); break
    case 'hash': for (const [f, x] of fieldPairs(v)) e.value.set(f, x); break
    case 'list': case 'set': for (const x of v) e.value.push(hx(x)); break
    case 'zset': for (const [m, sc] of v) { if (typeof sc !== 'string') throw new Error('a score that is not a string'); e.value.set(hx(m), sc) } break
    case 'stream': for (const en of v) e.value.push({ id: en.id, fields: fieldPairs(en.fields).flat() }); break
    default: throw new Error(`unknown type ${e.type}`)
  }
}

/** The exported keyspace in the shape of writeDataset's (sets sorted, Maps as entries sorted), for toEqual. */
function comparable (keys, ttlMs = TTL_MS) {
  const out = {}
  for (const [k, e] of keys) {
    let value = e.value
    if (e.type === 'set') value = [...value].sort()
    if (value instanceof Map) value = [...value.entries()].sort((a, b) => a[0] < b[0] ? -1 : 1)
    let ttl = e.ttl
    if (typeof ttl === 'number') ttl = ttl > 0 && ttl <= ttlMs
    out[k] = { type: e.type, ttl, value }
  }
  return out
}

/**
 * The lines a restore keeps of an export's text: for each key, its last run of lines from a
 * part 1 (a part 1 replaces the key). Throws when a part does not follow the part before it
 * of its key.
 */
function restoredText (text) {
  const runs = new Map()
  const lines = text.split('\n')
  lines.pop()
  for (const l of lines) {
    const r = JSON.parse(l)
    const k = JSON.stringify(r.key)
    const part = r.part ?? 1
    if (part === 1) runs.set(k, [])
    const run = runs.get(k)
    if (!run || run.length !== part - 1) throw new Error(`part ${part} of ${k} does not follow part ${run ? run.length : 'none'}`)
    run.push(l)
  }
  return [...runs.values()].flat().join('\n') + '\n'
}

module.exports = { writeDataset, readExport, restoredText, comparable, hex, BAD, TTL_MS }
