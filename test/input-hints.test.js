'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Inputs that parse but are not what their name or --format says: refused at their first bytes
// or their header, before anything is written, with what the input is and the fix (issue 34,
// items 3 and 6). "Nothing written": the test's own server still holds no key.

const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('..')

let srv
let redis
let write
useServer('pipeload-input-hints-', s => { ({ srv, redis, write } = s) })

/** `header` and `rows` records of three fields joined by `d`: ~20 bytes a row. */
function table (d, rows) {
  let s = ['id', 'name', 'v'].join(d) + '\n'
  for (let i = 1; i <= rows; i++) s += [i, `name ${i}`, `value ${i}`].join(d) + '\n'
  return s
}

const ROWS = 20_000 // ~500 KB: more than one 256 KiB read, and several --workers chunks

describe('a header that reads as one column but holds another delimiter (item 3)', () => {
  it('a ;-separated .csv whose template names no column: exit 2 and the delimiter hint, nothing written, in every mode', async () => {
    const file = write('semi.csv', table(';', ROWS))
    const refusal = `pipeload: ${file}:1: the header split on ',' is one column, "id;name;v"; the header contains ';': try --delimiter ';' (if one column is meant, give --delimiter or --columns)\n`
    for (const extra of [[], ['--workers', '2'], ['--workers', '1'], ['--format', 'csv']]) {
      const r = await runCli(['import', file, '--key', 'semi:{$n}', '-u', srv.url, ...extra])
      expect(r.code, extra.join(' ')).toBe(2)
      expect(r.stderr, extra.join(' ')).toBe(refusal)
      expect(await redis.dbsize()).toBe(0)
    }
    // The hint is right: with it the file loads, three fields a row.
    const ok = await runCli(['import', file, '--key', 'semi:{id}', '-u', srv.url, '-q', '--delimiter', ';'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(await redis.hgetall(`semi:${ROWS}`)).toEqual({ id: String(ROWS), name: `name ${ROWS}`, v: `value ${ROWS}` })
    await redis.flushdb()
  })

  it('--format tsv on a comma file: refused the same, the hint naming --format csv', async () => {
    const file = write('comma.txt', table(',', ROWS))
    const r = await runCli(['import', file, '--format', 'tsv', '-c', 'SET tsv:{$n} 1', '-u', srv.url])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`pipeload: ${file}:1: the header split on tabs is one column, "id,name,v"; the header contains ',': try --delimiter ',' or --format csv (if one column is meant, give --delimiter or --columns)\n`)
    expect(await redis.dbsize()).toBe(0)
  })

  it('--columns or --delimiter says one column is meant: it loads as it is', async () => {
    const file = write('one.csv', 'sentence;with;semicolons\nfirst; line\nsecond; line\n')
    const r = await runCli(['import', file, '--columns', 'text', '-c', 'SET one:{$n} {text}', '-u', srv.url, '-q'])
    expect(r.code, r.stderr).toBe(0)
    expect(await redis.mget('one:1', 'one:2')).toEqual(['first; line', 'second; line'])
    const d = await runCli(['import', file, '--delimiter', ',', '-c', 'SET one:{$n} x', '-u', srv.url, '-q'])
    expect(d.code, d.stderr).toBe(0)
    await redis.flushdb()
  })

  it('load() refuses it with PIPELOAD_OPTION_INVALID (option delimiter) before connecting', async () => {
    const file = write('lib-semi.csv', table(';', 10))
    const err = await load({ input: file, key: 'lib:{$n}', url: srv.url }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_OPTION_INVALID')
    expect(err.option).toBe('delimiter')
    expect(err.message).toContain("the header contains ';': try --delimiter ';'")
    expect(await redis.dbsize()).toBe(0)
  })
})
