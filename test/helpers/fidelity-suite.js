'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Fidelity: what goes in comes back out of Redis byte for byte, for every input format.
// Defined once, run per parsing mode (main thread, encode worker: test/fidelity.test.js,
// test/fidelity-worker.test.js) and per server kind found (test/helpers/servers.js).
// Expectations come from test/helpers/datasets.js (own serializers, not lib's readers),
// checked against a private server started by the harness.

const fs = require('node:fs')
const path = require('node:path')
const { Readable } = require('node:stream')
const { useServer, REDIS } = require('./redis-server')
const ds = require('./datasets')
const pipeload = require('../../lib')

/** Define the whole suite for one parsing mode against one server kind (default redis-server). */
function fidelitySuite ({ worker, server = REDIS }) {
  const load = options => pipeload.load({ workers: worker ? 1 : 0, ...options })

  let srv
  let redis
  let tmp
  useServer('pipeload-fidelity-', s => { ({ srv, redis, tmp } = s) }, { server })

  // Ids that are not plain numbers: unicode, a space, leading zeros next to the same number.
  const ODD_IDS = ['ü-ñ', 'id with space', '😀', '007', '7', 'a:b:{c}']

  /** All keys matching `prefix*` (SCAN, so it never blocks; prefixes have no glob chars). */
  async function keysWithPrefix (prefix) {
    const keys = []
    let cursor = '0'
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      keys.push(...batch)
    } while (cursor !== '0')
    return keys
  }

  /** HGETALL every expected key in pipelines of 1000 and compare field by field. */
  async function expectHashes (prefix, expected) {
    const entries = [...expected]
    for (let i = 0; i < entries.length; i += 1000) {
      const chunk = entries.slice(i, i + 1000)
      const p = redis.pipeline()
      for (const [k] of chunk) p.hgetall(prefix + k)
      const replies = await p.exec()
      chunk.forEach(([k, want], j) => {
        const [err, got] = replies[j]
        expect(err, `HGETALL ${prefix + k}`).toBe(null)
        if (!isEqual(got, want)) {
          // A compact message: the key and the first differing field, not a 1 MB diff.
          const field = Object.keys({ ...want, ...got }).find((f) => got[f] !== want[f])
          expect.fail(`${prefix + k}: field ${JSON.stringify(field)} expected ${preview(want[field])}, got ${preview(got[field])}`)
        }
      })
    }
    const keys = await keysWithPrefix(prefix)
    expect(keys.length, `keys under ${prefix}`).toBe(expected.size)
  }

  function isEqual (a, b) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k])
  }

  function preview (v) {
    if (v === undefined) return 'undefined (field missing)'
    const s = JSON.stringify(v)
    return s.length > 120 ? `${s.slice(0, 120)}… (${v.length} chars)` : s
  }

  function expectCleanSummary (summary, { records, commands }) {
    expect(summary.failures).toEqual([])
    expect(summary.errors).toBe(0)
    expect(summary.errorReplies).toBe(0)
    expect(summary.records).toBe(records)
    expect(summary.commands).toBe(commands)
    expect(summary.batches).toBeGreaterThanOrEqual(1)
  }

  // Every format the reader supports, each also gzipped. `records` options shape the data
  // (tsv-safe values for plain TSV), `write` the serializer options, `load` extra options.
  const FORMATS = [
    { name: 'csv', format: 'csv' },
    { name: 'csv-crlf-bom', format: 'csv', write: { crlf: true, bom: true } },
    { name: 'csv-quote-all-semicolon', format: 'csv', write: { quoteAll: true, delimiter: ';' }, load: { delimiter: ';' } },
    { name: 'csv-no-trailing-newline', format: 'csv', write: { trailingNewline: false } },
    { name: 'tsv', format: 'tsv' }, // quoted CSV-style where a value holds tab/CR/LF/quote
    { name: 'tsv-plain', format: 'tsv', records: { tsvSafe: true } }, // no quoting at all
    { name: 'json', format: 'json', write: { indent: 2 } },
    { name: 'json-compact-escaped', format: 'json', write: { escapeUnicode: true } },
    { name: 'json-path', format: 'json', write: { path: 'data.items' }, load: { jsonPath: 'data.items' } },
    { name: 'ndjson', format: 'ndjson' },
    { name: 'ndjson-crlf', format: 'ndjson', write: { crlf: true } }
  ]

  it('runs against the server kind it was given (INFO server)', async () => {
    expect(await srv.identity()).toEqual({ name: server.name, version: server.version })
  })

  describe('fidelity: every format round-trips through HSET key *', () => {
    for (const gz of [false, true]) {
      for (const f of FORMATS) {
        const label = f.name + (gz ? '.gz' : '')
        it(label, async () => {
          const records = ds.generateRecords({ count: 300, seed: label.length * 7919, extraIds: ODD_IDS, ...f.records })
          const dir = fs.mkdtempSync(path.join(tmp, `${label}-`))
          const { file, bytes } = ds.writeDataset(dir, f.format, records, { ...f.write, gzip: gz })
          const prefix = `f:${label}:`
          // Format from the file name (data.csv, data.csv.gz, …): no `format` option.
          const summary = await load({ url: srv.url, input: file, key: `${prefix}{id}`, ...f.load })
          expectCleanSummary(summary, { records: records.length, commands: records.length })
          if (!gz) expect(summary.bytesRead).toBe(bytes)
          await expectHashes(prefix, ds.expectedHashes(records, 'id'))
        })
      }
    }
  })

  describe('fidelity: other inputs and templates', () => {
    it('headerless CSV with SET r:{0} {1}: later rows win', async () => {
      const rnd = ds.prng(42)
      const rows = []
      for (let i = 0; i < 200; i++) {
        // Ids repeat (i % 150), values are the nasty ones.
        rows.push([String(i % 150).padStart(3, '0'), ds.NASTY[rnd.int(ds.NASTY.length)] + ` #${i}`])
      }
      rows.push(['', 'empty id']) // key "hl:" itself
      const file = path.join(tmp, 'headerless.csv')
      fs.writeFileSync(file, ds.toCSV(rows, { header: false }))
      const summary = await load({ url: srv.url, input: file, header: false, command: 'SET hl:{0} {1}' })
      expectCleanSummary(summary, { records: rows.length, commands: rows.length })
      const expected = new Map()
      for (const [k, v] of rows) expected.set(k, v)
      const keys = [...expected.keys()]
      const values = await redis.mget(keys.map((k) => `hl:${k}`))
      keys.forEach((k, i) => expect(values[i], `hl:${k}`).toBe(expected.get(k)))
      expect((await keysWithPrefix('hl:')).length).toBe(expected.size)
    })

    it('map function over an async iterable of objects', async () => {
      const records = ds.generateRecords({ count: 1500, seed: 5, extraIds: ODD_IDS })
      async function * source () {
        for (const r of records) {
          if (Number(r.seq) % 100 === 0) await new Promise((resolve) => setImmediate(resolve))
          yield r
        }
      }
      const seen = []
      const summary = await load({
        url: srv.url,
        input: source(),
        map: (r) => {
          seen.push(r.seq)
          return [['HSET', `mp:${r.id}`, 'name', r.name, 'note', r.note], ['SADD', 'mp-idx', r.id]]
        }
      })
      expect(seen).toEqual(records.map((r) => r.seq)) // every record, in order
      expectCleanSummary(summary, { records: records.length, commands: 2 * records.length })
      const expected = ds.expectedHashes(records.map((r) => ({ id: r.id, name: r.name, note: r.note })), 'id')
      for (const h of expected.values()) delete h.id
      const idx = await redis.smembers('mp-idx')
      expect(idx.sort()).toEqual([...expected.keys()].sort())
      await redis.del('mp-idx')
      await expectHashes('mp:', expected)
    })

    it('a sync iterable (array) of records with a key template', async () => {
      const records = ds.generateRecords({ count: 700, seed: 11 })
      const summary = await load({ url: srv.url, input: records, key: 'arr:{id}' })
      expectCleanSummary(summary, { records: records.length, commands: records.length })
      await expectHashes('arr:', ds.expectedHashes(records, 'id'))
    })

    it('a Node Readable with format ndjson, fed in 7-byte chunks', async () => {
      const records = ds.generateRecords({ count: 400, seed: 3, extraIds: ODD_IDS })
      const text = ds.toNDJSON(records)
      const summary = await load({ url: srv.url, input: ds.chunkedReadable(text, 7), format: 'ndjson', key: 'rs:{id}' })
      expectCleanSummary(summary, { records: records.length, commands: records.length })
      await expectHashes('rs:', ds.expectedHashes(records, 'id'))
    })

    it('a Node Readable with format csv (CRLF + BOM), fed in 5-byte chunks', async () => {
      const records = ds.generateRecords({ count: 400, seed: 4, extraIds: ODD_IDS })
      const text = ds.toCSV(records, { crlf: true, bom: true })
      const summary = await load({ url: srv.url, input: ds.chunkedReadable(text, 5), format: 'csv', key: 'rc:{id}' })
      expectCleanSummary(summary, { records: records.length, commands: records.length })
      await expectHashes('rc:', ds.expectedHashes(records, 'id'))
    })

    it('a gzipped Readable with format json and jsonPath, fed in 3-byte chunks', async () => {
      const records = ds.generateRecords({ count: 300, seed: 9 })
      const bytes = ds.gzip(ds.toJSON(records, { path: 'data.items', indent: 1 }))
      const summary = await load({ url: srv.url, input: ds.chunkedReadable(bytes, 3), format: 'json', jsonPath: 'data.items', key: 'rg:{id}' })
      expectCleanSummary(summary, { records: records.length, commands: records.length })
      await expectHashes('rg:', ds.expectedHashes(records, 'id'))
    })

    it('ttl: every key gets an expiry of at most ttl seconds', async () => {
      const records = ds.generateRecords({ count: 250, seed: 21 })
      const file = ds.writeDataset(fs.mkdtempSync(path.join(tmp, 'ttl-')), 'csv', records).file
      const summary = await load({ url: srv.url, input: file, key: 'ttl:{id}', ttl: 100 })
      expect(summary.errors).toBe(0)
      expect(summary.failures).toEqual([])
      expect(summary.records).toBe(records.length)
      expect(summary.commands).toBeGreaterThanOrEqual(records.length)
      const expected = ds.expectedHashes(records, 'id')
      const p = redis.pipeline()
      for (const k of expected.keys()) p.ttl(`ttl:${k}`)
      for (const [err, ttl] of await p.exec()) {
        expect(err).toBe(null)
        expect(ttl).toBeGreaterThan(0)
        expect(ttl).toBeLessThanOrEqual(100)
      }
      await expectHashes('ttl:', expected)
    })

    it('several commands per record: HSET u:{id} * and SADD idx {id}', async () => {
      const records = ds.generateRecords({ count: 600, seed: 8, extraIds: ODD_IDS })
      const file = ds.writeDataset(fs.mkdtempSync(path.join(tmp, 'multi-')), 'csv', records).file
      const summary = await load({ url: srv.url, input: file, commands: ['HSET mc:u:{id} *', 'SADD mc-idx {id}'] })
      expectCleanSummary(summary, { records: records.length, commands: 2 * records.length })
      const expected = ds.expectedHashes(records, 'id')
      expect((await redis.smembers('mc-idx')).sort()).toEqual([...expected.keys()].sort())
      await expectHashes('mc:u:', expected)
    })

    it('an error reply fails one record, names its line, and the others load', async () => {
      const records = [1, 2, 3, 4, 5].map((i) => ({ id: String(i), name: `n${i}`, note: i === 2 ? 'two\nlines' : `x${i}` }))
      const file = ds.writeDataset(fs.mkdtempSync(path.join(tmp, 'wt-')), 'csv', records).file
      await redis.set('f:wt:3', 'a string, not a hash')
      const summary = await load({ url: srv.url, input: file, key: 'f:wt:{id}', onError: 'skip' })
      expect(summary.records).toBe(5)
      expect(summary.errors).toBe(1)
      expect(summary.errorReplies).toBe(1)
      expect(summary.failures).toHaveLength(1)
      const failure = summary.failures[0]
      // Header on line 1; record 2 spans lines 3-4 (embedded newline), so id 3 starts on line 5.
      expect(failure.line).toBe(5)
      expect(failure.file).toBe(file)
      expect(failure.message).toMatch(/WRONGTYPE/)
      expect(await redis.get('f:wt:3')).toBe('a string, not a hash')
      const expected = ds.expectedHashes(records.filter((r) => r.id !== '3'), 'id')
      for (const [k, want] of expected) expect(await redis.hgetall(`f:wt:${k}`)).toEqual(want)
      expect((await keysWithPrefix('f:wt:')).length).toBe(5)
    })

    it('an error reply in NDJSON names the record line', async () => {
      const records = [1, 2, 3, 4].map((i) => ({ id: String(i), v: `v${i}` }))
      const file = ds.writeDataset(fs.mkdtempSync(path.join(tmp, 'wtn-')), 'ndjson', records).file
      await redis.set('f:wtn:3', 'string')
      const summary = await load({ url: srv.url, input: file, key: 'f:wtn:{id}', onError: 'skip' })
      expect(summary.errors).toBe(1)
      expect(summary.failures.map((f) => f.line)).toEqual([3])
      expect(await redis.hgetall('f:wtn:4')).toEqual({ id: '4', v: 'v4' })
    })

    it('large: 20k records with a 1 MB value, small batches and a window', async () => {
      const records = ds.generateRecords({ count: 20_000, seed: 77, bigValueBytes: 1024 * 1024, extraIds: ODD_IDS })
      const big = records.find((r) => Buffer.byteLength(r.note) >= 1024 * 1024)
      expect(big).toBeDefined()
      const { file, bytes } = ds.writeDataset(fs.mkdtempSync(path.join(tmp, 'large-')), 'csv', records)
      const summary = await load({ url: srv.url, input: file, key: 'lg:{id}', batchSize: 500, window: 3 })
      expectCleanSummary(summary, { records: records.length, commands: records.length })
      expect(summary.batches).toBeGreaterThanOrEqual(Math.ceil(records.length / 500))
      expect(summary.bytesRead).toBe(bytes)
      const expected = ds.expectedHashes(records, 'id')
      await expectHashes('lg:', expected)
      expect(await redis.hget(`lg:${big.id}`, 'note')).toBe(expected.get(big.id).note)
    })

    it('large gzipped NDJSON through a Readable', async () => {
      const records = ds.generateRecords({ count: 20_000, seed: 78, bigValueBytes: 1024 * 1024 })
      const bytes = ds.gzip(ds.toNDJSON(records))
      const summary = await load({ url: srv.url, input: Readable.from([bytes], { objectMode: false }), format: 'ndjson', key: 'lgn:{id}' })
      expectCleanSummary(summary, { records: records.length, commands: records.length })
      await expectHashes('lgn:', ds.expectedHashes(records, 'id'))
    })
  })

  describe('fidelity: positions and edge inputs', () => {
    /** Write `text` to a fresh file, pre-create string keys so their HSETs fail, load. */
    async function loadWithWrongType (name, text, prefix, wrongIds, opts = {}) {
      const file = path.join(fs.mkdtempSync(path.join(tmp, 'pos-')), name)
      fs.writeFileSync(file, text)
      for (const id of wrongIds) await redis.set(prefix + id, 'string')
      // skip: the records after an error reply still load (abort, the default, would stop)
      const summary = await load({ url: srv.url, input: file, key: `${prefix}{id}`, onError: 'skip', ...opts })
      return { file, summary }
    }

    it('CSV with CRLF and multi-line quoted fields: failures name the line a record starts on', async () => {
      const text = 'id,a\r\n1,"a\r\nb\r\nc"\r\n2,x\r\n3,"q\nq"\r\n4,y\r\n'
      const { file, summary } = await loadWithWrongType('ml.csv', text, 'pos1:', ['2', '4'])
      expect(summary.records).toBe(4)
      expect(summary.failures.map((f) => [f.file, f.line])).toEqual([[file, 5], [file, 8]])
      expect(await redis.hgetall('pos1:1')).toEqual({ id: '1', a: 'a\r\nb\r\nc' })
      expect(await redis.hgetall('pos1:3')).toEqual({ id: '3', a: 'q\nq' })
    })

    it('pretty-printed JSON: failures name the line where the record object starts', async () => {
      const text = ds.toJSON([{ id: '1' }, { id: '2', s: 'x' }, { id: '3' }], { indent: 2 })
      // [ / { / "id": "1" / } / { <- line 5
      const { summary } = await loadWithWrongType('p.json', text, 'pos2:', ['2'])
      expect(summary.failures.map((f) => f.line)).toEqual([5])
      expect(await redis.hgetall('pos2:3')).toEqual({ id: '3' })
    })

    it('gzipped CSV: failures name the line in the decompressed text', async () => {
      const file = path.join(fs.mkdtempSync(path.join(tmp, 'pos-')), 'g.csv.gz')
      fs.writeFileSync(file, ds.gzip('id\n1\n2\n3\n'))
      await redis.set('pos3:3', 'string')
      const summary = await load({ url: srv.url, input: file, key: 'pos3:{id}', onError: 'skip' })
      expect(summary.failures.map((f) => f.line)).toEqual([4])
    })

    it('gzip is detected by magic bytes, whatever the file name', async () => {
      const records = ds.generateRecords({ count: 100, seed: 31 })
      const file = path.join(fs.mkdtempSync(path.join(tmp, 'magic-')), 'export.data')
      fs.writeFileSync(file, ds.gzip(ds.toCSV(records)))
      const summary = await load({ url: srv.url, input: file, format: 'csv', key: 'mg:{id}' })
      expectCleanSummary(summary, { records: records.length, commands: records.length })
      await expectHashes('mg:', ds.expectedHashes(records, 'id'))
    })

    it('a UTF-8 BOM is stripped from TSV, JSON and NDJSON too', async () => {
      const records = ds.generateRecords({ count: 30, seed: 32, tsvSafe: true })
      const expected = ds.expectedHashes(records, 'id')
      for (const [format, text] of [
        ['tsv', '\ufeff' + ds.toTSV(records, { crlf: true })],
        ['json', '\ufeff' + ds.toJSON(records)],
        ['ndjson', '\ufeff' + ds.toNDJSON(records)]
      ]) {
        const file = path.join(fs.mkdtempSync(path.join(tmp, 'bom-')), `d.${format}`)
        fs.writeFileSync(file, text)
        const summary = await load({ url: srv.url, input: file, key: `bom-${format}:{id}` })
        expectCleanSummary(summary, { records: records.length, commands: records.length })
        await expectHashes(`bom-${format}:`, expected)
      }
    })

    it('NDJSON blank and whitespace-only lines are skipped, line numbers still count them', async () => {
      const text = '{"id":"1"}\n\n{"id":"2"}\n   \n{"id":"3"}\n\n'
      const { summary } = await loadWithWrongType('b.ndjson', text, 'pos4:', ['3'])
      expect(summary.records).toBe(3)
      expect(summary.failures.map((f) => f.line)).toEqual([5])
      expect(await redis.hgetall('pos4:2')).toEqual({ id: '2' })
    })

    it('nested fields in templates: {u.id} from NDJSON objects', async () => {
      const lines = [{ u: { id: 'a' }, v: 'x,"y"' }, { u: { id: 'b' }, v: '漢字\n' }, { u: { id: 'a' }, v: 'last' }]
      const file = path.join(fs.mkdtempSync(path.join(tmp, 'nest-')), 'n.ndjson')
      fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'))
      const summary = await load({ url: srv.url, input: file, command: 'SET nest:{u.id} {v}' })
      expectCleanSummary(summary, { records: 3, commands: 3 })
      expect(await redis.mget('nest:a', 'nest:b')).toEqual(['last', '漢字\n'])
    })

    it('a malformed row stops the load with its line; the rows before it are loaded', async () => {
      let text = 'id,a\n'
      for (let i = 1; i <= 3000; i++) text += i === 2500 ? `${i},x,extra\n` : `${i},v${i}\n`
      const file = path.join(fs.mkdtempSync(path.join(tmp, 'bad-')), 'rag.csv')
      fs.writeFileSync(file, text)
      const err = await load({ url: srv.url, input: file, key: 'bad:{id}', batchSize: 100 }).then(() => null, (e) => e)
      expect(err).not.toBe(null)
      expect(err.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(err.file).toBe(file)
      expect(err.line).toBe(2501)
      expect(err.message).toContain(`${file}:2501`)
      // the bad row counts as read and failed; nothing from it on was sent
      expect(err.summary.records).toBe(2500)
      expect(err.summary.loaded).toBe(2499)
      expect(err.summary.errors).toBe(1)
      expect(err.summary.stoppedAt).toEqual({ file, line: 2501, offset: Buffer.byteLength(text.slice(0, text.indexOf('2500,x'))) })
      expect((await keysWithPrefix('bad:')).length).toBe(2499)
      expect(await redis.hgetall('bad:2499')).toEqual({ id: '2499', a: 'v2499' })
    })
  })

  describe('fidelity: the test data itself', () => {
    // The read-back check must be able to fail: a changed value, a missing field, an extra
    // key each make it throw.
    it('expectHashes catches a wrong value, a missing field and an extra key', async () => {
      const expected = new Map([['1', { id: '1', a: 'x', b: '' }], ['2', { id: '2', a: 'y', b: 'z' }]])
      await redis.hset('chk:1', 'id', '1', 'a', 'x', 'b', '')
      await redis.hset('chk:2', 'id', '2', 'a', 'y', 'b', 'z')
      await expectHashes('chk:', expected)
      await redis.hset('chk:2', 'a', 'Y')
      await expect(expectHashes('chk:', expected)).rejects.toThrow(/chk:2: field "a" expected "y", got "Y"/)
      await redis.hset('chk:2', 'a', 'y')
      await redis.hdel('chk:1', 'b')
      await expect(expectHashes('chk:', expected)).rejects.toThrow(/chk:1: field "b"/)
      await redis.hset('chk:1', 'b', '')
      await redis.set('chk:3', 'extra')
      await expect(expectHashes('chk:', expected)).rejects.toThrow(/keys under chk:/)
    })


    // Guards against a generator that silently stops producing the hard cases.
    it('covers every nasty value and has duplicate ids', () => {
      const records = ds.generateRecords({ count: 300, extraIds: ODD_IDS })
      const values = new Set(records.flatMap((r) => Object.values(r)))
      for (const v of ds.NASTY) expect(values.has(v), JSON.stringify(v)).toBe(true)
      expect(ds.expectedHashes(records).size).toBeLessThan(records.length)
    })

    it('expectedHashes: HSET semantics, later fields win, earlier fields stay', () => {
      const m = ds.expectedHashes([{ id: '1', a: 'x', b: 'y' }, { id: '2', a: 'q' }, { id: '1', a: 'z' }])
      expect(m.get('1')).toEqual({ id: '1', a: 'z', b: 'y' })
      expect(m.get('2')).toEqual({ id: '2', a: 'q' })
    })

    it('serializers quote per RFC 4180 and nest jsonPath', () => {
      expect(ds.toCSV([{ a: 'x,y', b: 'say "hi"', c: 'l1\nl2' }], { crlf: true, bom: true }))
        .toBe('\ufeffa,b,c\r\n"x,y","say ""hi""","l1\nl2"\r\n')
      expect(ds.toTSV([{ a: 'x,y', b: 't\tb' }])).toBe('a\tb\nx,y\t"t\tb"\n')
      expect(JSON.parse(ds.toJSON([{ a: '1' }], { path: 'data.items' })).data.items).toEqual([{ a: '1' }])
      expect(JSON.parse(ds.toJSON([{ a: '😀é' }], { escapeUnicode: true }))).toEqual([{ a: '😀é' }])
      expect(ds.toJSON([{ a: '😀' }], { escapeUnicode: true })).toBe('[{"a":"\\ud83d\\ude00"}]\n')
    })
  })
}

module.exports = { fidelitySuite }
