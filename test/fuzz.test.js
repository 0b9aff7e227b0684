'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Fuzz: random and mutated inputs thrown at the readers (every format, gzip, 1-byte and
// odd chunks, abort and skip) and random templates at the template compiler and mapper.
// Accepted outcomes only: success, or a PipeloadError with a PIPELOAD_* code whose message
// starts with `name:line` / `name@offset` (input) — any other throw, a hang (per-case
// timeout) or a crash fails. Invariants checked on the way: positions only move forward,
// whole-buffer and chunked reads agree, and skip mode yields exactly the records abort
// mode yields before its first error, the row fast paths load() uses (rows: true) give
// what csv-parse / JSON.parse give, and an unmutated input gives the rows it was made from.
//
// Fixed seed by default (printed); FUZZ_SEED=<n> FUZZ_CASES=<n> npx vitest run test/fuzz.test.js
// to explore more, FUZZ_ONLY=<case> to replay one failing case of a seed.

const zlib = require('node:zlib')
const { performance } = require('node:perf_hooks')
const { Readable } = require('node:stream')
const { prng } = require('./helpers/prng')
const { PipeloadError } = require('../lib/errors')
const { openReader, Rejected } = require('../lib/read/reader')
const { parseTemplate } = require('../lib/encode/template')
const { createMapper } = require('../lib/encode/mapper')
const { ByteWriter } = require('../lib/encode/writer')
const { FlatScanner, JsonRow } = require('../lib/read/json/row')
const { CsvRow } = require('../lib/read/csv/row')
const { parseRecord } = require('../lib/read/json/value')
const { scaledMs } = require('./helpers/wait')

const SEED = Number(process.env.FUZZ_SEED || 20260522)
const CASES = Number(process.env.FUZZ_CASES || 200)
const CASE_TIMEOUT_MS = scaledMs(20000) // on a quiet machine, scaled to this one; a hang, not slowness: 100k+ garbage rows rejected one by one in 3-byte chunks take ~10 s
const ONLY = process.env.FUZZ_ONLY ? Number(process.env.FUZZ_ONLY) : null // replay one case of the seed
const NAME = 'fuzz-input'

const rows = Array.from({ length: 40 }, (_, i) => ({ id: String(i + 1), name: i % 7 === 0 ? 'é "q", x\nnew line' : `n${i}`, n: i * 1.5 }))
const csvText = d => [['id', 'name', 'n'].join(d), ...rows.map(r => [r.id, `"${r.name.replace(/"/g, '""')}"`, r.n].join(d))].join('\r\n') + '\r\n'
const SEEDS = [
  { format: 'csv', text: csvText(',') },
  { format: 'csv', text: csvText(','), header: false },
  { format: 'tsv', text: csvText('\t') },
  { format: 'csv', text: csvText(';'), delimiter: ';' },
  { format: 'json', text: JSON.stringify(rows, null, 2) },
  { format: 'json', text: JSON.stringify({ meta: { a: [1, { b: '}' }] }, data: { items: rows } }), jsonPath: 'data.items' },
  { format: 'ndjson', text: rows.map(r => JSON.stringify(r)).join('\n') + '\n' },
  { format: 'ndjson', text: rows.map(r => JSON.stringify(r)).join('\r\n') }
]

/** The model: what a reader must give for an unmutated seed, worked out from `rows`, not by a reader. */
function modelRecords (seed) {
  if (seed.format === 'json' || seed.format === 'ndjson') return rows.map(r => ({ ...r }))
  const arrays = rows.map(r => [r.id, r.name, String(r.n)])
  return seed.header === false ? [['id', 'name', 'n'], ...arrays] : arrays
}

const SPECIAL = [0x22, 0x2c, 0x0a, 0x0d, 0x09, 0x5b, 0x5d, 0x7b, 0x7d, 0x3a, 0x5c, 0x00, 0xff, 0xc3, 0xe2, 0x80, 0xf0]

function mutate (buf, r) {
  let b = Buffer.from(buf)
  const count = 1 + r.int(4)
  const log = []
  for (let k = 0; k < count; k++) {
    const at = r.int(b.length + 1)
    const kind = r.int(9)
    log.push(`${kind}@${at}`)
    switch (kind) {
      case 0: if (b.length) b[Math.min(at, b.length - 1)] ^= 1 << r.int(8); break // flip a bit
      case 1: b = Buffer.concat([b.subarray(0, at), Buffer.from([r.pick(SPECIAL)]), b.subarray(at)]); break
      case 2: b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + r.int(20)))]); break // delete
      case 3: b = b.subarray(0, at); break // truncate
      case 4: b = Buffer.concat([b.subarray(0, at), Buffer.from('""'), b.subarray(at)]); break // duplicate quotes
      case 5: { // deep nesting
        const d = r.pick([10, 1000, 1001, 5000, 100000])
        b = Buffer.concat([b.subarray(0, at), Buffer.from('['.repeat(d) + (r.chance(0.7) ? ']'.repeat(d) : '')), b.subarray(at)])
        break
      }
      case 6: b = Buffer.concat([b.subarray(0, at), Buffer.from(r.pick([[0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8], [0xc0, 0xaf]])), b.subarray(at)]); break // invalid UTF-8
      case 7: { // duplicate a range
        const len = r.int(30)
        b = Buffer.concat([b.subarray(0, at), b.subarray(at, at + len), b.subarray(at)])
        break
      }
      default: b = Buffer.concat([b.subarray(0, at), Buffer.from(r.pick(['\n', '\r\n', '\n\n', ',', '\t', '"', '{}', '[]', 'null', '1e999', '"\\u12', '\\ud800', '"2":1,', '"__proto__":{},'])), b.subarray(at)])
    }
  }
  return { buf: b, log: log.join(' ') }
}

function chunks (buf, size) {
  if (size === 0) return [buf]
  const out = []
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size))
  return out
}

const WHERE = new RegExp(`^${NAME}(:\\d+|@\\d+)?: \\S`)

/** Read to the end; returns { records: [{line, offset, record|rejected}], error }. Throws on anything unaccepted. */
async function readCase (buf, options, size) {
  const reader = openReader({ name: NAME, stream: Readable.from(chunks(buf, size)) }, options)
  const out = { records: [], error: null }
  const deadline = performance.now() + CASE_TIMEOUT_MS // timers can starve while promises keep resolving
  let lastLine = 0
  let lastOffset = -1
  try {
    for await (const batch of reader) {
      if (performance.now() > deadline) throw new Error(`hang: still reading after ${CASE_TIMEOUT_MS} ms`)
      for (let i = 0; i < batch.records.length; i++) {
        const rec = batch.records[i]
        const line = batch.lines[i]
        const offset = batch.offsets[i]
        if (!(Number.isInteger(line) && line >= lastLine && line >= 1)) throw new Error(`line went backwards or is not a line: ${line} after ${lastLine}`)
        if (!(Number.isInteger(offset) && offset > lastOffset)) throw new Error(`offset did not move forward: ${offset} after ${lastOffset}`)
        lastLine = line
        lastOffset = offset
        if (rec instanceof Rejected) {
          if (!/^PIPELOAD_[A-Z_]+$/.test(rec.code) || !rec.message.startsWith(`${NAME}:${line}: `)) throw new Error(`bad rejected record: ${rec.code} ${rec.message}`)
          out.records.push({ line, offset, rejected: rec.code })
        } else {
          if (options.raw && typeof batch.raws[i] !== 'string') throw new Error(`no raw text for the record at line ${line}`)
          out.records.push({ line, offset, record: rec instanceof CsvRow ? rec.toArray() : rec instanceof JsonRow ? rec.toObject() : rec })
        }
      }
    }
  } catch (err) {
    if (!(err instanceof PipeloadError) || !/^PIPELOAD_[A-Z_]+$/.test(err.code) || !WHERE.test(err.message)) throw err
    out.error = err.message
  }
  return out
}

function withTimeout (promise, what) {
  let timer
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(`hang: ${what}`)), CASE_TIMEOUT_MS) })
  ])
}

describe(`fuzz (seed ${SEED}, ${CASES} cases; FUZZ_SEED / FUZZ_CASES to change)`, () => {
  it('readers: mutated inputs end in records or a coded, positioned error', async () => {
    console.log(`fuzz seed ${SEED}, ${CASES} reader cases`)
    const r = prng(SEED)
    let modeled = 0
    for (let c = 0; c < CASES; c++) {
      const seed = r.pick(SEEDS)
      let { buf, log } = r.chance(0.1) ? { buf: Buffer.from(seed.text), log: 'none' } : mutate(Buffer.from(seed.text), r)
      let gz = false
      let damagedGz = false
      if (r.chance(0.15)) {
        gz = true
        buf = zlib.gzipSync(buf)
        if (r.chance(0.6)) { ({ buf } = mutate(buf, r)); damagedGz = true } // damage the compressed bytes
      }
      const options = {
        format: seed.format,
        header: seed.header,
        delimiter: seed.delimiter,
        jsonPath: seed.jsonPath,
        maxRecordSize: r.chance(0.2) ? 20 + r.int(200) : undefined,
        batchRecords: 1 + r.int(20),
        raw: r.chance(0.5)
      }
      const size = r.pick([0, 1, 3, 64, 1 + r.int(500)])
      const what = `case ${c}: ${seed.format}${gz ? '.gz' : ''} mutations ${log}, chunks of ${size || 'all'}, seed ${SEED}`
      if (ONLY !== null && c !== ONLY) continue
      if (ONLY !== null && process.env.FUZZ_DUMP) require('node:fs').writeFileSync(process.env.FUZZ_DUMP, JSON.stringify({ buf: buf.toString('base64'), options, size }))
      try {
        const abort = await withTimeout(readCase(buf, { ...options, onError: 'abort' }, size), what)
        const skip = await withTimeout(readCase(buf, { ...options, onError: 'skip' }, size), what)
        // skip mode yields what abort yields before its first error, then goes on
        const firstRejected = skip.records.findIndex(x => x.rejected)
        const skipBefore = firstRejected === -1 ? skip.records : skip.records.slice(0, firstRejected)
        if (abort.error === null) {
          expect(skip.records, what).toEqual(abort.records)
          expect(skip.error, what).toBe(null)
        } else {
          expect(skipBefore.slice(0, abort.records.length), what).toEqual(abort.records)
        }
        // Every case whole and chunked. A damaged gzip stream is the exception: how much
        // zlib inflates before it fails depends on the chunks, so there the records before
        // the error must agree as far as both got.
        const agree = (a, b, label) => {
          if (!damagedGz) return expect(a, `${what}: ${label}`).toEqual(b)
          const n = Math.min(a.records.length, b.records.length)
          expect(a.records.slice(0, n), `${what}: ${label}`).toEqual(b.records.slice(0, n))
        }
        const whole = size === 0 ? skip : await withTimeout(readCase(buf, { ...options, onError: 'skip' }, 0), what)
        agree(whole, skip, 'whole vs chunked')
        // The row fast paths that load() takes (CsvRow, JsonRow) against csv-parse / JSON.parse
        // (damaged gzip: how far each path reads before zlib fails differs too).
        const fast = await withTimeout(readCase(buf, { ...options, onError: 'skip', rows: true }, size), what)
        agree(fast, skip, 'rows: true vs rows: false')
        // An unmutated input (no record-size limit): the rows it was written from.
        if (log === 'none' && !damagedGz && options.maxRecordSize === undefined) {
          expect(skip.error, what).toBe(null)
          expect(skip.records.map(x => x.record ?? x), what).toEqual(modelRecords(seed))
          modeled++
        }
      } catch (err) {
        err.message = `${what}\n${err.message}`
        throw err
      }
    }
    if (ONLY === null && CASES >= 100) expect(modeled).toBeGreaterThan(0)
  }, scaledMs(120_000))

  it('template compiler and mapper: random templates and records end in commands or a coded error', () => {
    const r = prng(SEED + 1)
    // Field names include Object.prototype members and array members: only own properties
    // are fields, which the null-prototype differential below checks (issue 10 item 3).
    const PROTO = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf', 'toLocaleString', 'length', 'name', 'map']
    const alphabet = ['{', '}', '{{', '}}', '*', '"', "'", '\\', ' ', '  ', 'a', 'id', '0', '1', '.', 'a.b', ':', 'HSET', 'SET', 'k:', '\t', 'é', '\u0000',
      ...PROTO, ...PROTO.map(p => `{${p}}`), '{constructor.name}', '{a.constructor}', '{id.length}', '{__proto__.x}', '{2}', '{10}', '{blob}', '{bin.0}']
    // CSV shapes get string arrays (all a CSV reader yields); JSON shapes any value.
    const deep = JSON.parse('['.repeat(5000) + ']'.repeat(5000))
    const rowsOf = n => [Array.from({ length: n }, (_, i) => `v${i}`), Array.from({ length: n }, () => ''), Array.from({ length: n }, () => 'é\u0000"\r\n')]
    // Binary values go out as their bytes (issue 10 item 4), checked below.
    const BIN = [0xff, 0xfe, 0x80, 0x00, 0x0d, 0x0a]
    const binaries = () => [Buffer.from(BIN), new Uint8Array(BIN), new DataView(new Uint8Array(BIN).buffer), new Uint8Array(BIN).buffer, new Uint16Array(new Uint8Array(BIN).buffer)]
    class Instance { constructor () { this.id = 'i'; this.blob = Buffer.from(BIN) } get computed () { return 'inherited' } }
    Instance.prototype.inherited = 'inherited'
    // NDJSON lines whose integer-like keys are not first: JS objects would move them there.
    const LINES = ['{"id":"o","b":"x","2":"y","10":"z","a":"w"}', '{"constructor":"c","__proto__":"p","2":"q","id":"1","toString":"t"}', '{"a":{"b":"1"},"0":"z","a.b":"d"}']
    const shapes = [
      { shape: { columns: ['id', 'a.b', 'name', '0', 'constructor', '__proto__'], file: NAME }, records: rowsOf(6) },
      { shape: { columns: null, file: NAME }, records: [...rowsOf(3), ...rowsOf(1)] },
      {
        shape: { file: NAME },
        records: [
          { id: 1, a: { b: 2 }, name: null }, { 'a.b': 'dotted', id: '' }, 42, 'str', null, true, [1, [2]], ['x', 'y'], { id: { deep: [1, { x: 1 }] } }, {}, deep,
          JSON.parse('{"id":"p","constructor":"c","__proto__":"p","toString":"t","length":3,"a":{"constructor":{"name":"n"}}}'),
          { id: 'o', b: 'x', 2: 'y', 10: 'z', a: 'w' }, // integer-like keys
          ...binaries().map((blob, i) => ({ id: `b${i}`, blob, bin: [blob], '2': blob })),
          new Instance()
        ]
      }
    ]
    let compiled = 0
    for (let c = 0; c < CASES * 5; c++) {
      let t = ''
      const len = 1 + r.int(12)
      for (let i = 0; i < len; i++) t += r.pick(alphabet)
      if (r.chance(0.5)) t = r.pick(['HSET ', 'SET ', 'SADD ']) + t
      const { shape, records } = r.pick(shapes)
      const what = `template ${JSON.stringify(t)} shape ${JSON.stringify(shape.columns)} seed ${SEED}`
      let mapper
      try {
        parseTemplate(t)
        mapper = createMapper({ templates: [t], ttl: r.chance(0.2) ? 10 : undefined, shape })
        compiled++
      } catch (err) {
        if (!(err instanceof PipeloadError) || !['PIPELOAD_TEMPLATE_INVALID', 'PIPELOAD_OPTION_INVALID'].includes(err.code)) {
          throw new Error(`${what}: ${err && err.stack}`)
        }
        continue
      }
      for (const rec of records) {
        // The encoder turns any throw into a failed record; ours must be coded (a value too
        // deep to write back as JSON text included).
        const got = outcome(mapper, rec, `${what} record ${show(rec)}`)
        if (shape.columns !== undefined || rec === deep) continue
        // Own properties only: the record without a prototype chain maps the same.
        expect(outcome(mapper, withoutPrototypes(rec), what), `${what} record ${show(rec)} vs its null-prototype copy`).toEqual(got)
      }
      if (shape.columns !== undefined) continue
      // The NDJSON fast path (JsonRow) and the JSON.parse path agree, order of `*` included.
      for (const text of [...records.map(jsonOf).filter(Boolean), ...LINES]) {
        const row = new FlatScanner().scan(Buffer.from(text), 0, Buffer.byteLength(text))
        const parsed = parseRecord(text).value
        if (row) expect(outcome(mapper, row, what), `${what} fast path vs JSON.parse for ${text}`).toEqual(outcome(mapper, parsed, what))
      }
    }
    expect(compiled).toBeGreaterThan(0)

    // Every binary value, as a template field and in `*`, is its bytes in the RESP.
    for (const blob of binaries()) {
      const bytes = Buffer.isBuffer(blob) ? blob : ArrayBuffer.isView(blob) ? Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength) : Buffer.from(blob)
      const bulk = Buffer.concat([Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n')])
      for (const templates of [['SET k {blob}'], ['HSET k *'], ['SET k {bin.0}']]) {
        const got = outcome(createMapper({ templates, shape: { file: NAME } }), { blob, bin: [blob] }, templates[0])
        expect(got.bytes && Buffer.from(got.bytes, 'latin1').includes(bulk), `${templates[0]} with ${blob.constructor.name}`).toBe(true)
      }
      const map = createMapper({ map: rec => [['SET', rec.blob, rec.blob]], shape: { file: NAME } })
      expect(Buffer.from(outcome(map, { blob }, 'map()').bytes, 'latin1').equals(Buffer.concat([Buffer.from('*3\r\n$3\r\nSET\r\n'), bulk, bulk])), blob.constructor.name).toBe(true)
    }
  })
})

/** What a mapper makes of a record: its RESP (latin1 text, for readable diffs) or the code it throws. */
function outcome (mapper, rec, what) {
  const w = new ByteWriter()
  try {
    mapper.write(rec, w)
    mapper.args(rec)
    return { bytes: w.take().toString('latin1') }
  } catch (err) {
    if (!(err instanceof PipeloadError) || !/^PIPELOAD_[A-Z_]+$/.test(err.code)) throw new Error(`${what}: ${err && err.stack}`)
    return { code: err.code }
  }
}

/** A copy of plain data with no prototypes anywhere (own properties kept, binary values as they are). */
function withoutPrototypes (v) {
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return v
  const out = Array.isArray(v) ? v.map(withoutPrototypes) : Object.create(null)
  if (Array.isArray(v)) Object.setPrototypeOf(out, null)
  else for (const k of Object.keys(v)) out[k] = withoutPrototypes(v[k])
  return out
}

/** The record as an NDJSON line when it is plain JSON data, else null. */
function jsonOf (rec) {
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec) || Object.getPrototypeOf(rec) !== Object.prototype) return null
  if (Object.values(rec).some(v => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) !== Object.prototype)) return null
  try {
    const text = JSON.stringify(rec)
    return text.includes('"type":"Buffer"') ? null : text
  } catch {
    return null
  }
}

function show (rec) {
  try { return JSON.stringify(rec)?.slice(0, 80) } catch { return `(a ${typeof rec} JSON cannot show)` }
}
