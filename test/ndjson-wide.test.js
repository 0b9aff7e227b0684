'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// NDJSON lines with 200k keys (issue 22 item 3). The fast path's repeated-key check compared
// each key with every one before it: one such line took 87 s, during which Ctrl-C was not
// heard. These tests load such lines and check every pair against the generator's own
// object (a JS Map filled in line order: the last value of a repeated key, at its first
// place, as JSON.parse keeps it); they assert no timing, but the old check takes minutes here.

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { FlatScanner } = require('../lib/read/json/row')

let srv, redis, tmp
useServer('pipeload-ndjson-wide-', s => { ({ srv, redis, tmp } = s) })

const KEYS = 200000

/** A flat line of KEYS pairs (and `extra` text before the closing brace) and the pairs JSON.parse keeps. */
function wideLine (id, { repeat = false, nested = false } = {}) {
  const pairs = new Map([['id', id]])
  const parts = [`"id":"${id}"`]
  for (let i = 0; i < KEYS; i++) {
    const key = repeat && i === KEYS - 1 ? 'k0' : `k${i}`
    const value = i % 3 ? String(i * 7) : `v${i}`
    parts.push(`"${key}":${i % 3 ? value : JSON.stringify(value)}`)
    pairs.set(key, value)
  }
  if (nested) {
    parts.push('"n":{"x":[1,2]}')
    pairs.set('n', '{"x":[1,2]}')
  }
  return { line: `{${parts.join(',')}}`, pairs }
}

function expectHash (got, pairs, label) {
  expect(Object.keys(got).length, label).toBe(pairs.size)
  const wrong = []
  for (const [k, v] of pairs) if (got[k] !== v) wrong.push([k, got[k], v])
  expect(wrong.slice(0, 5), label).toEqual([])
}

describe('NDJSON lines with 200,000 keys', () => {
  it('the fast path reads a flat line, and leaves one with a repeated key to JSON.parse', () => {
    const scanner = new FlatScanner()
    const flat = Buffer.from(wideLine('a').line)
    const row = scanner.scan(flat, 0, flat.length)
    expect(row.n).toBe(KEYS + 1)
    const repeated = Buffer.from(wideLine('b', { repeat: true }).line)
    expect(scanner.scan(repeated, 0, repeated.length)).toBe(null)
    // Repeats among the first keys and the last ones, and keys that differ only in their last byte.
    const late = Buffer.from(`{${Array.from({ length: KEYS }, (_, i) => `"x${i}":1`).join(',')},"x${KEYS - 1}":2}`)
    expect(scanner.scan(late, 0, late.length)).toBe(null)
    const nearly = Buffer.from(`{${Array.from({ length: KEYS }, (_, i) => `"${String(i).padStart(6, '0')}a":1`).join(',')},"000000b":2}`)
    expect(scanner.scan(nearly, 0, nearly.length).n).toBe(KEYS + 1)
  })

  it('every pair of a flat line, one with a repeated key and one with a nested value reaches Redis', async () => {
    const lines = [wideLine('flat'), wideLine('repeat', { repeat: true }), wideLine('nested', { nested: true })]
    const input = path.join(tmp, 'wide.ndjson')
    fs.writeFileSync(input, lines.map(l => l.line).join('\n') + '\n')
    const { load } = require('../lib')
    // {$n} makes `*` build its arguments as an array (not written straight as bytes).
    const s = await load({ url: srv.url, input, command: ['HSET wide:{id} *', 'HSET widen:{$n} *'], workers: 0 })
    expect(s.errors).toBe(0)
    expect(s.records).toBe(3)
    for (const [i, { pairs }] of lines.entries()) {
      expectHash(await redis.hgetall(`wide:${pairs.get('id')}`), pairs, pairs.get('id'))
      expectHash(await redis.hgetall(`widen:${i + 1}`), pairs, `{$n} ${pairs.get('id')}`)
    }
  })

  it('Ctrl-C while wide lines keep coming: exit 130, what was acknowledged is in Redis', async () => {
    const line = wideLine('x').line
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'bin', 'pipeload.js'), 'import', '-', '--format', 'ndjson',
      '-c', 'HSET sig:{$n} *', '--workers', '0', '--batch-size', '1', '-p', String(srv.port)], { stdio: ['pipe', 'pipe', 'pipe'] })
    const err = []
    child.stderr.on('data', d => err.push(d))
    child.stdout.resume()
    child.stdin.on('error', () => {}) // EPIPE once it has exited
    const exited = new Promise(resolve => child.on('close', code => resolve(code)))
    let open = true
    exited.then(() => { open = false })
    const feed = async () => { // one line after another for as long as it runs
      while (open) {
        const full = !child.stdin.write(line + '\n')
        await new Promise(resolve => full ? child.stdin.once('drain', resolve) : setImmediate(resolve))
      }
    }
    feed()
    while (open && await redis.exists('sig:1') === 0) await new Promise(resolve => setTimeout(resolve, 50))
    child.kill('SIGINT')
    const code = await exited
    const stderr = Buffer.concat(err).toString()
    expect(code, stderr).toBe(130)
    const loaded = Number(/loaded ([\d,]+) of/.exec(stderr)[1].replace(/,/g, ''))
    expect(loaded).toBeGreaterThan(0)
    for (let n = 1; n <= loaded; n++) expect(await redis.hlen(`sig:${n}`)).toBe(KEYS + 1)
  })
})
