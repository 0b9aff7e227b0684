'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// --shard i/n by byte range (lib/read/shard.js) over CSV and TSV files several scan blocks
// (SCAN_BLOCK, 1 MiB) long, with quoted line breaks, escaped quotes, record ends and bad
// records placed on the block edges and on the nominal cut points of every shard count:
// the shards' outputs, in shard order, are every record once with its own {$line}, and
// their failures every bad record's line once.
//
// The oracle is the generator's own list of records (id, value, line) and a RESP encoder of
// a few lines here, not the project's reader, scan or encoder.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PassThrough } = require('node:stream')
const { load } = require('../lib')
const { scaledMs } = require('./helpers/wait')

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-shard-blocks-'))
const MIB = 1024 * 1024
const SIZE = 3 * MIB + 123_457 // the file's exact size: 4 scan blocks, the last partial
const COUNTS = [2, 3, 5, 7]
const COMMAND = 'SET r:{id} {$line}|{v}'

/** RESP of SET r:<id> <line>|<v>, written here from the protocol, not by lib/encode. */
function resp (r) {
  const args = ['SET', `r:${r.id}`, `${r.line}|${r.v}`].map(a => Buffer.from(a))
  return Buffer.concat([Buffer.from(`*${args.length}\r\n`), ...args.flatMap(a => [Buffer.from(`$${a.length}\r\n`), a, Buffer.from('\r\n')])])
}

/**
 * Offsets where something tricky must sit: every block edge, and every nominal cut
 * (floor(k * SIZE / n), which lib/read/shard.js starts its search one byte before).
 */
function targets () {
  const t = new Set()
  for (let k = 1; k * MIB < SIZE; k++) t.add(k * MIB)
  for (const n of COUNTS) for (let k = 1; k < n; k++) t.add(Math.floor(k * SIZE / n))
  return [...t].sort((a, b) => a - b)
}

/**
 * A file of exactly SIZE bytes: { file, good: [{ id, v, line }], bad: [line] }. Near each
 * target, in turn: a quoted line break on it (at -1, 0 or +1), a doubled quote across it, a
 * quoted CRLF across it, a record ending just before it, a ragged (bad) record across it.
 */
function generate (format) {
  const d = format === 'tsv' ? '\t' : ','
  const parts = []
  const good = []
  const bad = []
  let pos = 0
  let line = 1
  let id = 0
  const put = (text, lines) => { parts.push(text); pos += Buffer.byteLength(text); line += lines }
  const quote = v => /[\t,\n\r"]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v
  const record = (v, extra = '') => {
    good.push({ id, v, line })
    put(`${id}${d}${quote(v)}${extra}\n`, 1 + (quote(v).match(/\n/g) || []).length)
    id++
  }
  put(`id${d}v\n`, 1)
  const todo = targets()
  let kind = 0
  while (pos < SIZE - 4096) {
    const t = todo[0]
    if (t !== undefined && pos + 200 > t) {
      todo.shift()
      // Bytes from pos to the target, less the record's start: the value's length before the trick.
      const lead = t - pos - `${id}${d}"`.length
      expect(lead).toBeGreaterThan(10) // targets far enough apart
      const k = kind++ % 7
      if (k <= 2) record('a'.repeat(lead + k - 1) + '\nafter the line break') // LF at t-1, t, t+1 (in quotes)
      else if (k === 3) record('b'.repeat(lead - 1) + '"' + 'quoted') // "" at t-1, t
      else if (k === 4) record('c'.repeat(lead - 1) + '\r\nafter a CRLF') // CR at t-1, LF at t
      else if (k === 5) { // a record that ends at t: the next starts on the target
        const v = 'e'.repeat(t - pos - `${id}${d}`.length - 1)
        record(v)
      } else { // a ragged record across t, then a quoted line break after it
        bad.push(line)
        put(`${id}${d}${'r'.repeat(lead)}${d}x${d}y\n`, 1)
        id++
      }
      continue
    }
    if (id % 5003 === 77) { // a ragged record among the others
      bad.push(line)
      put(`${id}${d}x${d}y\n`, 1)
      id++
      continue
    }
    record(id % 13 === 4 ? `multi\nline ${id}` : id % 17 === 2 ? `sep${d}q "${id}"` : `v${id}`)
  }
  // Pad the last record to exactly SIZE.
  const last = `${id}${d}`
  record('z'.repeat(SIZE - pos - last.length - 1))
  const text = parts.join('')
  expect(Buffer.byteLength(text)).toBe(SIZE)
  expect(todo).toEqual([])
  const file = path.join(tmp, `blocks.${format}`)
  fs.writeFileSync(file, text)
  return { file, good, bad }
}

/** A dry run of one shard into memory: { bytes, summary }. */
async function dryRun (options) {
  const output = new PassThrough()
  const chunks = []
  output.on('data', c => chunks.push(c))
  const summary = await load({ dryRun: 'resp', output, commands: [COMMAND], onError: 'skip', maxFailures: 10_000, ...options })
  return { bytes: Buffer.concat(chunks), summary }
}

describe('--shard i/n by byte range over files several scan blocks long', () => {
  for (const format of ['csv', 'tsv']) {
    it(`${format}: every record once, at its own line, across 2 to 7 shards; every bad line once`, async () => {
      const g = generate(format)
      expect(g.bad.length).toBeGreaterThan(3)
      const want = Buffer.concat(g.good.map(resp))
      for (const count of COUNTS) {
        const outs = []
        const failed = []
        for (let index = 0; index < count; index++) {
          const workers = index % 2 === 1 && count === 3 ? 2 : 0 // a share cut and parsed by 2 threads too
          const r = await dryRun({ input: g.file, shard: { index, count }, workers })
          outs.push(r.bytes)
          failed.push(...r.summary.failures.map(f => f.line))
        }
        const got = Buffer.concat(outs)
        if (!got.equals(want)) {
          const at = [...Array(Math.min(got.length, want.length)).keys()].find(i => got[i] !== want[i])
          expect.fail(`${format}, ${count} shards: ${got.length} bytes, not ${want.length}; first difference at ${at}: ${JSON.stringify(got.subarray(at - 40, at + 40).toString())} / ${JSON.stringify(want.subarray(at - 40, at + 40).toString())}`)
        }
        expect(failed, `${format}, ${count} shards`).toEqual(g.bad)
      }
    }, scaledMs(60_000))
  }
})
