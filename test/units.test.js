'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 13 item 10: sizes, counts, durations and TTLs with units, one parser for the CLI and
// the library, checked by what a real server holds afterwards and by the batches sent.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')
const { parseCount, parseTtl, parseDuration } = require('../lib/run/options')

let srv
let redis
let tmp
useServer('pipeload-units-', s => { ({ srv, redis, tmp } = s) })

function csv (name, count) {
  let text = 'id,v\n'
  for (let i = 1; i <= count; i++) text += `${i},v${i}\n`
  const file = path.join(tmp, name)
  fs.writeFileSync(file, text)
  return file
}

describe('units', () => {
  it('parses counts, TTLs and durations with units', () => {
    expect(parseCount('5k')).toBe(5000)
    expect(parseCount('2.5K')).toBe(2500)
    expect(parseCount('1m')).toBe(1_000_000)
    expect(parseCount('1_000')).toBe(1000)
    expect(parseCount('5000')).toBe(5000)
    expect(parseCount('5x')).toBeNaN()
    expect(parseTtl('90s')).toBe(90)
    expect(parseTtl('1h')).toBe(3600)
    expect(parseTtl('7d')).toBe(604800)
    expect(parseTtl('3600')).toBe(3600) // a plain number is seconds
    expect(() => parseTtl('1500ms')).toThrow(/whole number of seconds/)
    expect(parseDuration('2h', 't')).toBe(7_200_000)
    expect(parseDuration('1d', 't')).toBe(86_400_000)
    expect(parseDuration('250', 't')).toBe(250) // a plain number is ms
  })

  it('the CLI takes -b 2k, --max-record-size 64mb, --ttl 1h, --timeout 90s and --max-errors 1k', async () => {
    const file = csv('u.csv', 5000)
    const r = await runCli(['import', file, '-u', srv.url, '-c', 'SET u:{id} {v}', '-b', '2k', '--max-record-size', '64mb',
      '--ttl', '1h', '--timeout', '90s', '--on-error', 'skip', '--max-errors', '1k', '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const s = JSON.parse(r.stdout)
    expect(s.loaded).toBe(5000)
    // 5000 records x (SET + EXPIRE) = 10,000 commands in batches of 2000.
    expect(s.commands).toBe(10000)
    expect(s.batches).toBe(5)
    expect(await redis.get('u:4321')).toBe('v4321')
    const ttl = await redis.ttl('u:4321')
    expect(ttl).toBeGreaterThan(3500)
    expect(ttl).toBeLessThanOrEqual(3600)
  })

  it('the CLI names the option and the units it takes when a value has none it knows', async () => {
    const file = csv('bad.csv', 1)
    const bad = await runCli(['import', file, '-u', srv.url, '-c', 'SET x:{id} {v}', '--ttl', '1500ms'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--ttl must be a whole number of seconds.*"1h".*"1500ms"/)
    const size = await runCli(['import', file, '-u', srv.url, '-c', 'SET x:{id} {v}', '--max-record-size', '64m'])
    expect(size.code).toBe(2)
    expect(size.stderr).toMatch(/--max-record-size must be a size/)
    const count = await runCli(['import', file, '-u', srv.url, '-c', 'SET x:{id} {v}', '-b', '5q'])
    expect(count.code).toBe(2)
    expect(count.stderr).toMatch(/--batch-size must be a positive integer such as 5000 or "5k", got "5q"/)
  })

  it('the library takes the same spellings', async () => {
    const file = csv('lib.csv', 300)
    const s = await load({ url: srv.url, input: file, command: 'SET l:{id} {v}', batchSize: '0.1k', window: '2', ttl: '90s', maxRecordSize: '1MiB' })
    expect(s.loaded).toBe(300)
    expect(s.batches).toBe(6) // 600 commands in batches of 100
    const ttl = await redis.ttl('l:300')
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(90)
  })

  it('bench takes counts with units: --count 2k --batch-sizes 100,1k', async () => {
    const r = await runCli(['bench', '-u', srv.url, '--count', '2k', '--batch-sizes', '100,1k', '--no-baseline', '--csv'])
    expect(r.code).toBe(0)
    const [head, ...rows] = r.stdout.trim().split('\n').map(l => l.split(','))
    const col = name => rows.map(row => row[head.indexOf(name)])
    expect(col('batchSize')).toEqual(['100', '1000'])
    expect(col('ops')).toEqual(['2000', '2000'])
  })

  it('help shows the units', async () => {
    const r = await runCli(['import', '--help'])
    const text = r.stdout.replace(/\s+/g, ' ') // content, not layout
    expect(text).toMatch(/--ttl <duration> .*seconds \(3600\) or 90s, 30m, 1h, 7d/)
    expect(text).toMatch(/--batch-size <n> .*5k/)
    expect(text).toMatch(/1024-based/)
    expect(text).toMatch(/default: 64 MiB/)
  })
})
