'use strict'
/* global describe, it, expect, vi */ // vitest globals (see vitest.config.js)

// The parallel parse's fallback to one thread (lib/threads/chunks.js openFallback) over
// inputs many file reads (256 KiB) and many chunks long: a record longer than a chunk, a
// bad record in abort mode, a header after blank lines, a quote left open. The sequential
// reader then takes the chunks cut from the one at fault on, the bytes read past the
// cutting, and the rest of the input: every record must land once, in order. Inputs
// smaller than one read never reach "the rest of the input", so these are ~1.5 MB.
//
// The oracle is the generator's own list of records (id, value, line) and a RESP encoder
// of a few lines here, not the project's reader or encoder.
//
// Only bad input falls back, and the summary says where and why (each file's `fallback`, a
// line of the CLI's summary); an error that is not bad input (a TypeError planted in a worker
// by PIPELOAD_TEST_CHUNK_TYPE_ERROR, or in the cutter) fails the run instead.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { dryRunIntoMemory } = require('./helpers/dry-run')
const { normalizeLoadOptions } = require('../lib/run/options')
const { describeInput } = require('../lib/read/input')
const { openParallelBatches } = require('../lib/threads/chunks')
const { runCliSpawned } = require('./helpers/run-cli')
const { Cutter } = require('../lib/read/cut')

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-fallback-'))
const ROWS = 36_000
const CHUNK = 32 * 1024 // with 2 workers, at most 6 chunks (192 KiB) are cut ahead: the rest is read later
// Early in the input, what makes the parallel parse go sequential in skip mode and read on to
// the end: CSV/TSV, blank lines before the header, more than a chunk of them (chunk 0 cannot
// tell the other chunks their header: sequential from the start); NDJSON, a line longer than
// a file read and maxRecordSize + a chunk (no record end for the cutter to find: cut.js
// overflow), which the sequential reader rejects.
const EARLY_AT = 700
const MAX_RECORD = 16 * 1024
const BAD_AT = [15_000, 24_000, 30_000, 33_000, 35_000, ROWS - 2] // rejected records, the last in the input's last read
const ALPHA = 'abcdefghijklmnopqrstuvwxyz'
const COMMAND = 'SET r:{id} {$line}|{v}'

/** RESP of SET r:<id> <line>|<v>, written here from the protocol, not by lib/encode. */
function resp (r) {
  const args = ['SET', `r:${r.id}`, `${r.line}|${r.v}`].map(a => Buffer.from(a))
  return Buffer.concat([Buffer.from(`*${args.length}\r\n`), ...args.flatMap(a => [Buffer.from(`$${a.length}\r\n`), a, Buffer.from('\r\n')])])
}

/** A value of record i: short, sometimes quoted with a delimiter or a line break (CSV). */
function value (i, format) {
  if (format === 'csv' && i % 97 === 5) return `p${i}\nq`
  if (format === 'csv' && i % 89 === 3) return `c,${i}`
  return `v${i}-${ALPHA.slice(i % 26)}${ALPHA}`
}

/**
 * An input of ROWS records: { file, good (each { id, v, line }), bad (lines of the
 * rejected records, in order) }. `early`: what makes the parse sequential early (above); `open`: a quote left open at that record (CSV).
 */
function generate (format, { early = false, open = null } = {}) {
  const lead = early && format !== 'ndjson' ? CHUNK + 100 : 0
  const parts = []
  const good = []
  const bad = []
  let line = 1
  const put = (text, lines) => { parts.push(text); line += lines }
  if (format === 'json') put('[\n', 1)
  if (format === 'csv' || format === 'tsv') {
    put('\n'.repeat(lead), lead)
    put(format === 'csv' ? 'id,v\n' : 'id\tv\n', 1)
  }
  for (let i = 0; i < ROWS; i++) {
    const v = value(i, format)
    const sep = i === ROWS - 1 ? '\n' : ',\n'
    if (i === open) {
      put(`${i},"never closed\n`, 1)
      continue
    }
    if (early && format === 'ndjson' && i === EARLY_AT) {
      bad.push(line)
      put(JSON.stringify({ id: i, v: 'L'.repeat(300 * 1024) }) + '\n', 1)
      continue
    }
    if (BAD_AT.includes(i)) {
      bad.push(line)
      if (format === 'csv') put(`${i},x,y\n`, 1)
      else if (format === 'tsv') put(`${i}\tx\ty\n`, 1)
      else if (format === 'ndjson') put(`{"id": ${i}, oops}\n`, 1)
      else put(`{"v": "no id ${i}"}${sep}`, 1) // json: a mapping failure, the key's field missing
      continue
    }
    good.push({ id: i, v, line })
    if (format === 'csv') {
      const field = /[,\n"]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v
      put(`${i},${field}\n`, 1 + (v.match(/\n/g) || []).length)
    } else if (format === 'tsv') put(`${i}\t${v}\n`, 1)
    else if (format === 'ndjson') put(JSON.stringify({ id: i, v }) + '\n', 1)
    else put(JSON.stringify({ id: i, v }) + sep, 1)
  }
  if (format === 'json') put(']\n', 1)
  const file = path.join(tmp, `${format}-${early ? 'early' : 'plain'}-${lead}-${open}.${format}`)
  fs.writeFileSync(file, parts.join(''))
  expect(fs.statSync(file).size).toBeGreaterThan(5 * 256 * 1024) // several reads
  return { file, good, bad }
}

/** A dry run into memory: { bytes, summary, error }. */
function dryRun (options) {
  return dryRunIntoMemory({ commands: [COMMAND], chunkSize: CHUNK, maxRecordSize: MAX_RECORD, maxFailures: 10_000, workers: 2, ...options })
}

/** Where the parallel read of these options went sequential (null: it did not). */
async function sequentialFrom (options) {
  const o = normalizeLoadOptions({ dryRun: 'resp', commands: [COMMAND], chunkSize: CHUNK, maxRecordSize: MAX_RECORD, maxFailures: 10_000, workers: 2, ...options })
  const src = await openParallelBatches(describeInput(o), o, { n: 2 })
  try {
    for await (const b of src.batches) if (b.stop) break
  } catch {}
  await src.close()
  return src.sequentialFrom()
}

const expected = records => Buffer.concat(records.map(resp))
const lines = s => s.failures.map(f => f.line)

/** Each record before `line` and none after, in order, exactly once. */
function expectUpTo (got, good, line, what) {
  const want = expected(good.filter(r => r.line < line))
  if (!got.bytes.equals(want)) expect.fail(`${what}: ${got.bytes.length} bytes, not the ${want.length} of the records before line ${line}`)
}

describe('a parallel parse that falls back to one thread reads the whole input', () => {
  for (const format of ['csv', 'tsv', 'ndjson']) {
    describe(format, () => {
      const early = generate(format, { early: true })
      const plain = generate(format)

      it('the early records in skip mode, or the bad record in abort mode, is where it goes sequential', async () => {
        const a = await sequentialFrom({ input: early.file, onError: 'skip' })
        expect(a).not.toBe(null)
        expect(a.line).toBeLessThan(early.good[EARLY_AT].line) // early: most of the input is read after
        const b = await sequentialFrom({ input: plain.file, onError: 'abort' })
        expect(b).not.toBe(null)
        expect(b.line).toBeLessThanOrEqual(plain.bad[0])
        expect(b.line).toBeGreaterThan(plain.bad[0] - 2000) // the chunk holding it, far into the input
      })

      it('on-error skip: every good record once, every bad one rejected at its line', async () => {
        const r = await dryRun({ input: early.file, onError: 'skip' })
        expect(r.error).toBe(null)
        expect(r.summary).toMatchObject({ records: ROWS, loaded: early.good.length, errors: early.bad.length, workers: 2 })
        expect(lines(r.summary)).toEqual(early.bad)
        expectUpTo(r, early.good, Infinity, 'skip')
      })

      it('on-error abort: every record before the first bad one, then a loud stop at its line', async () => {
        for (const g of [early, plain]) {
          const r = await dryRun({ input: g.file, onError: 'abort' })
          expect(r.error?.code).toBe(format === 'ndjson' && g === early ? 'PIPELOAD_RECORD_TOO_LARGE' : 'PIPELOAD_INPUT_INVALID')
          expect(r.error.line).toBe(g.bad[0])
          expect(lines(r.summary)).toEqual([g.bad[0]])
          expectUpTo(r, g.good, g.bad[0], `abort (${g === early ? 'early fallback' : 'fallback at the bad record'})`)
        }
      })

      it('--max-errors: the rejection past it, deep in the input, stops the run, every record before it sent once', async () => {
        const stop = early.bad.length - 2 // BAD_AT[4]
        const r = await dryRun({ input: early.file, onError: 'skip', maxErrors: stop })
        expect(r.error?.code).toBe('PIPELOAD_TOO_MANY_ERRORS')
        expect(lines(r.summary).slice(0, stop + 1)).toEqual(early.bad.slice(0, stop + 1))
        // Records after the stopping one may still be in its batch (README): a prefix of the
        // good records, at a record's end, holding all those before the stop.
        const all = expected(early.good)
        expect(all.subarray(0, r.bytes.length).equals(r.bytes)).toBe(true)
        const ends = new Set()
        let at = 0
        for (const g of early.good) ends.add(at += resp(g).length)
        expect(ends.has(r.bytes.length)).toBe(true)
        expect(r.bytes.length).toBeGreaterThanOrEqual(expected(early.good.filter(g => g.line < early.bad[stop])).length)
      })
    })
  }

  describe('csv: a quote left open', () => {
    it('a quote left open in the last reads: every good record before it, then a loud stop at its line', async () => {
      const open = ROWS - 3 // no quote after it: it stays open to the end
      const g = generate('csv', { early: true, open })
      const at = g.good.find(r => r.id === open - 1).line + 1 // the open quote's line
      for (const onError of ['skip', 'abort']) {
        const r = await dryRun({ input: g.file, onError })
        expect(r.error?.code).toBe('PIPELOAD_INPUT_INVALID')
        expect(r.error.line).toBe(onError === 'skip' ? at : g.bad[0])
        expectUpTo(r, g.good, onError === 'skip' ? at : g.bad[0], `quote left open, ${onError}`)
      }
    })
  })

  describe('json documents (one worker thread reads them, whatever --workers says)', () => {
    const g = generate('json')
    for (const onError of ['skip', 'abort']) {
      it(`on-error ${onError}: every record before the stop once, mapping failures at their lines`, async () => {
        const r = await dryRun({ input: g.file, onError, chunkSize: undefined })
        expect(r.summary.workers).toBe(1)
        if (onError === 'skip') {
          expect(r.error).toBe(null)
          expect(lines(r.summary)).toEqual(g.bad)
        } else {
          expect(r.error?.code).toBe('PIPELOAD_RECORD_FAILED')
          expect(lines(r.summary)).toEqual([g.bad[0]])
        }
        expectUpTo(r, g.good, onError === 'skip' ? Infinity : g.bad[0], `json ${onError}`)
      })
    }
  })
})

describe('the summary says when and why the parse workers fell back to one thread', () => {
  const plain = generate('csv')
  const early = generate('csv', { early: true })
  const longLine = generate('ndjson', { early: true })

  it('a bad record in abort mode: the file entry names the workers, where this thread took over, and the bad record', async () => {
    const r = await dryRun({ input: plain.file, onError: 'abort' })
    const f = r.summary.files[0].fallback
    expect(f).toMatchObject({ from: 2 })
    expect(f.line).toBeLessThanOrEqual(plain.bad[0])
    expect(f.line).toBeGreaterThan(plain.bad[0] - 2000) // the chunk holding it
    // Its line as the input's, not as counted from the chunk's start.
    expect(f.reason).toMatch(new RegExp(`^${plain.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${plain.bad[0]}: `))
    expect(f.reason).toBe(r.error.message)
    // The byte where that line starts, from the file itself.
    const text = fs.readFileSync(plain.file)
    let line = 1
    let at = 0
    while (line < f.line) if (text[at++] === 10) line++
    expect(f.offset).toBe(at)
  })

  it('what cannot be cut: a header after blank lines, a line longer than a chunk can find the end of', async () => {
    const a = await dryRun({ input: early.file, onError: 'skip' })
    expect(a.summary.files[0].fallback).toMatchObject({ from: 2, line: 1, offset: 0, reason: 'the first chunk holds no header (only blank lines)' })
    const b = await dryRun({ input: longLine.file, onError: 'skip' })
    expect(b.summary.files[0].fallback).toMatchObject({ from: 2, reason: `no record end within ${MAX_RECORD + CHUNK} bytes to cut the input at` })
    expect(b.summary.files[0].fallback.line).toBeLessThanOrEqual(longLine.bad[0])
  })

  it('no fallback, no field: a run the workers read to the end has the summary it always had', async () => {
    const r = await dryRun({ input: plain.file, onError: 'skip' })
    expect(r.summary.files[0]).toEqual({ input: plain.file, started: true, records: ROWS, loaded: plain.good.length, errors: plain.bad.length, skipped: 0 })
  })

  it('the CLI prints it as a line of the summary', async () => {
    const r = await runCliSpawned(['import', plain.file, '-c', COMMAND, '--dry-run', 'resp', '--workers', '2', '--chunk-size', String(CHUNK), '--max-record-size', String(MAX_RECORD)])
    expect(r.code).toBe(3)
    const line = r.stderr.split('\n').find(l => l.startsWith('parse workers: '))
    expect(line).toMatch(new RegExp(`^parse workers: read on one thread, not by 2, from .*:\\d+ \\(byte \\d+\\): .*:${plain.bad[0]}: `))
  })

  it('an error of the parallel path that is not bad input (a TypeError) fails the run: exit 70, not read on one thread', async () => {
    // PIPELOAD_TEST_CHUNK_TYPE_ERROR: chunk 3 throws a TypeError in its worker (lib/threads/worker.js).
    const args = ['import', plain.file, '-c', COMMAND, '--dry-run', 'resp', '--workers', '2', '--chunk-size', String(CHUNK), '--on-error', 'skip', '--max-errors', '10000']
    const r = await runCliSpawned(args, { env: { PIPELOAD_TEST_CHUNK_TYPE_ERROR: '3' } })
    expect(r.code).toBe(70)
    expect(r.stderr).toMatch(/^pipeload: internal error, please report it:\nTypeError: planted in chunk 3 by PIPELOAD_TEST_CHUNK_TYPE_ERROR\n/)
    // Without it, the same run reads every record.
    const ok = await runCliSpawned(args)
    expect(ok.code).toBe(1)
    expect(ok.stdoutBytes.equals(expected(plain.good))).toBe(true)
  })

  it('an error of the cutting on the loader\'s thread (a TypeError) fails the run as itself, not as a failed input read on one thread', async () => {
    const push = Cutter.prototype.push
    let calls = 0
    // The cutter's third piece of input throws, as a bug in lib/read/cut.js would.
    const spy = vi.spyOn(Cutter.prototype, 'push').mockImplementation(function (buf) {
      if (++calls === 3) throw new TypeError('planted in the cutter')
      return push.call(this, buf)
    })
    let r
    try {
      r = await dryRun({ input: plain.file, onError: 'skip' })
    } finally {
      spy.mockRestore()
    }
    expect(calls).toBeGreaterThanOrEqual(3)
    expect(r.error).toBeInstanceOf(TypeError) // before: PIPELOAD_INPUT_FAILED, "the input stream failed: planted in the cutter"
    expect(r.error.message).toBe('planted in the cutter')
    expect(r.summary.files[0].fallback).toBe(undefined)
  })
})
