'use strict'
/* global describe, it, expect, beforeAll */

// Parquet input (issue 24 items 1-3): every codec and both data page versions, many pages per
// column chunk and the encodings Arrow writes, only the used columns read, `*` in schema order,
// {$} with exact numbers, vectors from lists of floats, a folder of part files, the library.
// Fixtures: written at test time by DuckDB from rows generated here, or committed files
// written by Apache Arrow's C++ writer with the texts Python made for them
// (test/fixtures/parquet/make-arrow.py). Never by the reader under test.
const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { prng } = require('./helpers/prng')
const { writeRows, writeQuery, chunksOf, sql } = require('./helpers/parquet')
const { load, JsonNumber } = require('..')
const { ParquetFile } = require('../lib/read/parquet/reader')
const { fileBuffer } = require('../lib/read/parquet/file-buffer')
const { headOf } = require('../lib/read/parquet/row')
const { scaledMs } = require('./helpers/wait')

let server
let redis
let dir
useServer('pipeload-parquet-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

const FIXTURES = path.join(__dirname, 'fixtures', 'parquet')

/** The values of `keys`, in order (MGET in slices). */
async function values (keys) {
  const out = []
  for (let i = 0; i < keys.length; i += 5000) out.push(...await redis.mget(keys.slice(i, i + 5000)))
  return out
}

describe('codecs, page versions, pages and encodings', () => {
  const ROWS = 12000
  const r = prng(7)
  const rows = Array.from({ length: ROWS }, (_, i) => ({
    id: String(i),
    s: r.pick(['alpha', 'beta', 'gamma', 'δέλτα']), // few values: dictionary pages
    v: String(r.int(2 ** 31) / 1024 - 1e6), // doubles whose text JS writes as given
    t: `row ${i} ` + 'x'.repeat(r.int(40))
  }))
  const columns = [['id', 'BIGINT'], ['s', 'VARCHAR'], ['v', 'DOUBLE'], ['t', 'VARCHAR']]

  for (const codec of ['uncompressed', 'snappy', 'gzip', 'zstd', 'lz4', 'brotli']) {
    for (const version of ['V1', 'V2']) {
      it(`${codec}, PARQUET_VERSION ${version}: every row as generated`, async () => {
        const file = path.join(dir, `codec-${codec}-${version}.parquet`)
        await writeRows(file, columns, rows, `COMPRESSION ${codec}, ROW_GROUP_SIZE 4096, PARQUET_VERSION ${version}`)
        const chunks = await chunksOf(file)
        expect(new Set(chunks.map(c => c.rowGroup)).size).toBe(3)
        expect(chunks[0].codec).toBe(codec === 'lz4' ? 'LZ4_RAW' : codec.toUpperCase())
        const prefix = `${codec}${version}:`
        const res = await runCli(['import', file, '-u', server.url, '-c', `SET ${prefix}{id} {s}|{v}|{t}`])
        expect(res.code, res.stderr).toBe(0)
        expect(await values(rows.map(x => prefix + x.id))).toEqual(rows.map(x => `${x.s}|${x.v}|${x.t}`))
      }, scaledMs(60000))
    }
  }

  // Arrow's writer: data pages v2 (LZ4_RAW) and v1 (snappy), 1-13 pages per column chunk,
  // DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT and
  // dictionary encodings, INT96 timestamps, FLOAT16, 64-bit extremes, a decimal in
  // FIXED_LEN_BYTE_ARRAY, lists with nulls.
  const expected = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'arrow.expected.json'), 'utf8'))
  for (const name of ['arrow-v1', 'arrow-v2']) {
    it(`${name}.parquet (Arrow C++): HSET * gives the texts Python made for it`, async () => {
      const res = await runCli(['import', path.join(FIXTURES, `${name}.parquet`), '-u', server.url, '--key', `${name}:{id}`])
      expect(res.code, res.stderr).toBe(0)
      const pipe = redis.pipeline()
      for (const row of expected.rows) pipe.hgetall(`${name}:${row[0]}`)
      const got = (await pipe.exec()).map(([err, h]) => { if (err) throw err; return h })
      expect(got).toEqual(expected.rows.map(row => Object.fromEntries(expected.columns.map((c, i) => [c, row[i]]).filter(([, v]) => v !== null))))
    }, scaledMs(60000))

    // The reader's text rows for `*` (each value's bytes: the column name's bulk string, then
    // the value's), over `label`, whose dictionary overflows into plain pages: batches of rows
    // from the dictionary and the plain pages, a dictionary entry copied with its name.
    it(`${name}.parquet (Arrow C++): text rows read for *, each value after its column name`, async () => {
      const pf = await ParquetFile.open({ name, buffer: await fileBuffer(path.join(FIXTURES, `${name}.parquet`)) })
      const columns = ['id', 'label', 'half']
      const got = []
      try {
        for await (const b of pf.batches(columns, { text: true, names: true, batchRecords: 96 })) {
          for (const row of b.records) {
            got.push(row.cols.map(c => {
              const s = c.spans[2 * row.r]
              const e = c.spans[2 * row.r + 1]
              return c.buf.toString('latin1', headOf(s, e) - c.pre, e + 2)
            }).join(''))
          }
        }
      } finally {
        await pf.close()
      }
      const bulk = t => `$${Buffer.byteLength(t)}\r\n${t}\r\n`
      const at = c => expected.columns.indexOf(c)
      expect(got).toEqual(expected.rows.map(row => columns.map(c => bulk(c) + bulk(row[at(c)])).join('')))
    })

    // The flat columns without nulls, named: the text-row path (lib/read/parquet/text.js), over
    // Arrow's pages: many per chunk, v1 or v2, the delta and byte-stream-split encodings, and
    // `label`'s dictionary that overflows into plain pages (a batch of rows from both).
    it(`${name}.parquet (Arrow C++): its flat columns named in a template, as text rows`, async () => {
      const flat = ['id', 'big', 'name', 'd', 'ts96', 'dec', 'word', 'half', 'label']
      const res = await runCli(['import', path.join(FIXTURES, `${name}.parquet`), '-u', server.url, '-c', `HSET ${name}-flat:{id} ${flat.map(c => `${c} {${c}}`).join(' ')}`, '-c', `SET ${name}-flat:{id}:w {label}/{dec}/{d}`])
      expect(res.code, res.stderr).toBe(0)
      const at = c => expected.columns.indexOf(c)
      const pipe = redis.pipeline()
      for (const row of expected.rows) pipe.hgetall(`${name}-flat:${row[0]}`).get(`${name}-flat:${row[0]}:w`)
      const got = (await pipe.exec()).map(([err, v]) => { if (err) throw err; return v })
      expect(got).toEqual(expected.rows.flatMap(row => [
        Object.fromEntries(flat.map(c => [c, row[at(c)]])),
        `${row[at('label')]}/${row[at('dec')]}/${row[at('d')]}`
      ]))
    }, scaledMs(60000))
  }
})

describe('a row group read from memory', () => {
  // Its batches come through promises alone; the reader gives the event loop a turn now and
  // then, or callbacks (a written batch's memory given back, progress, Ctrl-C) wait for the
  // whole group: a 3M-row dry run then took a fresh output buffer for 443 of its 603 batches.
  it('leaves turns of the event loop between its batches', async () => {
    const file = path.join(dir, 'one-group.parquet')
    await writeQuery(file, 'SELECT i AS id, i * 2 AS v FROM range(40000) t(i)', 'COMPRESSION zstd, ROW_GROUP_SIZE 100000')
    const pf = await ParquetFile.open({ name: file, buffer: await fileBuffer(file) })
    let turns = 0
    let running = true
    const spin = () => { turns++; if (running) setImmediate(spin) }
    const seen = []
    try {
      for (const text of [true, false]) {
        let first = null
        let batches = 0
        for await (const b of pf.batches(['id', 'v'], { text })) {
          if (first === null) {
            first = turns
            setImmediate(spin)
          }
          batches++
        }
        seen.push({ text, batches, turns: turns - first })
      }
    } finally {
      running = false
      await pf.close()
    }
    for (const s of seen) {
      expect(s.batches, JSON.stringify(s)).toBeGreaterThanOrEqual(16)
      expect(s.turns, JSON.stringify(s)).toBeGreaterThanOrEqual(Math.floor((s.batches - 1) / 8))
    }
  })
})

describe('only the columns the templates use are read', () => {
  let file
  beforeAll(async () => {
    file = path.join(dir, 'wide.parquet')
    // `payload`: ~1.3 MB of incompressible bytes per row group, never used by the template.
    await writeQuery(file, "SELECT i AS id, 'name ' || i AS name, sha256(i::VARCHAR) || sha256((i * 7)::VARCHAR) AS payload, i * 2 AS twice FROM range(30000) r(i)",
      'COMPRESSION uncompressed, ROW_GROUP_SIZE 10240')
  })

  /** The byte ranges a ParquetFile fetches while reading `columns` of every row group. */
  async function rangesRead (columns) {
    const buffer = await fileBuffer(file)
    const ranges = []
    const counting = { byteLength: buffer.byteLength, slice: (s, e) => { ranges.push([s, e ?? buffer.byteLength]); return buffer.slice(s, e) } }
    const pf = await ParquetFile.open({ name: file, buffer: counting })
    const footer = ranges.length
    let rows = 0
    for await (const b of pf.batches(pf.projection({ all: false, fields: columns.map(name => ({ name, alt: null, forced: false, optional: false, template: 't' })) }))) rows += b.records.length
    await buffer.close()
    return { ranges: ranges.slice(footer), rows }
  }

  it('progress counts through the file by row groups, to its size, though unused columns are not read', async () => {
    const seen = []
    await load({ input: file, dryRun: 'resp', output: fs.createWriteStream('/dev/null'), command: 'SET p:{id} {name}', batchSize: 1000, progressInterval: 1, onProgress: p => seen.push([p.bytesRead, p.totalBytes]) })
    const size = fs.statSync(file).size
    expect(seen.length).toBeGreaterThan(3)
    expect(seen.every(([, total]) => total === size)).toBe(true)
    expect(seen.map(([b]) => b)).toEqual(seen.map(([b]) => b).sort((a, b) => a - b))
    expect(seen.at(-1)[0]).toBe(size)
    const chunks = await chunksOf(file)
    const firstGroupEnd = Math.max(...chunks.filter(c => c.rowGroup === 0).map(c => c.end))
    expect(seen.some(([b]) => b > 0 && b <= firstGroupEnd)).toBe(true) // within the first row group
  })

  it('no byte of an unused column chunk is fetched (chunk ranges from DuckDB\'s parquet_metadata)', async () => {
    const chunks = await chunksOf(file)
    const { ranges, rows } = await rangesRead(['id', 'name'])
    expect(rows).toBe(30000)
    const overlaps = (c, [s, e]) => s < c.end && e > c.start
    for (const c of chunks.filter(c => c.column === 'payload' || c.column === 'twice')) {
      expect(ranges.filter(range => overlaps(c, range)), `${c.column} of row group ${c.rowGroup}`).toEqual([])
    }
    for (const c of chunks.filter(c => c.column === 'id' || c.column === 'name')) {
      expect(ranges.some(range => overlaps(c, range)), `${c.column} of row group ${c.rowGroup}`).toBe(true)
    }
    const read = ranges.reduce((n, [s, e]) => n + e - s, 0)
    const payload = chunks.filter(c => c.column === 'payload').reduce((n, c) => n + c.end - c.start, 0)
    expect(read).toBeLessThan(fs.statSync(file).size - payload)
  })

  it('a struct field or a vector reads its top-level column; a missing one is no column', async () => {
    const pf = await ParquetFile.open({ name: file, buffer: await fileBuffer(file) })
    const field = (name, alt = null) => ({ all: false, fields: [{ name, alt, forced: false, optional: false, template: 'SET k {x}' }] })
    expect(pf.projection(field('twice'))).toEqual(['twice'])
    expect(pf.projection(null)).toEqual(['id', 'name', 'payload', 'twice'])
    expect(() => pf.projection(field('nope'))).toThrow(/uses \{nope\}, which is not a column of .*wide\.parquet \(columns are: id, name, payload, twice\)/)
    await pf.close()
  })
})

describe('templates over Parquet rows', () => {
  let file
  beforeAll(async () => {
    file = path.join(dir, 'feat.parquet')
    await writeQuery(file, `SELECT i AS id, 'u' || i AS "Hourly Wage ($)", i * 1.25 AS score, CAST(i AS BIGINT) * 1000000007 AS big,
      [i + 0.5, '-0'::FLOAT, 1e-45, 0.1]::FLOAT[] AS emb, [0.1, i]::FLOAT[2] AS fixed, {'a': i, 'b': {'c': 'x' || i}} AS st,
      CASE WHEN i % 4 = 0 THEN NULL ELSE i END AS maybe
      FROM range(5000) r(i)`, 'COMPRESSION zstd, ROW_GROUP_SIZE 2048')
  })

  it('* writes the top-level columns in schema order, nulls left out; odd column names as fields', async () => {
    const res = await runCli(['import', file, '--dry-run', 'text', '-c', 'HSET f:{id} *', '-c', 'SET w:{id} {Hourly Wage ($)}'])
    expect(res.code, res.stderr).toBe(0)
    const lines = res.stdout.trim().split('\n')
    expect(lines[0]).toBe('HSET f:0 id 0 "Hourly Wage ($)" u0 score 0.00 big 0 emb [0.5,-0,1e-45,0.1] fixed [0.1,0] st "{\\"a\\":0,\\"b\\":{\\"c\\":\\"x0\\"}}"')
    expect(lines[1]).toBe('SET w:0 u0')
    expect(lines[2]).toBe('HSET f:1 id 1 "Hourly Wage ($)" u1 score 1.25 big 1000000007 emb [1.5,-0,1e-45,0.1] fixed [0.1,1] st "{\\"a\\":1,\\"b\\":{\\"c\\":\\"x1\\"}}" maybe 1')
    expect(lines.length).toBe(10000)
  })

  it('{$} is the row as JSON with numbers as their text; {emb:f32} the floats\' bytes', async () => {
    const summary = await load({ input: file, url: server.url, commands: ['SET j:{id} {$}', 'SET e:{id} {emb:f32}', 'SET x:{id} {fixed:f32:2}'] })
    expect(summary.loaded).toBe(5000)
    for (const i of [0, 1, 2047, 2048, 4999]) {
      const json = `{"id":${i},"Hourly Wage ($)":"u${i}","score":${(i * 1.25).toFixed(2)},"big":${BigInt(i) * 1000000007n},` +
        `"emb":[${i + 0.5},-0,1e-45,0.1],"fixed":[0.1,${i}],"st":{"a":${i},"b":{"c":"x${i}"}},"maybe":${i % 4 === 0 ? 'null' : i}}`
      expect(await redis.get(`j:${i}`)).toBe(json)
      expect(await redis.getBuffer(`e:${i}`)).toEqual(Buffer.from(new Float32Array([i + 0.5, -0, 1e-45, 0.1]).buffer))
      expect(await redis.getBuffer(`x:${i}`)).toEqual(Buffer.from(new Float32Array([0.1, i]).buffer))
    }
  })

  it('--map gets the row as values: numbers, JsonNumbers for decimals, strings, arrays, objects, null', async () => {
    const seen = []
    await load({ input: file, dryRun: 'text', output: fs.createWriteStream('/dev/null'), map: rec => { if (rec.id === 4 || rec.id === 5) seen.push(rec); return [] } })
    expect(seen.map(r => ({ ...Object.fromEntries(Object.entries(r)), score: String(r.score) }))).toEqual([
      { id: 4, 'Hourly Wage ($)': 'u4', score: '5.00', big: 4000000028, emb: [4.5, -0, 1e-45, 0.1], fixed: [0.1, 4], st: { a: 4, b: { c: 'x4' } }, maybe: null },
      { id: 5, 'Hourly Wage ($)': 'u5', score: '6.25', big: 5000000035, emb: [5.5, -0, 1e-45, 0.1], fixed: [0.1, 5], st: { a: 5, b: { c: 'x5' } }, maybe: 5 }
    ].map(r => ({ ...r, emb: r.emb.map(x => Object.is(x, -0) ? expect.objectContaining({ text: '-0' }) : x) })))
    expect(seen[0].score).toBeInstanceOf(JsonNumber)
  })

  it('{st.b.c} reads a struct field; a field the struct lacks is refused, naming its fields', async () => {
    const ok = await runCli(['import', file, '--dry-run', 'text', '-c', 'SET s:{id} {st.b.c}'])
    expect(ok.stdout.split('\n')[3]).toBe('SET s:3 x3')
    const bad = await runCli(['import', file, '-u', server.url, '-c', 'SET s:{id} {st.z}'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/uses \{st\.z\}, which is not a column of .*feat\.parquet \(the fields of st are: a, b\)/)
  })
})

describe('several Parquet files', () => {
  it('a folder of part-*.parquet files (as Spark and DuckDB write) loads every part, in name order', async () => {
    const parts = path.join(dir, 'parts')
    fs.mkdirSync(parts)
    await sql(`COPY (SELECT i AS id, i % 3 AS part FROM range(9000) r(i)) TO '${parts}' (FORMAT parquet, PARTITION_BY (part), FILENAME_PATTERN 'part-{i}')`)
    const files = fs.readdirSync(parts, { recursive: true }).filter(f => f.endsWith('.parquet'))
    expect(files.length).toBe(3)
    const res = await runCli(['import', path.join(parts, '*', 'part-*.parquet'), '-u', server.url, '-c', 'INCR parts:{id}', '--json'])
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).records).toBe(9000)
    const got = await values(Array.from({ length: 9000 }, (_, i) => `parts:${i}`))
    expect(got.every(v => v === '1')).toBe(true)
  })

  it('a file named without .parquet is known by its magic bytes; --format parquet names it too', async () => {
    const file = path.join(dir, 'export.bin')
    await writeQuery(file, 'SELECT 7 AS id')
    const res = await runCli(['import', file, '--dry-run', 'text', '-c', 'SET m:{id} 1'])
    expect(res.stdout).toBe('SET m:7 1\n')
    const named = await runCli(['import', file, '--format', 'parquet', '--dry-run', 'text', '-c', 'SET m:{id} 1'])
    expect(named.stdout).toBe('SET m:7 1\n')
  })
})
