'use strict'
/* global describe, it, expect, beforeAll */

// The parallel parse (--workers n ≥ 2, lib/threads/chunks.js) against the sequential path
// (--workers 0): for every input the fidelity suite uses, and for bad inputs in both error
// modes, the dry-run bytes, the summary's counts and failures, the error and the rejects
// file are the same, for 1, 2 and 4 workers and chunk sizes down to a byte.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { PassThrough, Readable } = require('node:stream')
const ds = require('./helpers/datasets')
const { load } = require('../lib')
const { useServer } = require('./helpers/redis-server')
const { dryRunIntoMemory } = require('./helpers/dry-run')
const { scaledMs } = require('./helpers/wait')

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-parallel-'))

/** A dry run into memory: the bytes written, and the summary (or the error, with its summary). */
async function dryRun (options) {
  const { bytes, summary, error } = await dryRunIntoMemory(options)
  const rejects = options.rejects && fs.existsSync(options.rejects) ? fs.readFileSync(options.rejects, 'utf8') : null
  return { bytes, summary: summary && comparable(summary), workers: summary?.workers ?? null, error: error && { code: error.code, message: error.message, line: error.line, offset: error.offset }, rejects }
}

/**
 * A summary without what differs from run to run (times, memory, how the bytes were
 * batched) nor how many threads parsed it (`workers`, checked on its own; a file's
 * `fallback` to one thread: test/parallel-fallback.test.js).
 */
function comparable (s) {
  const { durationMs, recordsPerSec, peakRssBytes, batches, workers, ...rest } = s
  if (rest.rejects) rest.rejects = { ...rest.rejects, file: '(each run its own)' }
  rest.files = rest.files.map(({ fallback, ...f }) => f)
  return rest
}

/** Each options set with these workers and chunk sizes gives what workers 0 gives. */
async function expectSameAsSequential (options, runs, label) {
  const input = () => typeof options.input === 'function' ? options.input() : options.input
  const rejectsFile = tag => options.rejects ? path.join(tmp, `${label}-${tag}.rejects`.replace(/[^\w.-]/g, '_')) : undefined
  const base = await dryRun({ ...options, input: input(), rejects: rejectsFile('0'), workers: 0 })
  if (base.workers !== null) expect(base.workers, label).toBe(0)
  for (const [workers, chunkSize] of runs) {
    const tag = `${workers}-${chunkSize}`
    const got = await dryRun({ ...options, input: input(), rejects: rejectsFile(tag), workers, chunkSize })
    const what = `${label}, workers ${workers}, chunk size ${chunkSize}`
    expect(got.error, what).toEqual(base.error)
    // The summary says a worker parsed it (JSON documents: one worker, whatever n).
    const json = options.format === 'json' || /\.json(\.gz)?$/.test(typeof options.input === 'string' ? options.input : '')
    if (got.workers !== null) expect(got.workers, what).toBe(json ? 1 : workers)
    expect(got.summary, what).toEqual(base.summary)
    expect(got.rejects, what).toEqual(base.rejects)
    if (!got.bytes.equals(base.bytes)) expect.fail(`${what}: ${got.bytes.length} bytes written, not the ${base.bytes.length} of workers 0`)
  }
  return base
}

const RUNS = [[1, undefined], [2, 1], [2, 64], [2, undefined], [4, 3], [4, 700]]
const COMMANDS = ['HSET p:{id} * n {$n} line {$line}', 'SET f:{$n} {$file}']

// The fidelity suite's inputs (test/helpers/fidelity-suite.js), each also gzipped.
const FORMATS = [
  { name: 'csv', format: 'csv' },
  { name: 'csv-crlf-bom', format: 'csv', write: { crlf: true, bom: true } },
  { name: 'csv-quote-all-semicolon', format: 'csv', write: { quoteAll: true, delimiter: ';' }, load: { delimiter: ';' } },
  { name: 'csv-no-trailing-newline', format: 'csv', write: { trailingNewline: false } },
  { name: 'tsv', format: 'tsv' },
  { name: 'tsv-plain', format: 'tsv', records: { tsvSafe: true } },
  { name: 'json', format: 'json', write: { indent: 2 } },
  { name: 'json-path', format: 'json', write: { path: 'data.items' }, load: { jsonPath: 'data.items' } },
  { name: 'ndjson', format: 'ndjson' },
  { name: 'ndjson-crlf', format: 'ndjson', write: { crlf: true } }
]

describe('workers: the same bytes as the sequential path, for every fidelity input', () => {
  for (const gz of [false, true]) {
    for (const f of FORMATS) {
      const label = f.name + (gz ? '.gz' : '')
      it(label, async () => {
        const records = ds.generateRecords({ count: 150, seed: label.length * 7919, extraIds: ['ü-ñ', 'id with space', '😀'], ...f.records })
        const dir = fs.mkdtempSync(path.join(tmp, `${label}-`))
        const { file } = ds.writeDataset(dir, f.format, records, { ...f.write, gzip: gz })
        // A document written on one line (json-path) is refused with {$line}, by every path the
        // same way (nothing written); {$n} alone then loads it.
        const bytes = fs.readFileSync(file)
        const oneLine = f.format === 'json' && !(gz ? zlib.gunzipSync(bytes) : bytes).toString('utf8').trimEnd().includes('\n')
        if (oneLine) {
          const refused = await expectSameAsSequential({ input: file, commands: COMMANDS, ...f.load }, RUNS, `${label}, {$line}`)
          expect(refused.error.code).toBe('PIPELOAD_TEMPLATE_INVALID')
          expect(refused.bytes.length).toBe(0)
        }
        const commands = oneLine ? COMMANDS.map(c => c.replace(' line {$line}', '')) : COMMANDS
        const base = await expectSameAsSequential({ input: file, commands, ...f.load }, RUNS, label)
        expect(base.summary.records).toBe(records.length)
        await expectSameAsSequential({ input: file, key: 'q:{id}', ...f.load }, [[2, 5], [4, 1000]], `${label}, no numbers`)
      })
    }
  }

  it('quoted fields of many lines crossing chunk boundaries (a 100 KB value), from a byte stream', async () => {
    const records = ds.generateRecords({ count: 60, seed: 5, bigValueBytes: 100_000 })
    const text = ds.toCSV(records)
    expect(text.split('\n').length).toBeGreaterThan(1000) // the big value spans lines
    await expectSameAsSequential({ input: () => ds.chunkedReadable(text, 999), format: 'csv', name: 'upload', commands: COMMANDS }, [[2, 1], [2, 4096], [4, 100]], 'big value')
    // Without {$n} and {$line}, chunks are encoded as soon as they are parsed (lines shifted after).
    await expectSameAsSequential({ input: () => ds.chunkedReadable(text, 999), format: 'csv', name: 'upload', key: 'u:{id}', onError: 'skip' }, [[2, 1], [2, 4096], [4, 100]], 'big value, no numbers')
  })

  it('headerless CSV, with and without --columns', async () => {
    const file = path.join(tmp, 'headerless.csv')
    fs.writeFileSync(file, Array.from({ length: 300 }, (_, i) => `${i},"v\n${i}",x`).join('\n') + '\n')
    await expectSameAsSequential({ input: file, header: false, commands: ['SET h:{0} {1}'] }, RUNS, 'headerless')
    await expectSameAsSequential({ input: file, header: false, columns: ['id', 'v', 'w'], key: 'h:{id}' }, RUNS, 'headerless --columns')
  })

  it('--columns renaming a header; --dry-run text', async () => {
    const file = path.join(tmp, 'rename.csv')
    fs.writeFileSync(file, 'a,a\n' + Array.from({ length: 200 }, (_, i) => `${i},${i * 2}`).join('\n') + '\n')
    await expectSameAsSequential({ input: file, columns: ['id', 'v'], command: 'SET r:{id} {v}', dryRun: 'text' }, RUNS, 'rename')
  })

  it('empty inputs: no bytes, a BOM only, a header only, blank lines only', async () => {
    for (const [name, text] of [['empty.csv', ''], ['bom.ndjson', '\ufeff'], ['header.csv', 'id,v\n'], ['blank.csv', '\n\n\n'], ['blank.ndjson', '\n \n']]) {
      const file = path.join(tmp, name)
      fs.writeFileSync(file, text)
      await expectSameAsSequential({ input: file, key: 'e:{id}' }, [[2, 1], [4, undefined]], name)
    }
  })
})

describe('workers with several inputs, a --shard share, a gzip among them', () => {
  it('a list of inputs: the same bytes and per-file counts as workers 0 ({$n} goes on across the files)', async () => {
    const files = ['csv', 'ndjson', 'tsv'].map((format, k) => {
      const f = FORMATS.find(x => x.format === format)
      const records = ds.generateRecords({ count: 120, seed: 31 + k, ...f.records })
      return ds.writeDataset(fs.mkdtempSync(path.join(tmp, `list-${k}-`)), f.format, records, { ...f.write, gzip: k === 1 }).file
    })
    expect(files.length).toBe(3)
    const base = await expectSameAsSequential({ input: files, command: 'HSET l:{id} n {$n} at {$file}:{$line}' }, [[2, 1], [2, 300], [4, 4096]], 'list')
    expect(base.summary.files.map(f => f.records)).toEqual([120, 120, 120])
    // A shard's share of each input (the gzip one by chunk number, in one worker thread;
    // the plain files by byte range, cut and parsed in n): the same as workers 0.
    await expectSameAsSequential({ input: files, key: 'l:{id}', shard: '1/3' }, [[2, 64]], 'list, shard 1/3')
  })

  it('a --shard share of a file (a byte range from a record in the middle): every shard, cut and parsed in n threads, gives what workers 0 gives', async () => {
    const quoted = path.join(tmp, 'share.csv') // quoted fields of several lines, some near the cuts
    fs.writeFileSync(quoted, 'id,v,w\n' + Array.from({ length: 400 }, (_, i) => i % 7 === 0 ? `${i},"a\n${'x'.repeat(i % 50)}\n, b",${i}` : `${i},v${i},${i * 3}`).join('\n') + '\n')
    const headerless = path.join(tmp, 'share-headerless.csv')
    fs.writeFileSync(headerless, Array.from({ length: 300 }, (_, i) => `${i},"v\n${i}",x`).join('\n') + '\n')
    const ndjson = path.join(tmp, 'share.ndjson')
    fs.writeFileSync(ndjson, Array.from({ length: 400 }, (_, i) => JSON.stringify({ id: i, v: 'é'.repeat(i % 9) })).join('\n') + '\n')
    const cases = [
      [{ input: quoted, command: 'HSET s:{id} * at {$line}' }, 'csv'],
      [{ input: headerless, header: false, command: 'SET h:{0} {1} {$line}' }, 'headerless csv'],
      [{ input: ndjson, command: 'HSET s:{id} * at {$line}' }, 'ndjson']
    ]
    for (const [options, label] of cases) {
      for (const n of [2, 3, 5]) {
        let records = 0
        // Every worker count and chunk size at 2 and 3 shares; the fifths at the hardest, 1-byte chunks.
        const runs = n === 5 ? [[2, 1]] : [[2, 1], [2, 300], [4, 1000]]
        for (let i = 0; i < n; i++) {
          const base = await expectSameAsSequential({ ...options, shard: `${i}/${n}` }, runs, `${label}, shard ${i}/${n}`)
          records += base.summary.records
        }
        expect(records, `${label}: the ${n} shares hold every record once`).toBe(label === 'headerless csv' ? 300 : 400)
      }
      // Cut and parsed in n threads, not read by one: a batch never spans two chunks, so
      // 1-byte chunks make a batch per record (one thread: one batch for the share).
      const s = await load({ ...options, shard: '1/2', workers: 2, chunkSize: 1, dryRun: 'resp', output: new PassThrough().resume() })
      expect(s.batches, label).toBeGreaterThan(s.records / 2)
    }
  })

  it('a --shard share with a bad record: the same failure, line and rejects as workers 0, in both error modes', async () => {
    const file = path.join(tmp, 'share-bad.csv')
    const rows = Array.from({ length: 400 }, (_, i) => `${i},v${i}`)
    rows[300] = '300,v300,extra' // in shard 1/2's share
    fs.writeFileSync(file, 'id,v\n' + rows.join('\n') + '\n')
    for (const onError of ['abort', 'skip']) {
      const base = await expectSameAsSequential({ input: file, key: 'b:{id}', shard: '1/2', onError, rejects: true }, [[2, 1], [2, 200], [4, 64]], `bad share, ${onError}`)
      if (onError === 'abort') expect(base.error.line).toBe(302)
      else expect(base.summary.errors).toBe(1)
    }
  })
})

/** Lines of a CSV with row `at` replaced. */
function csvWith (rows, at, bad) {
  const lines = ['id,name,note']
  for (let i = 0; i < rows; i++) lines.push(i === at ? bad : `${i},n${i},"multi\nline ${i}"`)
  return lines.join('\n') + '\n'
}

function ndjsonWith (rows, at, bad) {
  return Array.from({ length: rows }, (_, i) => i === at ? bad : JSON.stringify({ id: i, v: `v${i}` })).join('\n') + '\n'
}

const half = buf => buf.subarray(0, buf.length >> 1)

const BAD = [
  ['csv: a row with a field too many', 'a.csv', csvWith(200, 120, '120,x,y,z')],
  ['csv: a stray quote in a field', 'b.csv', csvWith(200, 90, '90,ab"c,x')],
  ['csv: a quote left open near the end', 'c.csv', csvWith(200, 190, '190,"open,x')],
  ['csv: invalid UTF-8', 'd.csv', Buffer.concat([Buffer.from(csvWith(200, 100, '100,BAD,x')).subarray(0, 2000), Buffer.from([0xff, 0xfe]), Buffer.from(csvWith(200, 100, '100,BAD,x')).subarray(2000)])],
  ['ndjson: a line that is not JSON', 'e.ndjson', ndjsonWith(300, 150, '{"id": 150, oops}')],
  ['ndjson: a record without the key field (a mapping failure, in a worker)', 'f.ndjson', ndjsonWith(300, 200, '{"v":"no id"}')],
  ['ndjson: a record longer than maxRecordSize', 'g.ndjson', ndjsonWith(300, 100, JSON.stringify({ id: 100, v: 'x'.repeat(3000) })), { maxRecordSize: 1000 }],
]

describe('workers: bad input gives what the sequential path gives (error, failures, rejects file, bytes)', () => {
  for (const [what, name, content, extra] of BAD) {
    for (const onError of ['abort', 'skip']) {
      it(`${what}, on-error ${onError}`, async () => {
        const file = path.join(tmp, `${onError}-${name}`)
        fs.writeFileSync(file, content)
        const base = await expectSameAsSequential({ input: file, key: 'b:{id}', onError, rejects: true, ...extra }, [[2, 1], [2, 50], [4, 333], [2, undefined]], `${onError}-${name}`)
        // The input is bad indeed: the comparison is not between two clean runs.
        expect(base.error !== null || base.summary.errors > 0, 'a failure').toBe(true)
      })
    }
  }

  // How much of a truncated gzip gets read before the error is a race in every mode: the
  // stream's async iterator drops the inflated bytes not yet taken when gunzip fails. So
  // the same error, and records that all loaded the same way.
  it('csv.gz truncated: the same error', async () => {
    const file = path.join(tmp, 'truncated.csv.gz')
    fs.writeFileSync(file, half(zlib.gzipSync(csvWith(3000, -1, ''))))
    const base = await dryRun({ input: file, key: 't:{id}', workers: 0 })
    expect(base.error.code).toBe('PIPELOAD_INPUT_INVALID')
    for (const [workers, chunkSize] of [[2, 1], [2, undefined], [4, 1000]]) {
      const got = await dryRun({ input: file, key: 't:{id}', workers, chunkSize })
      expect({ ...got.error, offset: null }).toEqual({ ...base.error, offset: null })
      const n = got.summary.records - 1 // the last is the error
      expect(got.summary.loaded).toBe(n)
      expect(got.summary.stoppedAt).toEqual({ file, line: null, offset: got.error.offset })
    }
  })

  it('max-errors: the run stops at the same failure', async () => {
    const file = path.join(tmp, 'many-bad.ndjson')
    fs.writeFileSync(file, Array.from({ length: 400 }, (_, i) => i % 50 === 7 ? 'nope' : JSON.stringify({ id: i })).join('\n') + '\n')
    // Rejected records no longer stop the parallel parse, so its batches end at chunk ends
    // past the first bad record too: how many records after the stopping failure were still
    // in its batch differs (README). The failure that stops the run, and all before it, do not.
    const o = { input: file, key: 'm:{id}', onError: 'skip', maxErrors: 3 }
    const base = await dryRun({ ...o, workers: 0, rejects: path.join(tmp, 'max-errors-0.rejects') })
    expect(base.error.code).toBe('PIPELOAD_TOO_MANY_ERRORS')
    const upToStop = r => ({ error: r.error, failures: r.summary.failures.slice(0, 4), rejects: r.rejects.split('\n').slice(0, 4) })
    for (const [workers, chunkSize] of [[2, 10], [2, 1000], [4, 200]]) {
      const got = await dryRun({ ...o, workers, chunkSize, rejects: path.join(tmp, `max-errors-${workers}-${chunkSize}.rejects`) })
      expect(upToStop(got), `workers ${workers}, chunk size ${chunkSize}`).toEqual(upToStop(base))
      expect(got.summary.errors).toBeGreaterThanOrEqual(4)
    }
  })
})

// Dirty CSV as real files have it, in skip mode: rejected rows (ragged, a stray quote in a
// field, text after a closing quote, invalid UTF-8) no longer hand the rest of the input to
// one thread. The parallel parse goes on past them and still gives, byte for byte, what
// the sequential path gives; only a quote left open (fatal) or a wrong cut reads on
// sequentially.
describe('workers: rejected records do not stop the parallel parse', () => {
  const { prng } = require('./helpers/prng')
  const { normalizeLoadOptions } = require('../lib/run/options')
  const { describeInput } = require('../lib/read/input')
  const { openParallelBatches } = require('../lib/threads/chunks')

  function dirtyCsv (rnd, rows) {
    const good = () => rnd.pick(['a', '7', '', '"q""uote"', '"multi\nline"', '"x,y"', 'São'])
    const lines = ['id,name,note']
    for (let i = 0; i < rows; i++) {
      let line = `${i},${good()},${good()}`
      if (rnd.chance(0.1)) line = rnd.pick([`${i},ab"c,x`, `${i},"x"y,z`, `${i},only`, `${i},a,b,c`, `${i},say "hi",x`, `${i},"a\nb"z,q`])
      lines.push(line)
    }
    const buf = Buffer.from(lines.join('\n') + '\n')
    const at = buf.indexOf('São')
    if (at !== -1 && rnd.chance(0.3)) buf[at + 1] = 0xff // invalid UTF-8
    return buf
  }

  /** One parallel read: its records, how it ended, and where (if anywhere) it went sequential. */
  async function parallelRead (file, workers, chunkSize, onError = 'skip') {
    const o = normalizeLoadOptions({ input: file, key: 'd:{id}', dryRun: 'resp', onError, workers, chunkSize })
    const src = await openParallelBatches(describeInput(o), o, { n: workers })
    let records = 0
    let error = null
    try {
      for await (const b of src.batches) records += b.records
    } catch (err) {
      error = err.code
    }
    return { records, error, sequentialFrom: src.sequentialFrom() }
  }

  it('generated dirty files: the same bytes, failures and rejects as workers 0, and no fallback', async () => {
    const rnd = prng(20261123)
    let rejected = 0
    for (let round = 0; round < 12; round++) {
      const file = path.join(tmp, `dirty-${round}.csv`)
      fs.writeFileSync(file, dirtyCsv(rnd, 20 + rnd.int(200)))
      const base = await expectSameAsSequential({ input: file, key: 'd:{id}', onError: 'skip', rejects: true }, [[2, 1], [2, 97], [4, 400]], `dirty-${round}`)
      rejected += base.summary.errors
      for (const [workers, chunkSize] of [[2, 97], [4, 400]]) {
        const r = await parallelRead(file, workers, chunkSize)
        expect(r.sequentialFrom, `dirty-${round}, workers ${workers}, chunk size ${chunkSize}`).toBe(null)
        expect(r.records).toBe(base.summary.records)
      }
    }
    expect(rejected).toBeGreaterThan(12) // the files are dirty indeed
  }, scaledMs(60000))

  it('a quote left open, or abort mode, still reads on sequentially from the chunk at fault', async () => {
    for (const [bad, onError] of [['"open,x', 'skip'], ['only', 'abort']]) {
      const file = path.join(tmp, `fault-${onError}.csv`)
      const rows = Array.from({ length: 300 }, (_, i) => i === 200 ? `${i},${bad}` : `${i},n${i},x`)
      fs.writeFileSync(file, 'id,name,note\n' + rows.join('\n') + '\n')
      const r = await parallelRead(file, 2, 100, onError)
      expect(r.error).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.sequentialFrom.line).toBeGreaterThan(190) // the chunk holding line 202
      expect(r.sequentialFrom.line).toBeLessThanOrEqual(202)
    }
  })
})

describe('workers: memory', () => {
  it(`reads at most about (n + 4) chunks ahead of what is sent`, async () => {
    const line = Buffer.from('{"id":1,"v":"' + 'x'.repeat(80) + '"}\n')
    let pulled = 0
    const total = 20 * 1024 * 1024
    const input = new Readable({
      read () {
        if (pulled >= total) return this.push(null)
        const chunk = Buffer.concat(Array(700).fill(line))
        pulled += chunk.length
        this.push(chunk)
      }
    })
    // An output that holds its first write back until told: the run stalls behind it.
    const { Writable } = require('node:stream')
    let held = null
    const output = new Writable({ highWaterMark: 1, write (c, e, cb) { if (held === null) held = cb; else cb() } })
    const run = load({ input, format: 'ndjson', key: 'k:{id}', dryRun: 'resp', output, workers: 2, chunkSize: 64 * 1024 })
    await new Promise(resolve => setTimeout(resolve, 1500)) // time to read much more if nothing held it back
    // 6 chunks of 64 KiB, those cut from one read, the stream's and the reader's buffers.
    expect(pulled).toBeGreaterThan(0)
    expect(pulled).toBeLessThan(2 * 1024 * 1024)
    held()
    const summary = await run
    expect(summary.records).toBe(Math.ceil(total / (700 * line.length)) * 700)
  })
})

describe('workers: no thread detaches an ArrayBuffer', () => {
  // A batch moved between threads (postMessage's transfer list) detaches its ArrayBuffer,
  // and from the first detached buffer on V8 checks every typed-array access of that thread
  // (parsing and encoding ran ~1.2x slower in the workers). Batches are shared instead.
  const file = path.join(tmp, 'detach.csv')
  fs.writeFileSync(file, 'id,name,n\n' + Array.from({ length: 20000 }, (_, i) => `${i},name ${i},${i * 7}`).join('\n') + '\n')
  for (const workers of ['1', '2']) {
    it(`--workers ${workers}: V8 never gives up its "no detached buffer" assumption, and the output is that of workers 0`, () => {
      const { execFileSync } = require('node:child_process')
      const run = (w, flags = []) => execFileSync(process.execPath, [...flags, path.join(__dirname, '..', 'bin', 'pipeload.js'), 'import', file, '--key', 'u:{id}',
        '--dry-run', 'resp', '--quiet', '--batch-size', '100', '--chunk-size', '16KiB', '--workers', w], { maxBuffer: 64 * 1024 * 1024 })
      const traced = run(workers, ['--trace-protector-invalidation'])
      const text = traced.toString('latin1')
      expect(text.includes('Invalidating protector cell ArrayBufferDetaching'), 'a thread detached an ArrayBuffer').toBe(false)
      expect(traced.equals(run('0'))).toBe(true) // and, with nothing traced, the same bytes
    })
  }
})

describe('workers: --resume after a stop, past a bad record', () => {
  let srv
  useServer('pipeload-parallel-resume-', s => { srv = s.srv })

  it('the stopped run and the resumed one give what workers 0 gives', async () => {
    // Bad rows at records 100 and 700: with max-errors 1 the first run stops at the second.
    const file = path.join(tmp, 'resume.csv')
    const rows = Array.from({ length: 1000 }, (_, i) => i === 100 || i === 700 ? `${i},bad,x,y` : `${i},n${i},"a\nb"`)
    fs.writeFileSync(file, 'id,name,note\n' + rows.join('\n') + '\n')
    const runs = {}
    for (const [workers, chunkSize] of [[0], [2, 300], [4, 1000]]) {
      const checkpoint = path.join(tmp, `resume-${workers}.checkpoint`)
      const o = { url: srv.url, input: file, key: 'r:{id}', onError: 'skip', maxErrors: 1, checkpoint, workers, chunkSize, batchSize: 50 }
      const first = await load(o).catch(e => e)
      expect(first.code).toBe('PIPELOAD_TOO_MANY_ERRORS')
      const second = await load({ ...o, resume: true, maxErrors: undefined })
      // Which records after the failure that stops the run were still sent follows batch
      // boundaries (the stop takes effect at the next batch), and a parallel load's
      // batches also end where its chunks end: the failures and the final totals match.
      const pick = s => ({ records: s.records, loaded: s.loaded, errors: s.errors, failures: s.failures })
      runs[workers] = { first: first.summary.failures, message: first.message, second: pick(second), resumedFrom: second.resumedFrom }
    }
    expect(runs[0].resumedFrom).toBeGreaterThan(100)
    expect(runs[0].second).toMatchObject({ records: 1000, loaded: 998, errors: 2 })
    for (const w of [2, 4]) {
      expect(runs[w].first).toEqual(runs[0].first)
      expect(runs[w].message).toEqual(runs[0].message)
      expect(runs[w].second).toEqual(runs[0].second)
      expect(runs[w].resumedFrom).toBeGreaterThan(100) // the skip lands past the bad record at 100
    }
  })
})

describe('workers: an input that pauses', () => {
  /**
   * A byte stream that gives `pieces` one at a time, `pauseMs` apart, and after the first
   * `hold` waits for `resume()` (or `giveUpMs`) before the rest; `given()`: how many so far.
   * The wait, not a race against the clock, makes the test: a loader that holds cut records
   * back until more input comes writes nothing while it lasts, however slowly its workers start.
   */
  function pausing (pieces, { pauseMs = 10, hold, giveUpMs = 5000 }) {
    let i = 0
    let given = 0
    let resume
    const resumed = new Promise(resolve => { resume = resolve })
    const stream = new Readable({
      read () {
        if (i === pieces.length) return this.push(null)
        const piece = pieces[i++]
        const give = () => { given++; this.push(piece) }
        const wait = i === hold + 1 ? Promise.race([resumed, new Promise(resolve => setTimeout(resolve, giveUpMs))]) : null
        setTimeout(() => wait ? wait.then(give) : give(), i === 1 ? 0 : pauseMs)
      }
    })
    return { stream, given: () => given, resume }
  }

  // Before, the cutter held bytes until a whole chunk (1 MiB) had come or the input had
  // ended: a pipe whose writer pauses (a live export, a slow download) had its records
  // sent only at the end, or never while it waited.
  it('its whole records are cut and sent while it waits, not when a full chunk has come; the same bytes as workers 0', async () => {
    const text = 'id,note\n' + Array.from({ length: 60 }, (_, i) => `${i},"line ${i}\nand more, ${i}"\n`).join('')
    const pieces = []
    for (let p = 0; p < text.length; p += 97) pieces.push(Buffer.from(text.slice(p, p + 97))) // cuts inside quoted fields
    const base = await dryRun({ input: Readable.from(pieces), format: 'csv', name: 'p.csv', key: 'p:{id}', workers: 0 })
    for (const workers of [2, 4]) {
      const hold = Math.floor(pieces.length / 2) - 1 // less than half: the rest waits for a write
      const src = pausing(pieces, { hold })
      const output = new PassThrough()
      const seen = [] // pieces given when each write came out
      const chunks = []
      output.on('data', c => { chunks.push(c); seen.push(src.given()); src.resume() })
      const summary = await load({ input: src.stream, format: 'csv', name: 'p.csv', key: 'p:{id}', dryRun: 'resp', output, workers, batchSize: 5 })
      expect(summary.records).toBe(60)
      expect(Buffer.concat(chunks).equals(base.bytes), `workers ${workers}`).toBe(true)
      // Records came out while most of the input was still to come.
      expect(seen[0], `workers ${workers}: first write after ${seen[0]} of ${pieces.length} pieces`).toBeLessThan(pieces.length / 2)
    }
  })
})

// Parquet (issue 24): row groups read, decoded and encoded side by side in the parse workers
// (lib/threads/row-groups.js), sent in file order. Files written by DuckDB, several row
// groups each, with nulls (a missing field: a failure when a key needs it), a struct and a list.
describe('workers: Parquet inputs, row groups decoded side by side, give what workers 0 gives', () => {
  const { writeQuery, rowGroupsOf } = require('./helpers/parquet')
  const PQ_RUNS = [[1, undefined], [2, undefined], [4, undefined]]
  const PQ_ROWS = 20_000
  let file
  beforeAll(async () => {
    file = path.join(tmp, 'rows.parquet')
    await writeQuery(file, `SELECT i::BIGINT AS id, CASE WHEN i % 997 = 5 THEN NULL ELSE 'név ' || i END AS name, i / 3.0 AS score,
      {'a': i, 'b': 'x' || i} AS st, [i, i + 1] AS tags, CASE WHEN i % 1501 = 7 THEN NULL ELSE i * 2 END AS k FROM range(${PQ_ROWS}) t(i)`, 'COMPRESSION zstd, ROW_GROUP_SIZE 2048')
    expect((await rowGroupsOf(file)).length).toBeGreaterThan(8)
  })

  it('every column, {$n} and {$line}; a key field that is null fails its row, in both error modes, with a rejects file', async () => {
    const base = await expectSameAsSequential({ input: file, commands: COMMANDS }, PQ_RUNS, 'parquet')
    expect(base.summary.records).toBe(PQ_ROWS)
    expect(base.summary.errors).toBe(0)
    await expectSameAsSequential({ input: file, command: 'HSET q:{id} name {name} s {st.b} t {tags[]}' }, PQ_RUNS, 'parquet, abort at a null')
    const skip = await expectSameAsSequential({ input: file, commands: ['SET k:{k} {name}', 'SADD tags {tags[]}'], onError: 'skip', rejects: true }, PQ_RUNS, 'parquet, skip')
    expect(skip.summary.errors).toBeGreaterThan(20) // name or k null
    expect(skip.summary.failures[0]).toMatchObject({ line: 6, rowGroup: 0 })
    await expectSameAsSequential({ input: file, command: 'SET k:{k} {name}', maxErrors: 9 }, PQ_RUNS, 'parquet, max-errors')
    // Flat columns only, with *: text rows read with each column's name (lib/read/parquet/text.js), in the workers too.
    const flat = path.join(tmp, 'flat.parquet')
    await writeQuery(flat, `SELECT id, name, score, k FROM '${file}'`, 'COMPRESSION zstd, ROW_GROUP_SIZE 2048')
    const star = await expectSameAsSequential({ input: flat, key: 'f:{id}' }, PQ_RUNS, 'parquet, flat columns, *')
    expect(star.summary.records).toBe(PQ_ROWS)
  })

  it('a row group that cannot be read: the groups before it are sent, then the same error', async () => {
    const broken = path.join(tmp, 'broken.parquet')
    fs.copyFileSync(file, broken)
    const g = (await rowGroupsOf(broken))[4]
    const fd = fs.openSync(broken, 'r+')
    fs.writeSync(fd, Buffer.alloc(g.end - g.start, 0x5c), 0, g.end - g.start, g.start)
    fs.closeSync(fd)
    const base = await expectSameAsSequential({ input: broken, key: 'b:{id}' }, PQ_RUNS, 'parquet, broken row group')
    expect(base.error.code).toBe('PIPELOAD_INPUT_INVALID')
    expect(base.error.message).toMatch(/row group 4 /)
    expect(base.summary.records).toBe(4 * 2048 + 1) // the four groups before, and the failed one's first row
  })

  it('a list of inputs (Parquet among CSV), and every --shard share', async () => {
    const csv = path.join(tmp, 'with-parquet.csv')
    fs.writeFileSync(csv, 'id,name\n' + Array.from({ length: 300 }, (_, i) => `c${i},"n\n${i}"`).join('\n') + '\n')
    const after = path.join(tmp, 'after-parquet.csv')
    fs.copyFileSync(csv, after)
    await expectSameAsSequential({ input: [csv, file, after], command: 'HSET l:{id} n {$n} at {$file}:{$line}' }, [[2, 1], [4, 300]], 'parquet in a list')
    // Each share against workers 0 with 2 workers: workers 1, 2 and 4 giving the same bytes as
    // workers 0 is the first test's (PQ_RUNS), for the whole file; here what is compared is
    // the share (which row groups, where its rows start), cut the same way whatever n.
    for (const n of [2, 3, 7]) {
      let records = 0
      for (let i = 0; i < n; i++) records += (await expectSameAsSequential({ input: file, command: 'HSET s:{id} * at {$line}', shard: `${i}/${n}` }, [[2, undefined]], `parquet, shard ${i}/${n}`)).summary.records
      expect(records, `${n} shares hold every row once`).toBe(PQ_ROWS)
    }
  })
})
