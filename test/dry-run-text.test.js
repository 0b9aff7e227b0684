'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// --dry-run text writes a long argument quoted a piece at a time (lib/encode/resp.js
// writeTextLines), never as one string: a value quoted as \xHH is 4 times as long, and a
// 150 MB field of control bytes, which the real run loads, made the one string pass V8's
// length limit (the run died out of heap after 2 minutes). The pieces are checked here
// with a small piece size against redis-cli's own reading of quoted arguments (an
// unquoter written from its rules below, and redis-cli itself on a real server). A record
// of many fields is one line too (its arguments were spread onto the stack: a million
// fields overflowed it).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile, spawn } = require('node:child_process')
const { writeTextLines } = require('../lib/encode/resp')
const { ByteWriter } = require('../lib/encode/writer')
const { startRedis } = require('./helpers/redis-server')
const { prng } = require('./helpers/prng')
const { BIN, BASE_ENV } = require('./helpers/run-cli')
const { scaledMs } = require('./helpers/wait')

/**
 * One line of redis-cli input as redis-cli splits it (sdssplitargs): arguments separated
 * by spaces; in "…" the escapes \xHH \n \r \t \a \b and \<any>; in '…' only \'. Bytes out.
 */
function splitArgs (line) {
  const args = []
  let i = 0
  while (i < line.length) {
    while (line[i] === 0x20) i++
    if (i >= line.length) break
    const out = []
    if (line[i] === 0x22) {
      i++
      for (;;) {
        const c = line[i]
        if (c === undefined) throw new Error('unbalanced quotes')
        if (c === 0x5c && line[i + 1] === 0x78 && /^[0-9a-fA-F]{2}$/.test(String.fromCharCode(line[i + 2], line[i + 3]))) {
          out.push(parseInt(String.fromCharCode(line[i + 2], line[i + 3]), 16))
          i += 4
        } else if (c === 0x5c) {
          const e = line[i + 1]
          out.push({ 110: 10, 114: 13, 116: 9, 97: 7, 98: 8 }[e] ?? e)
          i += 2
        } else if (c === 0x22) {
          i++
          if (i < line.length && line[i] !== 0x20) throw new Error('closing quote must be followed by a space')
          break
        } else {
          out.push(c)
          i++
        }
      }
    } else {
      while (i < line.length && line[i] !== 0x20) out.push(line[i++])
    }
    args.push(Buffer.from(out))
  }
  return args
}

/** The text as lines of arguments (bytes). */
function readBack (buf) {
  const lines = []
  let s = 0
  for (let e = buf.indexOf(0x0a); e !== -1; s = e + 1, e = buf.indexOf(0x0a, s)) lines.push(splitArgs(buf.subarray(s, e)))
  expect(s).toBe(buf.length) // every line ends with \n
  return lines
}

const POOL = ['a', 'Z', '~', ' ', '"', "'", '\\', '\n', '\r', '\t', '\x01', '\x7f', 'é', '€', '😀', '𝄞']

function randomText (rand, n) {
  let s = ''
  while (s.length < n) s += POOL[Math.floor(rand() * POOL.length)]
  return s
}

function written (commands, piece) {
  const w = new ByteWriter()
  writeTextLines(commands, w, piece)
  return Buffer.from(w.buf.subarray(0, w.pos))
}

describe('--dry-run text: long arguments quoted in pieces', () => {
  it('reads back, as redis-cli reads it, to the same bytes, whatever the piece size (surrogate pairs across pieces, binary values)', () => {
    const rand = prng(22).next
    for (let round = 0; round < 200; round++) {
      const piece = 1 + Math.floor(rand() * 9)
      const commands = []
      for (let c = 0; c < 3; c++) {
        const args = ['HSET', `k:${round}:${c}`]
        for (let a = 0; a < 4; a++) {
          const n = Math.floor(rand() * 40)
          args.push(rand() < 0.25 ? Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256))) : randomText(rand, n))
        }
        commands.push(args)
      }
      const lines = readBack(written(commands, piece))
      expect(lines).toEqual(commands.map(args => args.map(a => Buffer.isBuffer(a) ? a : Buffer.from(a, 'utf8'))))
    }
  })

  it('a value too long for one piece, long runs of plain text too, is written whole', () => {
    const value = 'plain'.repeat(1000) + '\x01'.repeat(5000) + '😀'.repeat(3000)
    const [[, , arg]] = readBack(written([['SET', 'k', value]], 64))
    expect(arg.equals(Buffer.from(value, 'utf8'))).toBe(true)
    const [[, , plain]] = readBack(written([['SET', 'k', 'p'.repeat(1000)]], 64))
    expect(plain.toString()).toBe('p'.repeat(1000))
  })

  it('a lone surrogate in a long value is refused as in a short one', () => {
    expect(() => written([['SET', 'k', 'a'.repeat(100) + '\ud800' + 'b'.repeat(100)]], 16)).toThrow(/no UTF-8 form/)
  })
})

describe('--dry-run text | redis-cli', () => {
  let srv
  let dir
  beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-dry-text-')) })
  afterAll(async () => {
    await srv?.stop()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('a record with a field of 1M characters that quotes to 2 MB (many pieces of 64K) loads exactly that field', async () => {
    srv = await startRedis()
    const rand = prng(7).next
    const value = randomText(rand, 1_000_000).replace(/[\r\n]/g, '\t') // one NDJSON line: JSON escapes the rest
    const file = path.join(dir, 'wide.ndjson')
    fs.writeFileSync(file, JSON.stringify({ id: 1, v: value }) + '\n' + JSON.stringify({ id: 2, v: 'short' }) + '\n')
    const text = await new Promise((resolve, reject) => {
      execFile(process.execPath, [BIN, 'import', file, '-c', 'SET dt:{id} {v}', '--dry-run', 'text', '-q'], { env: BASE_ENV, encoding: 'buffer', maxBuffer: 64 << 20 }, (err, stdout) => err ? reject(err) : resolve(stdout))
    })
    expect(text.length).toBeGreaterThan(1.5 * value.length)
    const cli = spawn('redis-cli', ['-p', String(srv.port)], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    cli.stdout.on('data', d => { out += d })
    cli.stdin.end(text)
    expect(await new Promise(resolve => cli.on('close', resolve))).toBe(0)
    expect(out).toBe('OK\nOK\n')
    const client = srv.client()
    expect(await client.get('dt:1')).toBe(value)
    expect(await client.get('dt:2')).toBe('short')
  }, scaledMs(60_000))

  it('a record of 300,000 fields: one HSET line with every field, in order', async () => {
    const names = ['id']
    const values = ['9']
    for (let i = 0; i < 300_000; i++) { names.push(`f${i}`); values.push(`v ${i}`) }
    const file = path.join(dir, 'fields.csv')
    fs.writeFileSync(file, names.join(',') + '\n' + values.join(',') + '\n')
    const text = await new Promise((resolve, reject) => {
      execFile(process.execPath, [BIN, 'import', file, '-k', 'df:{id}', '--dry-run', 'text', '-q'], { env: BASE_ENV, encoding: 'buffer', maxBuffer: 64 << 20 }, (err, stdout) => err ? reject(err) : resolve(stdout))
    })
    const [line, ...rest] = readBack(text)
    expect(rest).toEqual([])
    expect(line.length).toBe(2 + 2 + 600_000)
    expect(line.slice(0, 4).map(String)).toEqual(['HSET', 'df:9', 'id', '9'])
    for (let i = 0; i < 300_000; i++) {
      if (String(line[4 + 2 * i]) !== `f${i}` || String(line[5 + 2 * i]) !== `v ${i}`) expect.fail(`field ${i}: ${line[4 + 2 * i]} ${line[5 + 2 * i]}`)
    }
  }, scaledMs(60_000))
})
