'use strict'
/* global describe, it, expect, beforeAll */ // vitest globals (see vitest.config.js)

// --relax-quotes (relaxQuotes): a CSV whose unquoted fields hold a bare quote (37°36'37.8"N,
// 5'10") loads as Python's csv module reads it, on every CSV path: the fast tokenizer, csv-parse
// (map(), a multi-byte delimiter), the parallel cutter (--workers 2, several chunks) and the
// --shard range scan. The oracle is Python's csv module (csv-parse alone with relax_quotes where
// python3 is missing). The rows put a bare quote before a quoted field holding line breaks in
// the same record: a cut that takes the bare quote for a fault (quotes ignored to the next LF)
// ends the record inside that quoted field.

const fs = require('node:fs')
const { spawnSync } = require('node:child_process')
const { parse } = require('csv-parse/sync')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { prng } = require('./helpers/prng')
const { load } = require('../lib')
const { openReader } = require('../lib/read/reader')
const { CsvRow } = require('../lib/read/csv/row')
const { Cutter } = require('../lib/read/cut')
const { shardOf } = require('../lib/read/shard')
const { normalizeLoadOptions } = require('../lib/run/options')
const { describeInput } = require('../lib/read/input')
const { openParallelBatches } = require('../lib/threads/chunks')

let server
let redis
let write

useServer('pipeload-relax-', s => { server = s.srv; redis = s.redis; write = s.write })

const ROWS = 25_000 // ~1.1 MB: several 256 KiB reads, 5+ chunks of 192 KiB

/** A field with bare quotes inside, never at its start. */
function wild (rand, i) {
  const r = rand.next()
  if (r < 0.3) return `37°36'${i % 60}.8"N`
  if (r < 0.55) return `5'${i % 12}"`
  if (r < 0.7) return `a"b"c${i}"`
  return `plain ${i}`
}

/** A field csv-parse and Python read alike: quoted with line breaks, commas and "" inside, or plain. */
function note (rand, i) {
  const r = rand.next()
  if (r < 0.2) return `"line one ${i}\nline ""two"", end\r\n${i}"`
  if (r < 0.35) return `"a lone CR\rin quotes, ${i}"` // data in quotes; outside, a lone CR is refused
  if (r < 0.5) return `"${i}"`
  return `n${i}`
}

function csvText () {
  const rand = prng(22)
  let s = 'id,pos,height,note\n'
  for (let i = 1; i <= ROWS; i++) s += [i, wild(rand, i), wild(rand, i + 1), note(rand, i)].join(',') + '\n'
  return s
}

/** The records as the oracle reads them: Python's csv module, else csv-parse with relax_quotes. */
function oracle (file) {
  const py = spawnSync('python3', ['-c', `
import csv, json, sys
with open(sys.argv[1], newline='', encoding='utf-8') as f:
    print(json.dumps(list(csv.reader(f))))
`, file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (py.status === 0) return { by: 'python', rows: JSON.parse(py.stdout) }
  return { by: 'csv-parse', rows: parse(fs.readFileSync(file), { relax_quotes: true, record_delimiter: ['\n', '\r\n'] }) }
}

let file
let expected

beforeAll(() => {
  file = write('wild.csv', csvText())
  const o = oracle(file)
  expect(o.rows.length).toBe(ROWS + 1)
  expect(fs.statSync(file).size).toBeGreaterThan(4 * 256 * 1024)
  // Every row has its 4 fields, and many hold a bare quote: the file reaches the relaxed paths.
  expect(o.rows.every(r => r.length === 4)).toBe(true)
  expect(o.rows.filter(r => /^[^"]+"/.test(r[1])).length).toBeGreaterThan(ROWS / 2)
  expected = o.rows.slice(1)
})

/** What the prefix's keys hold, as [id, pos, height, note] sorted by id; every key once. */
async function loaded (prefix) {
  const keys = []
  let cursor = '0'
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000)
    keys.push(...batch)
    cursor = next
  } while (cursor !== '0')
  const pipe = redis.pipeline()
  for (const k of keys) pipe.hmget(k, 'pos', 'height', 'note')
  const values = await pipe.exec()
  return keys.map((k, i) => [k.slice(prefix.length), ...values[i][1]]).sort((a, b) => a[0] - b[0])
}

const HSET = prefix => `HSET ${prefix}{id} pos {pos} height {height} note {note}`

describe('--relax-quotes', () => {
  it('the fast tokenizer, the parallel cutter (--workers 2, 5+ chunks) and csv-parse (map) read the file as the oracle does', async () => {
    for (const [tag, args] of [['fast', ['--workers', '0']], ['cut', ['--workers', '2', '--chunk-size', '192KiB']]]) {
      const prefix = `rq:${tag}:`
      const r = await runCli(['import', file, '--relax-quotes', '-c', HSET(prefix), '-u', server.url, '--json', ...args])
      expect(r.stderr, tag).toBe('')
      expect(r.code, tag).toBe(0)
      expect(JSON.parse(r.stdout).records, tag).toBe(ROWS)
      expect(await loaded(prefix), tag).toEqual(expected)
    }
    // map() reads through csv-parse alone (records as strings, not byte ranges).
    const map = row => [['HSET', 'rq:map:' + row.id, 'pos', row.pos, 'height', row.height, 'note', row.note]]
    const summary = await load({ input: file, relaxQuotes: true, map, url: server.url, workers: 0 })
    expect(summary.records).toBe(ROWS)
    expect(await loaded('rq:map:')).toEqual(expected)
  })

  it('the fast tokenizer reads every relaxed row itself (byte ranges), not by handing it to csv-parse', async () => {
    const reader = openReader({ name: 'wild.csv', path: file }, { format: 'csv', rows: true, relaxQuotes: true })
    const rows = []
    let handed = 0
    for await (const b of reader) {
      for (const r of b.records) {
        if (!(r instanceof CsvRow)) handed++
        rows.push(r instanceof CsvRow ? r.toArray() : r)
      }
    }
    expect(handed).toBe(0)
    expect(rows).toEqual(expected)
  })

  it('the cutter (--workers 2) and the --shard range scan cut at record ends: each piece read alone by the oracle gives its rows', async () => {
    const buf = fs.readFileSync(file)
    const alone = b => parse(b, { relax_quotes: true, record_delimiter: ['\n', '\r\n'] }) // csv-parse, not our scan
    // Cutter: 4 KiB chunks (~270 cuts), the input pushed in 256 KiB pieces as files are read.
    const cutter = new Cutter({ format: 'csv', relaxQuotes: true, chunkSize: 4096 })
    const chunks = []
    for (let p = 0; p < buf.length; p += 256 * 1024) chunks.push(...cutter.push(buf.subarray(p, p + 256 * 1024)))
    chunks.push(cutter.end())
    expect(chunks.length).toBeGreaterThan(200)
    expect(chunks.flatMap(c => alone(c.buf)).slice(1)).toEqual(expected)
    // --shard i/40 by byte range: 39 record ends found by scanning from the file's start.
    const desc = { kind: 'bytes', name: 'wild.csv', format: 'csv', path: file, size: buf.length }
    const rows = []
    for (let index = 0; index < 40; index++) {
      const plan = await shardOf(desc, { index, count: 40 }, { header: true, relaxQuotes: true })
      expect(plan.mode).toBe('range')
      rows.push(...alone(buf.subarray(plan.range.start, plan.range.end)))
    }
    expect(rows.slice(1)).toEqual(expected)
  })

  it('--workers 2 parses every chunk in its thread: no chunk fails and sends the rest to the main thread', async () => {
    const o = normalizeLoadOptions({ input: file, relaxQuotes: true, key: 'rq:p:{id}', dryRun: 'resp', workers: 2, chunkSize: 16 * 1024 })
    const src = await openParallelBatches(describeInput(o), o, { n: 2 })
    let records = 0
    for await (const b of src.batches) records += b.records
    expect(records).toBe(ROWS)
    expect(src.sequentialFrom()).toBe(null)
  })

  it('--shard by byte range and by chunk (stdin): 3 shards load every record once', async () => {
    for (const [tag, input] of [['range', file], ['chunks', '-']]) {
      const prefix = `rq:shard-${tag}:`
      for (let i = 0; i < 3; i++) {
        const args = ['import', input, '--format', 'csv', '--relax-quotes', '--shard', `${i}/3`, '-c', HSET(prefix), '-u', server.url, '-q', '--workers', '0']
        const r = await runCli(args, { input: input === '-' ? fs.readFileSync(file) : undefined })
        expect(r.stderr, `${tag} ${i}/3`).toBe('')
        expect(r.code, `${tag} ${i}/3`).toBe(0)
      }
      expect(await loaded(prefix), tag).toEqual(expected)
    }
  })

  it('without it, the refusal names the field once, counted from 1, and suggests --relax-quotes', async () => {
    const small = write('stray.csv', 'id,pos\n1,a\n2,5\'10"\n')
    const r = await runCli(['import', small, '-c', 'SET rq:x:{id} {pos}', '-u', server.url])
    expect(r.code).toBe(3)
    expect(r.stderr).toContain(`${small}:3: Invalid Opening Quote: a quote is found in field 2 "pos", not at its start, value is "5'10"; to read such quotes as data`)
    expect(r.stderr).toContain('use --relax-quotes')
    expect(r.stderr).not.toMatch(/field 1\b/)
    const first = write('stray1.csv', 'id,pos\n1",a\n')
    const r1 = await runCli(['import', first, '-c', 'SET rq:x:{id} {pos}', '-u', server.url])
    expect(r1.stderr).toContain('a quote is found in field 1 "id", not at its start')
  })

  it('relaxQuotes must be a boolean', async () => {
    await expect(load({ input: file, relaxQuotes: 'yes', key: 'x:{id}', dryRun: 'resp', output: fs.createWriteStream('/dev/null') }))
      .rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: 'relaxQuotes must be true or false, got "yes"' })
  })
})
