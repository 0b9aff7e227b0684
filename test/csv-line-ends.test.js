'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// CSV/TSV line ends end to end, against a private redis-server: LF and CRLF mixed in one
// file load with no CR in any key or value (the CLI's fast path, csv-parse through the
// library's map(), a multi-byte delimiter); a lone CR outside quotes is bad input with its
// line, exit 3 with --on-error abort, a rejected record with skip.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')

const STACK = /\n\s+at /

let srv
let redis
let tmp
let n = 0
useServer('pipeload-eol-', s => { ({ srv, redis, tmp } = s) })

function setup (name, content) {
  const prefix = `eol${++n}:`
  const dir = fs.mkdtempSync(path.join(tmp, 'c-'))
  const file = path.join(dir, name)
  fs.writeFileSync(file, content)
  return { prefix, file, dir }
}

/** Every hash under prefix, as { key: { field: value } }. */
async function hashes (prefix) {
  const keys = (await redis.keys(prefix + '*')).sort()
  const out = {}
  for (const k of keys) out[k] = await redis.hgetall(k)
  return out
}

// The key field is the last column, where a CRLF's CR used to stay (k:1\r).
const MIXED = 'name,id\nann,1\r\n"bob",2\n"c\r\ny",3\r\n,4'
const LOADED = p => ({
  [`${p}1`]: { name: 'ann', id: '1' },
  [`${p}2`]: { name: 'bob', id: '2' },
  [`${p}3`]: { name: 'c\r\ny', id: '3' }, // a CRLF inside quotes is data
  [`${p}4`]: { name: '', id: '4' }
})

describe('CSV line ends against a server', () => {
  it('CLI: an LF header with CRLF and LF rows gives keys and values without CR', async () => {
    const s = setup('mixed.csv', MIXED)
    const res = await runCli(['import', s.file, '--key', `${s.prefix}{id}`, '-u', srv.url, '--workers', '0'])
    expect(res.code, res.stderr).toBe(0)
    expect(await hashes(s.prefix)).toEqual(LOADED(s.prefix))
  })

  it('CLI: a CRLF header with LF rows, TSV', async () => {
    const s = setup('mixed.tsv', 'name\tid\r\nann\t1\nbob\t2\r\n')
    const res = await runCli(['import', s.file, '--key', `${s.prefix}{id}`, '-u', srv.url, '--workers', '0'])
    expect(res.code, res.stderr).toBe(0)
    expect(await hashes(s.prefix)).toEqual({ [`${s.prefix}1`]: { name: 'ann', id: '1' }, [`${s.prefix}2`]: { name: 'bob', id: '2' } })
  })

  it('CLI: a multi-byte delimiter (csv-parse throughout)', async () => {
    const s = setup('mixed-multi.csv', MIXED.replace(/,/g, '||'))
    const res = await runCli(['import', s.file, '--delimiter', '||', '--key', `${s.prefix}{id}`, '-u', srv.url, '--workers', '0'])
    expect(res.code, res.stderr).toBe(0)
    expect(await hashes(s.prefix)).toEqual(LOADED(s.prefix))
  })

  it('library: map() (csv-parse throughout) gets records without CR', async () => {
    const s = setup('mixed-map.csv', MIXED)
    const seen = []
    const summary = await load({
      url: srv.url,
      input: s.file,
      workers: 0,
      // A CSV row with a header reaches map() as an object of column → text.
      map: ({ name, id }) => { seen.push(id); return [['HSET', `${s.prefix}${id}`, 'name', name, 'id', id]] }
    })
    expect(summary).toMatchObject({ loaded: 4, errors: 0 })
    expect(seen).toEqual(['1', '2', '3', '4'])
    expect(await hashes(s.prefix)).toEqual(LOADED(s.prefix))
  })

  it('CLI: a lone CR is exit 3 naming its line; nothing after it is loaded', async () => {
    const s = setup('lone.csv', 'name,id\nann,1\r\nb\rob,2\ncy,3\n')
    const res = await runCli(['import', s.file, '--key', `${s.prefix}{id}`, '-u', srv.url, '--workers', '0'])
    expect(res.code, res.stderr).toBe(3)
    expect(res.stderr).not.toMatch(STACK)
    expect(res.stderr.split('\n')[0]).toBe(`pipeload: ${s.file}:3: Lone CR in field 1 "name": a carriage return not followed by a line feed, outside quotes (lines end with LF or CRLF)`)
    expect(Object.keys(await hashes(s.prefix))).toEqual([`${s.prefix}1`])
  })

  it('CLI --on-error skip: the record with a lone CR is rejected with its line, the rest loaded', async () => {
    const s = setup('lone-skip.csv', 'name,id\nann,1\r\nbob,2\r\r\ncy,3\n')
    const rejects = path.join(s.dir, 'rejects.ndjson')
    const res = await runCli(['import', s.file, '--key', `${s.prefix}{id}`, '-u', srv.url, '--workers', '0', '--on-error', 'skip', '--rejects', rejects])
    expect(res.code, res.stderr).toBe(1)
    expect(res.stderr).toContain(`${s.file}:3: Lone CR in field 2 "id"`)
    expect(await hashes(s.prefix)).toEqual({ [`${s.prefix}1`]: { name: 'ann', id: '1' }, [`${s.prefix}3`]: { name: 'cy', id: '3' } })
    const lines = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(lines).toEqual([{
      file: s.file,
      line: 3,
      offset: Buffer.from('name,id\nann,1\r\n').length,
      code: 'PIPELOAD_INPUT_INVALID',
      reason: 'Lone CR in field 2 "id": a carriage return not followed by a line feed, outside quotes (lines end with LF or CRLF)',
      source: 'input',
      raw: 'bob,2\r'
    }])
  })
})
