'use strict'
/* global describe, it, expect */

// The CSV writer of `pipeload export` (lib/export/csv.js), without a server: records built by
// hand, the output read back by csv-parse (an independent RFC 4180 reader) and compared with
// what the test generated.

const { parse } = require('csv-parse/sync')
const { createWriter } = require('../lib/export/csv')
const { collector, writeAll: writeRecords, failure: writeFailure } = require('./helpers/export-sink')
const { prng } = require('./helpers/prng')

const B = s => Buffer.from(s)
const hash = (key, pairs, { part = 1, ttl = null } = {}) => ({ key: B(key), type: 'hash', ttl, part, value: pairs.flatMap(([f, v]) => [B(f), Buffer.isBuffer(v) ? v : B(v)]) })

const writeAll = (records, options, sink) => writeRecords(createWriter, records, options, sink)
const failure = (records, options) => writeFailure(createWriter, records, options)

// Values a CSV writer must quote, or must not break: separators, quotes, every line end,
// leading and trailing spaces, empty strings, non-ASCII text, a NUL.
const AWKWARD = ['plain', 'a,b', 'say "hi"', '"', 'line\nbreak', 'cr\rlone', 'crlf\r\nend', ' padded ', '', 'Ünïcödé ✓ 🚀', 'nul\0byte', ',', '\n']

/** n hashes, each with some of the fields f0..f5 (so cells are left empty), values awkward. */
function dataset (n, seed) {
  const r = prng(seed)
  const keys = []
  for (let i = 0; i < n; i++) {
    const pairs = []
    for (let f = 0; f < 6; f++) if (i < 6 ? f <= i : r.chance(0.7)) pairs.push([`f${f}`, `${r.pick(AWKWARD)}${i}`])
    if (pairs.length === 0) pairs.push(['f0', r.pick(AWKWARD)])
    keys.push({ key: r.chance(0.1) ? `k,"${i}"\n` : `user:${i}`, pairs })
  }
  return keys
}

describe('CSV export writer', () => {
  it('writes one row per hash, RFC 4180 quoted, that csv-parse reads back as the data; a missing field is an empty cell', async () => {
    const keys = dataset(3000, 1) // ~250 KB: several of the writer's 64 KiB writes
    const sink = await writeAll(keys.map(k => hash(k.key, k.pairs)), {})
    const text = sink.bytes().toString('utf8')
    expect(text.length).toBeGreaterThan(150_000)
    const rows = parse(text, { columns: true })
    // The first keys have f0, f0 f1, … so the columns come in that order.
    expect(text.slice(0, text.indexOf('\n'))).toBe('key,f0,f1,f2,f3,f4,f5')
    expect(rows).toEqual(keys.map(k => {
      const row = { key: k.key, f0: '', f1: '', f2: '', f3: '', f4: '', f5: '' }
      for (const [f, v] of k.pairs) row[f] = v
      return row
    }))
  })

  it('quotes exactly the cells that hold a comma, a quote, CR or LF (pipeload import refuses a lone CR outside quotes)', async () => {
    const values = ['plain', 'a,b', 'say "hi"', 'cr\rlone', 'line\nbreak', 'crlf\r\n', ' padded ', '', 'é✓', 'nul\0']
    const text = (await writeAll(values.map((v, i) => hash(`k${i}`, [['f', v]])), {})).bytes().toString()
    expect(text).toBe('key,f\nk0,plain\nk1,"a,b"\nk2,"say ""hi"""\nk3,"cr\rlone"\nk4,"line\nbreak"\nk5,"crlf\r\n"\nk6, padded \nk7,\nk8,é✓\nk9,nul\0\n')
  })

  it('writes a big hash that comes in parts as one row', async () => {
    const records = []
    const expected = []
    for (let i = 0; i < 300; i++) {
      const fields = Array.from({ length: 40 }, (_, f) => [`c${f}`, `v${i}.${f}`])
      const parts = i % 3 === 0 ? [fields.slice(0, 15), fields.slice(15, 30), fields.slice(30)] : [fields]
      parts.forEach((p, j) => records.push(hash(`big:${i}`, p, { part: j + 1, ttl: 1000 })))
      expected.push({ key: `big:${i}`, ...Object.fromEntries(fields) })
    }
    const rows = parse((await writeAll(records, {})).bytes(), { columns: true })
    expect(rows).toEqual(expected)
  })

  it('takes the columns from fields, in that order, and from the first `sample` keys without it', async () => {
    const records = [hash('a', [['x', '1'], ['y', '2']]), hash('b', [['z', '3']])]
    const given = (await writeAll(records, { fields: ['z', 'y', 'x', 'w'] })).bytes().toString()
    expect(given).toBe('key,z,y,x,w\na,,2,1,\nb,3,,,\n')
    const err = await failure([...records, hash('c', [['q', '4']])], { sample: 2 })
    expect(err.code).toBe('PIPELOAD_EXPORT_FIELD_UNKNOWN')
    expect(err.exitCode).toBe(3)
    expect(err.message).toContain('key c has the field "q"')
    expect(err.message).toContain('--fields x,y,z,q')
    expect(B('c').equals(err.key)).toBe(true)
    expect(err.field).toBe('q')
    const withFields = await failure(records, { fields: ['x', 'y'] })
    expect(withFields.message).toContain('key b has the field "z", which is not among the CSV columns (the --fields given: x,y)')
  })

  it('awaits drain: a slow output never holds more than a write or two', async () => {
    const keys = dataset(6000, 2)
    const sink = await writeAll(keys.map(k => hash(k.key, k.pairs)), {}, collector({ slow: true }))
    expect(sink.bytes().length).toBeGreaterThan(300_000)
    expect(sink.stats.most).toBeLessThan(140_000)
    expect(parse(sink.bytes(), { columns: true }).length).toBe(6000)
  })

  it('writes a header alone for no keys, and does not end its output', async () => {
    const sink = await writeAll([], {})
    expect(sink.bytes().toString()).toBe('key\n')
    expect(sink.out.writableEnded).toBe(false)
  })

  it('refuses other types, bytes that are not UTF-8, a field named key, an oversized hash', async () => {
    const list = await failure([hash('a', [['x', '1']]), { key: B('q'), type: 'list', ttl: null, part: 1, value: [B('1')] }], {})
    expect([list.code, list.exitCode, list.type]).toEqual(['PIPELOAD_EXPORT_TYPE_UNSUPPORTED', 3, 'list'])
    expect(list.message).toBe('key q is a list, and CSV writes hashes only: export only those (--type hash), or to NDJSON, which writes every type')
    const key = await failure([{ ...hash('x', [['f', 'v']]), key: Buffer.from([0x61, 0xff]) }], {})
    expect([key.code, key.exitCode]).toEqual(['PIPELOAD_EXPORT_NOT_TEXT', 3])
    expect(key.message).toContain('key "a\\xff": the key is not valid UTF-8')
    const value = await failure([hash('k1', [['f', Buffer.from([0xc3, 0x28])]])], {})
    expect(value.message).toContain('key k1: the value of the field "f" is not valid UTF-8 ("\\xc3(")')
    const name = await failure([{ key: B('k2'), type: 'hash', ttl: null, part: 1, value: [Buffer.from([0xfe]), B('v')] }], {})
    expect(name.code).toBe('PIPELOAD_EXPORT_NOT_TEXT')
    const clash = await failure([hash('k3', [['key', 'v']])], {})
    expect(clash.code).toBe('PIPELOAD_EXPORT_FIELD_UNKNOWN')
    expect(clash.message).toContain('a field named "key", which is the name of a CSV column of its own')
    const big = await failure([hash('h', [['a', 'x'.repeat(600)]]), hash('h', [['b', 'y'.repeat(600)]], { part: 2 })], { maxRecordSize: 1000 })
    expect([big.code, big.exitCode]).toEqual(['PIPELOAD_RECORD_TOO_LARGE', 3])
    const opt = await failure([], { fields: ['a', 'key'] })
    expect([opt.code, opt.exitCode]).toEqual(['PIPELOAD_OPTION_INVALID', 2])
  })
})

describe('CSV export writer output failures', () => {
  const { Writable } = require('node:stream')
  const many = () => dataset(3000, 3).map(k => hash(k.key, k.pairs))

  it('rejects with PIPELOAD_OUTPUT_FAILED when the output fails, and does not hang when it is destroyed', async () => {
    const failing = new Writable({ highWaterMark: 1024, write (chunk, enc, cb) { setTimeout(() => cb(Object.assign(new Error('no space'), { code: 'ENOSPC' })), 1) } })
    failing.on('error', () => {})
    const w = createWriter(failing, {})
    const got = await (async () => { for (const r of many()) { const p = w.write(r); if (p) await p } await w.end() })().catch(e => e)
    expect([got.code, got.exitCode]).toEqual(['PIPELOAD_OUTPUT_FAILED', 74])
    expect(got.message).toContain('no space left on the device')

    const slow = collector({ slow: true })
    const w2 = createWriter(slow.out, {})
    setTimeout(() => slow.out.destroy(), 5)
    const closed = await (async () => { for (const r of many()) { const p = w2.write(r); if (p) await p } await w2.end() })().catch(e => e)
    expect(closed.code).toBe('PIPELOAD_OUTPUT_CLOSED')
  })
})
