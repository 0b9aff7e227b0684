'use strict'

const { PipeloadError } = require('../errors')
const { INDEX } = require('../read/row')

// `import --restore`: the lines of a dump in docs/export.md's NDJSON format → the commands that
// re-create each key, as a mapper (mapper.js's interface: write, args). Pure: no I/O, no clock
// (the restore's start time is given), so it is unit-tested without a server.
//
// A key's first line: DEL, the type's commands, PEXPIREAT (start + ttl) when it has a ttl; a
// part line ("part" ≥ 2, the same key right after) adds its elements and sets the expiry
// again. Everything a line writes is one record, so one batch: a re-sent or resumed line
// writes the same data again. Parts are made idempotent too:
// - a list part knows where it starts (the lengths of the key's earlier parts, counted here
//   while reading): LTRIM to that length, then RPUSH, so a part sent twice is not added twice;
// - hash, set and zset parts set what is already set;
// - a stream part's XADD of an entry already there is refused by the server ("equal or
//   smaller than the target stream top item"): the sender counts that reply as written
//   (ALREADY_WRITTEN, below). The entries' IDs are checked to rise here, across parts too, so
//   that reply can only come from an entry this restore wrote before.
// The state of the key being read (`prev`) is why a restore reads its lines in order: one
// thread, or one worker (lib/threads/modes.js), and a resume sees the lines it skips
// (observe, lib/encode/chain.js).

/** Elements per HSET, RPUSH, SADD, ZADD: a big key is several commands, none of them huge. */
const CHUNK = 512

const TYPES = ['string', 'hash', 'list', 'set', 'zset', 'stream']

/** The reply to an XADD of an ID the stream has already: on a restore, that entry is written. */
const ALREADY_WRITTEN = /^ERR The ID specified in XADD is equal or smaller than the target stream top item/

const SCORE = /^[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf|infinity)$/i
const STREAM_ID = /^(\d+)-(\d+)$/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function bad (what) {
  return new PipeloadError('PIPELOAD_RECORD_INVALID', `not a dump line (docs/export.md): ${what}`)
}

/** A string of the dump: a JSON string, or {"base64": "…"} for bytes that are not UTF-8. */
function bytesOf (v, what) {
  if (typeof v === 'string') return v
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.base64 === 'string' && Object.keys(v).length === 1) {
    const b64 = v.base64
    if (b64.length % 4 !== 0 || !BASE64.test(b64)) throw bad(`${what} has {"base64"} that is not base64: ${JSON.stringify(b64.length > 40 ? b64.slice(0, 40) + '…' : b64)}`)
    return Buffer.from(b64, 'base64')
  }
  throw bad(`${what} is ${kindOf(v)}, not a string or {"base64": "…"}`)
}

function kindOf (v) {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'object') return 'an object'
  return `a ${typeof v}`
}

function isObject (v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** Bytes for comparing two keys (a string's UTF-8, or the decoded base64). */
function keyBytes (k) {
  return typeof k === 'string' ? Buffer.from(k) : k
}

/** [name, value] pairs of a hash value or a stream entry's fields: an object, or an array of pairs. */
function pairsOf (v, what) {
  if (Array.isArray(v)) {
    return v.map((p, i) => {
      if (!Array.isArray(p) || p.length !== 2) throw bad(`${what}[${i}] is ${kindOf(p)}, not a [name, value] pair`)
      return [bytesOf(p[0], `${what}[${i}][0]`), bytesOf(p[1], `${what}[${i}][1]`)]
    })
  }
  if (isObject(v)) return Object.keys(v).map(name => [name, bytesOf(v[name], `${what}.${name}`)])
  throw bad(`${what} is ${kindOf(v)}, not an object or an array of [name, value] pairs`)
}

function listOf (v, what) {
  if (!Array.isArray(v)) throw bad(`${what} is ${kindOf(v)}, not an array`)
  return v.map((e, i) => bytesOf(e, `${what}[${i}]`))
}

function scoreOf (s, what) {
  if (typeof s === 'number' && !Number.isNaN(s)) return String(s)
  if (typeof s === 'string' && SCORE.test(s)) return s
  throw bad(`${what} is ${typeof s === 'string' ? JSON.stringify(s) : kindOf(s)}, not a score ("1.5", "inf", "-inf")`)
}

function zsetOf (v, what) {
  if (!Array.isArray(v)) throw bad(`${what} is ${kindOf(v)}, not an array of [member, score] pairs`)
  return v.map((p, i) => {
    if (!Array.isArray(p) || p.length !== 2) throw bad(`${what}[${i}] is ${kindOf(p)}, not a [member, score] pair`)
    return [scoreOf(p[1], `${what}[${i}][1]`), bytesOf(p[0], `${what}[${i}][0]`)]
  })
}

/** A stream ID as [ms, seq] BigInts. */
function idOf (id, what) {
  const m = typeof id === 'string' ? STREAM_ID.exec(id) : null
  if (m === null) throw bad(`${what} is ${typeof id === 'string' ? JSON.stringify(id) : kindOf(id)}, not a stream ID "<ms>-<seq>"`)
  return [BigInt(m[1]), BigInt(m[2])]
}

function after (a, b) {
  return b === null || a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])
}

/**
 * Could reading have reordered this object's names? JavaScript lists integer-like names
 * ("2", "10") first, whatever their place in the text: an entry's fields would be added in
 * another order than the dump's (a hash's order does not matter).
 */
function reordered (obj) {
  const names = Object.keys(obj)
  return names.length > 1 && INDEX.test(names[0])
}

/** A stream's entries as { id, fields }, their IDs rising from `last` (the key's part before, or null). */
function entriesOf (v, what, last) {
  if (!Array.isArray(v)) throw bad(`${what} is ${kindOf(v)}, not an array of entries`)
  return v.map((e, i) => {
    if (!isObject(e)) throw bad(`${what}[${i}] is ${kindOf(e)}, not an entry {"id", "fields"}`)
    const id = idOf(e.id, `${what}[${i}].id`)
    if (id[0] === 0n && id[1] === 0n) throw bad(`${what}[${i}].id is "0-0", which no entry can have`)
    if (!after(id, last)) throw bad(`${what}[${i}].id ${e.id} does not come after the entry before it`)
    last = id
    if (isObject(e.fields) && reordered(e.fields)) {
      throw bad(`${what}[${i}].fields names a field like an array index (${JSON.stringify(Object.keys(e.fields)[0])}) beside others: a JSON object does not keep their order once read; write them as [name, value] pairs`)
    }
    const fields = pairsOf(e.fields, `${what}[${i}].fields`)
    if (fields.length === 0) throw bad(`${what}[${i}].fields is empty: a stream entry has one field at least`)
    return { id: e.id, last: id, fields }
  })
}

/** The commands of a name and its elements (each an array of words), CHUNK elements a command. */
function chunked (name, key, elements, out) {
  for (let i = 0; i < elements.length; i += CHUNK) {
    const cmd = [name, key]
    const end = Math.min(i + CHUNK, elements.length)
    for (let j = i; j < end; j++) {
      const e = elements[j]
      if (Array.isArray(e)) cmd.push(e[0], e[1])
      else cmd.push(e)
    }
    out.push(cmd)
  }
}

/**
 * A line read: { key, type, ttl, part, elements, count, last } or throws a PIPELOAD_RECORD_INVALID
 * saying what is wrong. `prev`: the state after the line before (null: none, or it failed).
 */
function readLine (rec, prev) {
  if (!isObject(rec)) throw bad(`a line is a JSON object {"key", "type", "ttl", "value"}, not ${kindOf(rec)}`)
  if (rec.key === undefined) throw bad('"key" is missing')
  const key = bytesOf(rec.key, '"key"')
  const type = rec.type
  if (!TYPES.includes(type)) throw bad(`"type" is ${typeof type === 'string' ? JSON.stringify(type) : kindOf(type)}, not one of ${TYPES.join(', ')}`)
  const ttl = rec.ttl
  if (ttl !== null && !(Number.isSafeInteger(ttl) && ttl >= 0)) throw bad(`"ttl" is ${JSON.stringify(ttl) ?? 'missing'}, not null or milliseconds (a whole number ≥ 0)`)
  const part = rec.part ?? 1
  if (!(Number.isSafeInteger(part) && part >= 1)) throw bad(`"part" is ${JSON.stringify(part)}, not a whole number ≥ 2`)
  if (part > 1) {
    if (type === 'string') throw bad('a string has no parts ("part" on a string line)')
    if (prev === null || !keyBytes(prev.key).equals(keyBytes(key))) throw bad(`"part": ${part} does not follow a line of the same key (each part comes right after the one before it)`)
    if (prev.type !== type) throw bad(`"part": ${part} is of type ${type}, the lines before it of type ${prev.type}`)
    if (prev.part !== part - 1) throw bad(`"part": ${part} follows "part": ${prev.part}`)
  }
  if (rec.value === undefined) throw bad('"value" is missing')
  const line = { key, type, ttl, part, elements: null, count: 0, last: null }
  const what = '"value"'
  switch (type) {
    case 'string': line.elements = bytesOf(rec.value, what); break
    case 'hash': line.elements = pairsOf(rec.value, what); break
    case 'list': case 'set': line.elements = listOf(rec.value, what); break
    case 'zset': line.elements = zsetOf(rec.value, what); break
    case 'stream': {
      const entries = entriesOf(rec.value, what, part > 1 ? prev.last : null)
      line.elements = entries
      line.last = entries.length ? entries[entries.length - 1].last : part > 1 ? prev.last : null
      break
    }
  }
  line.count = (part > 1 ? prev.count : 0) + (type === 'string' ? 1 : line.elements.length)
  return line
}

/** The commands of a line read (readLine), `startMs` the restore's start (epoch ms). */
function commandsOf (line, startMs) {
  const { key, type, part, elements } = line
  const out = []
  // SET replaces a key of any type and drops its expiry: no DEL before it.
  if (part === 1 && type !== 'string') out.push(['DEL', key])
  switch (type) {
    case 'string': out.push(['SET', key, elements]); break
    case 'hash': chunked('HSET', key, elements, out); break
    case 'set': chunked('SADD', key, elements, out); break
    case 'zset': chunked('ZADD', key, elements, out); break
    case 'list': {
      // The part's first index is what the earlier parts hold: keep those, drop whatever
      // a part sent before wrote after them (none: the key goes).
      const start = line.count - elements.length
      if (part > 1) out.push(start === 0 ? ['DEL', key] : ['LTRIM', key, '0', String(start - 1)])
      chunked('RPUSH', key, elements, out)
      break
    }
    case 'stream':
      for (const e of elements) {
        const cmd = ['XADD', key, e.id]
        for (const [f, v] of e.fields) cmd.push(f, v)
        out.push(cmd)
      }
      // An empty stream is a key: one entry added with MAXLEN 0 leaves it, empty.
      if (part === 1 && elements.length === 0) out.push(['XADD', key, 'MAXLEN', '0', '0-1', '_', '_'])
      break
  }
  if (line.ttl !== null && out.length > (part === 1 && type !== 'string' ? 1 : 0)) out.push(['PEXPIREAT', key, String(startMs + line.ttl)])
  return out
}

/**
 * The restore's mapper. `startMs`: the restore's start time (epoch ms; a resumed restore's is
 * its first run's), the base of every PEXPIREAT. `plain`: a reader's record as plain data.
 */
function restoreMapper ({ startMs, plain = rec => rec }) {
  let prev = null
  const read = rec => {
    try {
      const line = readLine(plain(rec), prev)
      prev = line
      return line
    } catch (err) {
      prev = null // the parts after a failed line fail too: that key is not whole
      throw err
    }
  }
  const args = rec => commandsOf(read(rec), startMs)
  return {
    args,
    write (rec, w) {
      const cmds = args(rec)
      for (const c of cmds) {
        w.arrayHeader(c.length)
        for (let i = 0; i < c.length; i++) w.arg(c[i])
      }
      return cmds.length
    },
    /** A line a resume skips (loaded by the run before): only what it says of the key being read. */
    observe (rec) {
      try { read(rec) } catch { /* it failed in that run too */ }
    }
  }
}

module.exports = { restoreMapper, readLine, commandsOf, ALREADY_WRITTEN, CHUNK }
