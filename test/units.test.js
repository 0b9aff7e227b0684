'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 13 item 10: sizes, counts, durations and TTLs with units, one parser for the CLI and
// the library, checked by what a real server holds afterwards and by the batches sent.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')
const { parseCount, parseTtl, parseDuration, parseSize } = require('../lib/run/options')

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
    expect(parseDuration(250, 't')).toBe(250) // a number is ms
    expect(parseDuration('0', 't')).toBe(0) // 0 is the same in every unit
    // A string without a unit is refused (issue 34 item 4): '30' from an environment variable
    // was 30 ms, and a 30 ms --timeout reconnects and re-sends batches over and over.
    for (const v of ['250', '30', ' 30 ', '1.5']) {
      expect(() => parseDuration(v, 'timeout'), v).toThrow(new RegExp(`^timeout must be a duration with a unit, "${v.trim()}s" or "${v.trim()}ms" \\(also m, h, d\\), or a number of milliseconds, got "${v}"$`))
    }
  })

  // Issue 22: the values docs/options.md "Units" gives, written out here, not computed by the parser's table.
  it('sizes: each unit is worth what docs/options.md "Units" says (KB, MB, GB 1024-based as in redis.conf)', () => {
    const table = [
      ['1', 1], ['1b', 1], ['1048576', 1048576],
      ['1kb', 1024], ['1KB', 1024], ['1KiB', 1024], ['1kib', 1024], ['2.5KiB', 2560], ['512KiB', 524288],
      ['1mb', 1048576], ['1MB', 1048576], ['1MiB', 1048576], ['64 MiB', 67108864], ['64mb', 67108864],
      ['1gb', 1073741824], ['1GiB', 1073741824], ['2GB', 2147483648]
    ]
    for (const [text, bytes] of table) expect([text, parseSize(text, 'maxRecordSize')]).toEqual([text, bytes])
    expect(parseSize(4096, 'maxRecordSize')).toBe(4096)
    for (const ambiguous of ['1k', '1m', '1g', '64M', '1kbit', 'MiB', '0KiB']) {
      expect(() => parseSize(ambiguous, 'maxRecordSize'), ambiguous).toThrow(/maxRecordSize must be a size in bytes/)
    }
  })

  it('durations: at most 2^31-1 ms, the longest timer Node.js can set', () => {
    expect(parseDuration('24d', 't')).toBe(2_073_600_000)
    expect(parseDuration(2_147_483_647, 't')).toBe(2_147_483_647)
    expect(parseDuration('2147483647ms', 't')).toBe(2_147_483_647)
    for (const over of ['25d', '30d', '597h', '2147483648ms', 2_147_483_648, '1000000000s']) {
      expect(() => parseDuration(over, 'connectTimeout'), String(over)).toThrow(/connectTimeout must be at most 2147483647 ms \(24.8 days/)
    }
  })

  it('the CLI refuses a duration beyond the timer: --connect-timeout 30d is a usage error, not a connect that fails at once', async () => {
    const file = csv('long.csv', 1)
    for (const [flag, value] of [['--connect-timeout', '30d'], ['--timeout', '25d'], ['--retry-timeout', '600h']]) {
      const r = await runCli(['import', file, '-u', srv.url, '-c', 'SET long:{id} {v}', flag, value])
      expect(r.code, `${flag} ${value}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toBe(`pipeload: ${flag} must be at most 2147483647 ms (24.8 days, the longest timer Node.js can set), such as "24d", got "${value}"\n`)
    }
    expect(await redis.exists('long:1')).toBe(0)
    const b = await runCli(['bench', '-u', srv.url, '--count', '10', '--connect-timeout', '30d'])
    expect(b.code).toBe(2)
    expect(b.stderr).toMatch(/--connect-timeout must be at most 2147483647 ms/)
  })

  it('a duration flag without a unit is refused with the spellings to use, in import and bench', async () => {
    const file = csv('plain.csv', 3)
    for (const flag of ['--timeout', '--retry-timeout', '--connect-timeout']) {
      const r = await runCli(['import', file, '-u', srv.url, '-c', 'SET plain:{id} {v}', flag, '30'])
      expect(r.code, `${flag}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(new RegExp(`^pipeload: ${flag} 30: a duration needs a unit: 30s for seconds, 30ms for milliseconds`))
      expect(r.stderr).not.toMatch(/\n\s+at /)
    }
    expect(await redis.exists('plain:1')).toBe(0)
    for (const [flag, value] of [['--rtt', '50'], ['--jitter', '5'], ['--max-row-time', '10'], ['--connect-timeout', '1.5']]) {
      const args = ['bench', '-u', srv.url, '--count', '10', '--batch-sizes', '10', flag, value]
      if (flag === '--jitter') args.push('--rtt', '1ms')
      const r = await runCli(args)
      expect(r.code, `${flag}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(`pipeload: ${flag} ${value}: a duration needs a unit: ${value}s for seconds, ${value}ms`)
    }
    // 0 is the same in every unit: --max-row-time 0 (never stop) still needs none.
    const zero = await runCli(['bench', '-u', srv.url, '--count', '20', '--batch-sizes', '10', '--max-row-time', '0', '--csv'])
    expect(zero.code, zero.stderr).toBe(0)
    // With a unit, the value reaches the run: 2s is 2000 ms (hangs.test checks the timeout acts).
    const ok = await runCli(['import', file, '-u', srv.url, '-c', 'SET plain:{id} {v}', '--timeout', '2s', '--retry-timeout', '1500ms', '--connect-timeout', '0.5m', '--json'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(await redis.get('plain:3')).toBe('v3')
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

  // Issue 34 item 11: a window is a few batches; its example was a batch size's (5000).
  it('--window 0: refused with examples of a window, and what 1 does', async () => {
    const file = csv('w0.csv', 1)
    const WHY = 'a positive integer such as 4 or 16 (batches awaiting replies at most; 1 sends the next batch once the one before is answered)'
    const res = await runCli(['import', file, '-u', srv.url, '-c', 'SET x:{id} {v}', '--window', '0'])
    expect(res.code).toBe(2)
    expect(res.stderr).toBe(`pipeload: --window must be ${WHY}, got "0"\n`)
    await expect(load({ url: srv.url, input: file, command: 'SET x:{id} {v}', window: 0 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: `window must be ${WHY}, got 0` })
  })

  it('bench --window 0: the same refusal as import, before connecting', async () => {
    const { bench } = require('../lib')
    const WHY = 'a positive integer such as 4 or 16 (batches awaiting replies at most; 1 sends the next batch once the one before is answered)'
    const res = await runCli(['bench', '-u', srv.url, '--window', '0'])
    expect(res.code).toBe(2)
    expect(res.stderr).toBe(`pipeload: --window must be ${WHY}, got "0"\n`)
    await expect(bench({ url: srv.url, window: 0 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: `window must be ${WHY}, got 0` })
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

  it('the library refuses a duration string without a unit before anything is sent, in load() and bench()', async () => {
    const { bench } = require('../lib')
    const file = csv('unitless.csv', 10)
    for (const name of ['timeout', 'retryTimeout', 'connectTimeout']) {
      const err = await load({ url: srv.url, input: file, command: 'SET nu:{id} {v}', [name]: '30' }).then(() => null, e => e)
      expect(err, name).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: `${name} must be a duration with a unit, "30s" or "30ms" (also m, h, d), or a number of milliseconds, got "30"` })
    }
    expect(await redis.exists('nu:1')).toBe(0)
    const err = await bench({ url: srv.url, rtt: '5' }).then(() => null, e => e)
    expect(err).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: expect.stringMatching(/^rtt must be a duration with a unit, "5s" or "5ms"/) })
    // A number stays milliseconds, and '0' needs no unit.
    const s = await load({ url: srv.url, input: file, command: 'SET nu:{id} {v}', timeout: 30_000, retryTimeout: '0', connectTimeout: '5s' })
    expect(s.loaded).toBe(10)
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
