'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// The CSV fast path (lib/read/csv/fast.js) against csv-parse (lib/read/csv/core.js):
// the same bytes, read both ways, must give the same records, lines, offsets, raw texts,
// rejected records and errors. Inputs are generated: well-formed rows of every field kind,
// then broken ones (stray and unclosed quotes, ragged rows, lone CR, mixed line ends,
// invalid UTF-8, records over maxRecordSize), fed whole and in random small chunks, with
// and without a header, in abort and skip mode. Agreeing is not enough (both paths once
// kept a CRLF's CR in an LF file's last field): fault-free inputs must also give the rows
// as generated.
//
// FUZZ_SEED=<n> FUZZ_CASES=<n> npx vitest run test/csv-fast.test.js explores more.

const { Readable } = require('node:stream')
const { prng } = require('./helpers/prng')
const { openReader, Rejected } = require('../lib/read/reader')
const { CsvRow } = require('../lib/read/csv/row')
const { createMapper } = require('../lib/encode/mapper')
const { ByteWriter } = require('../lib/encode/writer')
const { respCommands } = require('./helpers/resp-model')
const { scaledMs } = require('./helpers/wait')

const SEED = Number(process.env.FUZZ_SEED || 20261122)
const CASES = Number(process.env.FUZZ_CASES || 400)

const PLAIN = ['', 'a', '42', '007', 'x y', 'São Paulo', '東京', '👩‍💻', ' lead', 'trail ', '\u00a0', 'a\u0000b', '{id}', '*']

/** A field: its text in the file and the value a reader must give for it. */
function field (r, d) {
  const v = r.pick(PLAIN)
  if (r.chance(0.6)) return { text: v, value: v }
  const inner = r.pick([v, `say "${v}"`, `a${d}b`, 'line\nbreak', 'crlf\r\nbreak', '""', `"${d}"`, 'cr\ronly', 'ends\r'])
  return { text: '"' + inner.replace(/"/g, '""') + '"', value: inner }
}

/**
 * Bytes of a random CSV, with a few deliberate faults when `faults`. Without faults,
 * `expected` is what a reader must give, worked out here from the rows as generated,
 * not by either reader: both once agreed on keeping a CRLF's CR in the last field.
 * `loneCr`: a lone CR ends a line (eol '\r', classic Mac), which is bad input.
 */
function generate (r, { d, header, eol, faults }) {
  const cols = 1 + r.int(5)
  const lines = [] // { text, values } (values null: a header or an empty line)
  if (header) lines.push({ text: Array.from({ length: cols }, (_, i) => r.chance(0.2) ? `"c${i}"` : `c${i}`).join(d), values: null })
  const rows = r.int(30)
  for (let i = 0; i < rows; i++) {
    if (r.chance(0.05)) { lines.push({ text: '', values: null }); continue }
    let n = cols
    if (faults && r.chance(0.05)) n += r.chance(0.5) ? 1 : -1
    const fields = Array.from({ length: Math.max(n, 1) }, () => field(r, d))
    let line = fields.map(f => f.text).join(d)
    if (faults && r.chance(0.08)) {
      const at = r.int(line.length + 1)
      const junk = r.pick(['"', 'x"y', '\r', '\n', '\r\n', Buffer.from([0xff]).toString('latin1'), '\uFFFD'])
      line = line.slice(0, at) + junk + line.slice(at)
    }
    // A single empty unquoted field makes an empty line, which readers skip.
    lines.push({ text: line, values: line === '' ? null : fields.map(f => f.value) })
  }
  const sep = () => eol === 'mixed' ? r.pick(['\n', '\r\n']) : eol
  let text = ''
  let loneCr = false
  const expected = []
  for (let i = 0; i < lines.length; i++) {
    const { text: line, values } = lines[i]
    if (values !== null) {
      const at = Buffer.byteLength(text)
      const lineNo = 1 + (text.match(/\n/g) || []).length
      expected.push({ value: values, line: lineNo, offset: at, raw: line })
    }
    const end = i < lines.length - 1 || r.chance(0.7) ? sep() : ''
    if (end === '\r') loneCr = true
    text += line + end
  }
  // latin1 markers become real invalid bytes
  const buf = Buffer.from(text, 'utf8')
  const out = []
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0xc3 && buf[i + 1] === 0xbf && faults && text.includes('\u00ff')) { out.push(0xff); i++ } else out.push(buf[i])
  }
  return { buf: Buffer.from(out), expected: faults ? null : expected, loneCr }
}

/**
 * The independent check of a fault-free input: the generated rows exactly, or, when a
 * lone CR ends a line, never a record read past it as if it were a line end.
 */
function expectGenerated (out, gen, options, context) {
  if (gen.expected === null || options.maxRecordSize < 64 * 1024 * 1024) return 0
  if (gen.loneCr) {
    const rejected = out.records.filter(x => x.value.rejected)
    expect(out.error !== null || rejected.length > 0, context).toBe(true)
    for (const e of [out.error, ...rejected.map(x => ({ code: x.value.rejected, message: x.value.message }))].filter(Boolean)) {
      expect(e.code, context).toBe('PIPELOAD_INPUT_INVALID')
    }
    return 1
  }
  expect(out.error, context).toBe(null)
  expect(out.records.map(x => ({ value: x.value, line: x.line, offset: x.offset, raw: x.raw })), context)
    .toEqual(gen.expected.map(x => ({ ...x, raw: options.raw ? x.raw : undefined })))
  return 1
}

function chunksOf (buf, r) {
  const size = r.pick([1, 2, 3, 7, 64, buf.length || 1])
  const out = []
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size))
  return out
}

/** Everything a reader yields, as plain data, and how it ended. */
async function readAll (buf, chunks, options) {
  const reader = openReader({ name: 'in.csv', stream: Readable.from(chunks.map(c => Buffer.from(c))) }, { format: 'csv', ...options })
  const out = { records: [], error: null, columns: null }
  try {
    for await (const b of reader) {
      for (let i = 0; i < b.records.length; i++) {
        const rec = b.records[i]
        const value = rec instanceof Rejected
          ? { rejected: rec.code, message: rec.message, raw: rec.raw }
          : rec instanceof CsvRow ? rec.toArray() : rec
        out.records.push({ value, line: b.lines[i], offset: b.offsets[i], raw: b.raws ? b.raws[i] : undefined })
      }
    }
  } catch (err) {
    out.error = { code: err.code, message: err.message, line: err.line, offset: err.offset, raw: err.raw }
  }
  out.columns = reader.columns
  return out
}

/**
 * A thrown quote error's `raw` is the text from the record's start to the end of the line,
 * as far as received when csv-parse stopped: with small chunks that depends on where the
 * chunks happened to end, and the fast path hands a record over later, with more bytes.
 * Compared as far as both reach (a cut character shows as U+FFFD at the end).
 */
function sameErrorText (a, b) {
  if (!a.error || !b.error || typeof a.error.raw !== 'string' || typeof b.error.raw !== 'string') return
  const trim = s => s.replace(/\uFFFD$/, '')
  const n = Math.min(trim(a.error.raw).length, trim(b.error.raw).length)
  if (a.error.raw.slice(0, n) === b.error.raw.slice(0, n)) a.error.raw = b.error.raw
}

describe('CSV fast path agrees with csv-parse', () => {
  it(`${CASES} generated inputs (seed ${SEED}), abort and skip, whole and chunked`, async () => {
    const r = prng(SEED)
    let fastRecords = 0
    let checked = 0
    for (let c = 0; c < CASES; c++) {
      const d = r.pick([',', ',', '\t', ';', '|'])
      const header = r.chance(0.7)
      const eol = r.pick(['\n', '\r\n', '\n', 'mixed', '\r'])
      const faults = r.chance(0.5)
      const gen = generate(r, { d, header, eol, faults })
      const buf = gen.buf
      const chunks = chunksOf(buf, r)
      const options = {
        delimiter: d,
        header,
        onError: r.pick(['abort', 'skip']),
        raw: r.chance(0.5),
        maxRecordSize: r.pick([64 * 1024 * 1024, 40, 200])
      }
      const slow = await readAll(buf, chunks, options)
      const fast = await readAll(buf, chunks, { ...options, rows: true })
      const context = `case ${c}: ${JSON.stringify(options)} chunks of ${chunks[0]?.length} input ${JSON.stringify(buf.toString('latin1'))}`
      sameErrorText(fast, slow)
      expect(fast, context).toEqual(slow)
      checked += expectGenerated(slow, gen, options, context)
      fastRecords += fast.records.length
    }
    expect(fastRecords).toBeGreaterThan(CASES) // the cases are not all empty
    expect(checked).toBeGreaterThan(CASES / 20) // and many are checked against the generator
  }, scaledMs(120000))

  it('hands csv-parse only the record it must read, then goes on with CsvRows', async () => {
    // Before, the first hard record left the rest of the input to csv-parse: 3x slower, and
    // after a ragged row ~40 µs a record (csv-parse took that row's length as the norm and
    // built an error object for every good record after it: 1M rows 1.3 s -> 43 s).
    const buf = Buffer.from('id,v\n1,a\n2,"b ""q"""\n3,x"y\n4,d\n5\n6,"e\nf"\n7,"g\r"\n8,h\n')
    for (const chunks of [[buf], [...buf].map(c => Buffer.from([c]))]) {
      const reader = openReader({ name: 'in.csv', stream: Readable.from(chunks) }, { format: 'csv', rows: true, onError: 'skip' })
      const got = []
      for await (const b of reader) {
        b.records.forEach((rec, i) => got.push([b.lines[i], rec instanceof CsvRow ? 'row' : rec instanceof Rejected ? 'rejected' : 'array']))
      }
      expect(got).toEqual([[2, 'row'], [3, 'row'], [4, 'rejected'], [5, 'row'], [6, 'rejected'], [7, 'row'], [9, 'row'], [10, 'row']])
    }
  })

  it('reads a 3 MB quoted field fed in 4 KB chunks (scanned again only as it doubles)', async () => {
    const big = 'ab""c\n'.repeat(512 * 1024)
    const buf = Buffer.from(`id,v\n1,"${big}"\n2,x\n`)
    const chunks = []
    for (let i = 0; i < buf.length; i += 4096) chunks.push(buf.subarray(i, i + 4096))
    const out = await readAll(buf, chunks, { rows: true })
    expect(out.error).toBe(null)
    expect(out.records.map(x => x.value[1].length)).toEqual([big.length - 512 * 1024, 1])
    expect(out.records.map(x => x.line)).toEqual([2, 2 + 512 * 1024 + 1])
  })

  it('keeps the expected field count when csv-parse takes over (abort mode)', async () => {
    const buf = Buffer.from('id,v\n1,a\n2,"b\r"\n3,c,extra\n')
    const out = await readAll(buf, [buf], { rows: true })
    expect(out.records.map(x => x.value)).toEqual([['1', 'a'], ['2', 'b\r']])
    expect(out.error).toMatchObject({ code: 'PIPELOAD_INPUT_INVALID', line: 4 })
    expect(out.error.message).toBe('in.csv:4: Invalid Record Length: the header has 2 fields, got 3')
  })
})

describe('CsvRow in the mapper', () => {
  const row = async (text, header = true) => {
    const reader = openReader({ name: 'in.csv', stream: Readable.from([Buffer.from(text)]) }, { format: 'csv', rows: true, header })
    const records = []
    for await (const b of reader) records.push(...b.records)
    return { records, columns: reader.columns }
  }
  const encode = (mapper, rec) => {
    const w = new ByteWriter()
    mapper.write(rec, w)
    return w.take().toString()
  }

  it('writes the RESP the templates say from a CsvRow, the same as from its string array', async () => {
    const { records, columns } = await row('id,name,note\n7,"Zoë ""Z""",\n8,plain,"multi\nline"\n')
    const templates = ['HSET user:{id} *', 'SET "k:{id}:{name}" {note}', 'RPUSH list {name}']
    const mapper = createMapper({ templates, ttl: 60, shape: { columns, file: 'in.csv' } })
    // By hand, from the file: "" inside quotes is one ", a quoted newline is kept.
    const want = [
      [['HSET', 'user:7', 'id', '7', 'name', 'Zoë "Z"', 'note', ''], ['SET', 'k:7:Zoë "Z"', ''], ['RPUSH', 'list', 'Zoë "Z"'], ['EXPIRE', 'user:7', '60']],
      [['HSET', 'user:8', 'id', '8', 'name', 'plain', 'note', 'multi\nline'], ['SET', 'k:8:plain', 'multi\nline'], ['RPUSH', 'list', 'plain'], ['EXPIRE', 'user:8', '60']]
    ]
    expect(records).toHaveLength(2)
    records.forEach((rec, i) => {
      expect(rec).toBeInstanceOf(CsvRow)
      expect(encode(mapper, rec)).toBe(respCommands(want[i]).toString())
      expect(encode(mapper, rec.toArray())).toBe(respCommands(want[i]).toString())
    })
  })

  it('a headerless {n} beyond the row is a missing field', async () => {
    const { records } = await row('a,b\n', false)
    const mapper = createMapper({ templates: ['SET k:{0} {5}'], shape: { columns: null, file: 'in.csv' } })
    expect(() => encode(mapper, records[0])).toThrow('field "5" is missing')
  })
})

describe('NDJSON fast path agrees with JSON.parse', () => {
  const VALUES = ['"a"', '""', '"Zoë 東京 👩‍💻"', '"tab\there"', '"esc\\"q"', '"\\u00e9"', '0', '-0', '7', '-12', '007', '1.5', '1.50', '1.0',
    '0.000001', '0.0000001', '-0.5', '123456789012345', '1234567890123456', '9007199254740993', '1e5', '1E-3', '2.5e+3',
    'true', 'false', 'null', '[1,2]', '{"x":1}', 'tru', 'nul', '1.', '.5', '+1', '"\u0001"', '"a']
  const KEYS = ['id', 'name', 'a.b', '0', '12', '__proto__', 'é', '', 'id']

  function line (r) {
    const n = r.int(5)
    const ws = () => r.pick(['', '', ' ', '\t', '  '])
    const number = () => (r.chance(0.5) ? '-' : '') + (r.int(2e6) / 10 ** r.int(12)).toFixed(r.int(12))
    const value = () => r.chance(0.3) ? number() : r.pick(VALUES)
    const pairs = Array.from({ length: n }, () => `${ws()}"${r.pick(KEYS)}"${ws()}:${ws()}${value()}${ws()}`)
    let text = `${ws()}{${pairs.join(',')}${n === 0 ? ws() : ''}}${ws()}`
    if (r.chance(0.05)) text = r.pick(['', '   ', '[1]', '{', '{"a":1,}', '{"a":1}x', '{"a" 1}', '"s"', '{"a":1}{'])
    return text
  }

  const semantic = rec => rec instanceof Rejected ? { rejected: rec.message } : rec && rec.toObject ? rec.toObject() : rec
  const applyHset = buf => { // a RESP HSET's field/value pairs applied in order, as Redis does
    const parts = buf.toString().split('\r\n')
    const out = new Map()
    for (let i = 6; i + 3 < parts.length; i += 4) out.set(parts[i], parts[i + 2])
    return [parts.slice(0, 4).join('|'), [...out.entries()].sort()]
  }

  it(`${CASES} generated files: same values, lines, offsets, raws, and the same RESP`, async () => {
    const r = prng(SEED + 1)
    const { JsonRow } = require('../lib/read/json/row')
    let fast = 0
    for (let c = 0; c < CASES; c++) {
      const lines = Array.from({ length: 1 + r.int(12) }, () => line(r))
      const buf = Buffer.from(lines.join(r.pick(['\n', '\r\n'])) + (r.chance(0.5) ? '\n' : ''))
      const chunks = chunksOf(buf, r)
      const options = { format: 'ndjson', onError: 'skip', raw: r.chance(0.5) }
      const read = async rows => {
        const reader = openReader({ name: 'in.ndjson', stream: Readable.from(chunks.map(x => Buffer.from(x))) }, { ...options, rows })
        const out = []
        for await (const b of reader) b.records.forEach((rec, i) => out.push({ rec, line: b.lines[i], offset: b.offsets[i], raw: b.raws && b.raws[i] }))
        return out
      }
      const slow = await read(false)
      const quick = await read(true)
      const context = `case ${c}: ${JSON.stringify(buf.toString())}`
      expect(quick.map(x => ({ ...x, rec: semantic(x.rec) })), context).toEqual(slow.map(x => ({ ...x, rec: semantic(x.rec) })))
      for (const template of ['HSET user:{id} *', 'SET "k:{id}:{name}" {name}']) {
        const mapper = createMapper({ templates: [template], shape: { file: 'in.ndjson' } })
        quick.forEach((x, i) => {
          if (!(x.rec instanceof JsonRow)) return
          fast++
          const enc = rec => {
            const w = new ByteWriter()
            try { mapper.write(rec, w) } catch (err) { return err.message }
            return template.startsWith('HSET') ? applyHset(w.take()) : w.take().toString()
          }
          expect(enc(x.rec), `${context} line ${x.line} ${template}`).toEqual(enc(slow[i].rec))
        })
      }
    }
    expect(fast).toBeGreaterThan(CASES)
  }, scaledMs(120000))
})
