'use strict'
/* global describe, it, expect */

// lib/read/shard.js at the reader level: for each input and n = 1..5, the records of the n
// shards together are the whole read's, each once, with the same lines, offsets and failures;
// by byte ranges (a plain file) and by chunk numbers (a stream, gzip), chunks down to 1 byte.
const fs = require('node:fs')
const zlib = require('node:zlib')
const { tmpFile, chunked, readAll } = require('./fixtures/readers/helpers')
const { shardOf, openShardReader } = require('../lib/read/shard')
const { CsvRow } = require('../lib/read/csv/row')
const { JsonRow } = require('../lib/read/json/row')
const { Rejected } = require('../lib/read/reader')

const CSV = '\ufeffid,name,note\n1,a,"x\ny"\n2,b,plain\n\n3,"c,d",""""\r\n4,e,"f\n\n""g"""\n5,g,h\n6,"""",""\n7,"i\r\nj",k'
const NDJSON = '{"id":1}\n{"id":2,"t":"a\\nb\\""}\n\n  \n{"id":3}\r\n[1,2]\n{"id":4}\n'
const BAD_CSV = 'a,b\n1,2\n3,4,5\n6,7\n"8\n",9,10\n11,12\n'
const BAD_NDJSON = '{"a":1}\nnope\n{"a":2}\n{"a":\n{"a":3}'

function plain (r) {
  if (r instanceof CsvRow) return r.toArray()
  if (r instanceof JsonRow) return r.toObject()
  if (r instanceof Rejected) return { rejected: r.message }
  return r
}

async function readShard (desc, plan, options) {
  const reader = openShardReader({ ...desc, shard: plan }, options)
  const header = await reader.ready()
  const out = { header, rows: [] }
  for await (const b of reader) {
    b.records.forEach((r, k) => out.rows.push({ record: plain(r), line: b.lines[k], offset: b.offsets[k] }))
  }
  return out
}

/** The whole read as rows { record, line, offset }, and its header. */
async function wholeRead (name, text, options) {
  const file = tmpFile(name, text)
  const whole = await readAll({ name, path: file }, options)
  expect(whole.error).toBeNull()
  return { file, header: whole.columns ?? null, rows: whole.records.map((r, k) => ({ record: plain(r), line: whole.lines[k], offset: whole.offsets[k] })) }
}

function union (parts) {
  return parts.flatMap(p => p.rows).sort((a, b) => a.offset - b.offset)
}

async function checkShards (name, text, options) {
  const whole = await wholeRead(name, text, { ...options, onError: 'skip' })
  const format = options.format
  const size = Buffer.byteLength(text)
  const gz = tmpFile(name + '.gz', zlib.gzipSync(text))
  for (const rows of [false, true]) {
    const opts = { ...options, rows, onError: 'skip' }
    for (let count = 1; count <= 5; count++) {
      const ranges = []
      for (let index = 0; index < count; index++) {
        const desc = { kind: 'bytes', name, format, path: whole.file, size }
        const plan = await shardOf(desc, { index, count }, { header: options.header ?? true })
        expect(plan.mode).toBe('range')
        ranges.push(await readShard(desc, plan, opts))
      }
      expect(union(ranges), `${name} ${count} ranges`).toEqual(whole.rows)
      for (const r of ranges) expect(r.header).toEqual(whole.header)
      for (const chunkSize of [1, 2, 5, 17, 1 << 20]) {
        const streams = []
        const gzips = []
        for (let index = 0; index < count; index++) {
          const plan = { mode: 'chunks', index, count, size: chunkSize }
          streams.push(await readShard({ kind: 'bytes', name, format, stream: chunked(text, 3) }, plan, opts))
          gzips.push(await readShard({ kind: 'bytes', name, format, path: gz }, plan, opts))
        }
        expect(union(streams), `${name} ${count} shards, chunks of ${chunkSize}`).toEqual(whole.rows)
        expect(union(gzips)).toEqual(whole.rows)
        for (const r of streams) expect(r.header).toEqual(whole.header)
      }
    }
  }
}

describe('shards of one input: every record once, at its own line and offset', () => {
  it('csv: BOM, quoted line breaks and quotes near every cut, CRLF, blank lines, no final LF', async () => {
    await checkShards('s.csv', CSV, { format: 'csv' })
  })

  it('headerless csv: the first record\'s field count holds in every shard', async () => {
    await checkShards('h.csv', CSV.replace(/^[^\n]*\n/, ''), { format: 'csv', header: false })
  })

  it('tsv', async () => {
    await checkShards('s.tsv', 'a\tb\n1\t"x\ny"\n2\t3\n"4\t5"\t6\n', { format: 'tsv' })
  })

  it('ndjson', async () => {
    await checkShards('s.ndjson', NDJSON, { format: 'ndjson' })
  })

  it('bad records (skip mode) fail in one shard each, at their own line', async () => {
    await checkShards('bad.csv', BAD_CSV, { format: 'csv' })
    await checkShards('bad.ndjson', BAD_NDJSON, { format: 'ndjson' })
    // Headerless: a shard that starts at the bad row still expects the first record's 2 fields.
    await checkShards('badh.csv', '1,2\n3,4,5\n6,7\n8,9\n', { format: 'csv', header: false })
    const whole = await wholeRead('bad.csv', BAD_CSV, { format: 'csv', onError: 'skip' })
    expect(whole.rows.filter(r => r.record.rejected).map(r => r.line)).toEqual([3, 5])
  })

  it('dirty csv (skip mode): stray quotes in fields and text after closing quotes between quoted line breaks', async () => {
    // Quote parity alone (the byte-range scan and the cutter before) read the lines after a
    // stray quote as quoted, so shards began inside records: records lost or split.
    const dirty = 'id,name,note\n1,ab"c,x\n2,"multi\nline",y\n3,"x"y,z\n4,"a\nb",w\n5,say "hi",v\n6,"p\nq",u\n7,ok,"r\ns"\n8,"t""",ok\n'
    await checkShards('dirty.csv', dirty, { format: 'csv' })
    const whole = await wholeRead('dirty.csv', dirty, { format: 'csv', onError: 'skip' })
    expect(whole.rows.filter(r => r.record.rejected).map(r => r.line)).toEqual([2, 5, 8])
  })

  it('more shards than records: the others read nothing; an empty file', async () => {
    const file = tmpFile('one.csv', 'id\n1\n')
    const desc = { kind: 'bytes', name: 'one.csv', format: 'csv', path: file, size: 5 }
    const got = []
    for (let index = 0; index < 5; index++) got.push((await readShard(desc, await shardOf(desc, { index, count: 5 }, {}), { format: 'csv' })).rows.length)
    expect(got.sort()).toEqual([0, 0, 0, 0, 1])
    const empty = tmpFile('empty.ndjson', '')
    const plan = await shardOf({ kind: 'bytes', name: 'e', format: 'ndjson', path: empty, size: 0 }, { index: 1, count: 2 }, {})
    expect(plan.range).toEqual({ start: 0, end: 0 })
  })

  it('byte ranges: contiguous, each starting at a record and on its real line', async () => {
    const text = 'id,v\n' + Array.from({ length: 50 }, (_, i) => `${i},"${'x\n'.repeat(i % 3)}"`).join('\n') + '\n'
    const file = tmpFile('r.csv', text)
    const desc = { kind: 'bytes', name: 'r.csv', format: 'csv', path: file, size: Buffer.byteLength(text) }
    const plans = []
    for (let index = 0; index < 4; index++) plans.push(await shardOf(desc, { index, count: 4 }, {}))
    expect(plans[0].range.start).toBe(0)
    expect(plans[3].range.end).toBe(desc.size)
    for (let k = 1; k < 4; k++) {
      expect(plans[k].range.start).toBe(plans[k - 1].range.end)
      expect(plans[k].start.offset).toBe(plans[k].range.start)
      expect(plans[k].start.line).toBe(text.slice(0, plans[k].range.start).split('\n').length)
      expect(plans[k].start.columns).toEqual(['id', 'v'])
      expect(text[plans[k].range.start - 1]).toBe('\n')
      expect(text.slice(plans[k].range.start)).toMatch(/^\d+,/) // a record's first field, not a quoted line
    }
  })

  it('gzip files and JSON documents: chunk numbers, and refused', async () => {
    const gz = tmpFile('z.ndjson', zlib.gzipSync('{"a":1}\n'))
    const plan = await shardOf({ kind: 'bytes', name: 'z.ndjson', format: 'ndjson', path: gz, size: fs.statSync(gz).size }, { index: 0, count: 2 }, {})
    expect(plan.mode).toBe('chunks')
    await expect(shardOf({ kind: 'bytes', name: 'd.json', format: 'json', path: gz, size: 1 }, { index: 0, count: 2 }, {})).rejects.toThrow(/JSON document/)
    await expect(shardOf({ kind: 'records', name: '<records>' }, { index: 0, count: 2 }, {})).rejects.toThrow(/iterable/)
  })
})
