'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// JSON documents as people meet them, against a real server: --json-path as JSONPath writes
// it, objects keyed by id with {$key}, a wrong path as an error of the whole input, and a
// bad element of a one-line (minified) document named by its index and byte.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli: pipeload } = require('./helpers/run-cli')
const { load } = require('..')

let srv
let redis
let tmp
let write
useServer('pipeload-jsondoc-', s => { ({ srv, redis, tmp, write } = s) })

const API = JSON.stringify({ meta: { page: 1 }, data: { items: [{ id: 'a', v: 1 }, { id: 'b', v: 2 }] } }, null, 2)

describe('--json-path spellings', () => {
  for (const spelling of ['data.items', '$.data.items', 'data.items[*]', '$.data.items[*]']) {
    it(`${spelling} reads the array at data.items (CLI and library)`, async () => {
      const file = write('api.json', API)
      const tag = spelling.replace(/\W/g, '_')
      const res = await pipeload(['import', file, '--json-path', spelling, '-c', `SET sp:${tag}:{id} {v}`, '-u', srv.url, '-q'])
      expect(res.stderr).toBe('')
      expect(res.code).toBe(0)
      expect(await redis.mget(`sp:${tag}:a`, `sp:${tag}:b`)).toEqual(['1', '2'])
      const sum = await load({ url: srv.url, input: file, jsonPath: spelling, command: `SET lib:${tag}:{id} {v}` })
      expect(sum.loaded).toBe(2)
      expect(await redis.get(`lib:${tag}:b`)).toBe('2')
    })
  }

  it('$ and $[*] are the top level', async () => {
    const file = write('top.json', '[{"id":"x","v":"1"}]')
    for (const spelling of ['$', '$[*]']) {
      const res = await pipeload(['import', file, '--json-path', spelling, '-c', 'SET top:{id} {v}', '-u', srv.url, '-q'])
      expect(res.code, res.stderr).toBe(0)
    }
    expect(await redis.get('top:x')).toBe('1')
  })

  it('refuses what it cannot read, with the spellings it takes (exit 2)', async () => {
    const file = write('bad-path.json', '[]')
    const res = await pipeload(['import', file, '--json-path', 'data..items', '-k', 'x:{id}', '-u', srv.url])
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('"$.data.items", "data.items[*]"')
  })
})

describe('an object keyed by id', () => {
  const CODES = { AD: { name: 'Andorra', capital: 'Andorra la Vella' }, AE: { name: 'United Arab Emirates', capital: 'Abu Dhabi' } }

  it('at the top level: each member is a record, {$key} its key; * writes only the value', async () => {
    const file = write('codes.json', JSON.stringify(CODES))
    const res = await pipeload(['import', file, '-c', 'HSET cc:{$key} *', '-c', 'SADD cc:all {$key}', '-u', srv.url, '-q'])
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(await redis.hgetall('cc:AD')).toEqual(CODES.AD)
    expect(await redis.hgetall('cc:AE')).toEqual(CODES.AE)
    expect((await redis.smembers('cc:all')).sort()).toEqual(['AD', 'AE'])
  })

  it('at --json-path, in a pretty-printed document, from the library; an empty object loads nothing', async () => {
    const file = write('wrapped.json', JSON.stringify({ version: 2, countries: CODES }, null, 2))
    const sum = await load({ url: srv.url, input: file, jsonPath: '$.countries', command: 'SET name:{$key} {name}' })
    expect(sum).toMatchObject({ records: 2, loaded: 2, errors: 0 })
    expect(await redis.mget('name:AD', 'name:AE')).toEqual(['Andorra', 'United Arab Emirates'])
    const empty = write('empty-obj.json', '{"countries": {}}')
    expect(await load({ url: srv.url, input: empty, jsonPath: 'countries', command: 'SET never:{$key} {name}' })).toMatchObject({ records: 0, errors: 0 })
  })

  it('a field really named $key wins; {$key} of an array element is a missing field', async () => {
    const own = write('own.json', '{"k1": {"$key": "mine", "v": "1"}}')
    await load({ url: srv.url, input: own, command: 'SET own:{$key} {v}' })
    expect(await redis.get('own:mine')).toBe('1')
    const arr = write('arr.json', '[{"v":"1"}]')
    const err = await load({ url: srv.url, input: arr, command: 'SET arr:{$key} {v}' }).then(() => null, e => e)
    expect(err.summary.failures[0].code).toBe('PIPELOAD_FIELD_MISSING')
    expect(err.summary.failures[0].message).toContain('{$key} is missing')
  })

  it('a member that is not an object fails that record, named by its key; the others load', async () => {
    const file = write('mixed.json', '{"A1":{"v":"1"},"A2":"oops","A3":{"v":"3"}}')
    const rejects = path.join(tmp, 'mixed.rejects')
    const res = await pipeload(['import', file, '-c', 'SET mix:{$key} {v}', '--on-error', 'skip', '--rejects', rejects, '-u', srv.url])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('mixed.json:1: member "A2" (element [1], byte 21): expected an object (a record)')
    expect(await redis.mget('mix:A1', 'mix:A3')).toEqual(['1', '3'])
    const [line] = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(line).toMatchObject({ line: 1, offset: 21, raw: '"oops"' })
    expect(line.reason).toMatch(/^member "A2" \(element \[1\], byte 21\): /)
  })
})

describe('a wrong --json-path', () => {
  const doc = JSON.stringify({ type: 'FeatureCollection', features: [{ id: 'FR' }] }, null, 2)

  it('is an error of the whole input naming --json-path and the keys there: exit 3, no failed record, no rate', async () => {
    const file = write('fc.json', doc)
    const res = await pipeload(['import', file, '--json-path', '$.feature[*]', '-k', 'fc:{id}', '-u', srv.url])
    expect(res.code).toBe(3)
    expect(res.stderr.trim()).toBe(`pipeload: ${file}:8: --json-path "$.feature[*]": no key "feature" in the document (its keys: "type", "features")`)
    expect(res.stderr).not.toMatch(/rows\/s|failed|stopped after/)

    const json = await pipeload(['import', file, '--json-path', 'feature', '-k', 'fc:{id}', '-u', srv.url, '--json'])
    expect(json.code).toBe(3)
    const out = JSON.parse(json.stdout)
    expect(out).toMatchObject({ records: 0, errors: 0, failures: [], error: { code: 'PIPELOAD_INPUT_INVALID' } })
    expect(out.error.message).toContain('--json-path "feature": no key "feature"')
  })

  it('a path through a value that is not an object, or to one that is neither array nor object', async () => {
    const file = write('fc2.json', doc)
    const a = await pipeload(['import', file, '--json-path', 'type.x', '-k', 'fc:{id}', '-u', srv.url])
    expect(a.code).toBe(3)
    expect(a.stderr).toContain('--json-path "type.x": "type" is not an object (got \'"\')')
    const b = await pipeload(['import', file, '--json-path', 'type', '-k', 'fc:{id}', '-u', srv.url])
    expect(b.code).toBe(3)
    expect(b.stderr).toContain('--json-path "type" is not an array or an object')
    const err = await load({ url: srv.url, input: file, jsonPath: 'type', key: 'fc:{id}', onError: 'skip' }).then(() => null, e => e)
    expect(err).toMatchObject({ code: 'PIPELOAD_INPUT_INVALID', exitCode: 3, summary: { records: 0, errors: 0 } })
  })
})

describe('a bad element of a one-line (minified) document', () => {
  function minified () {
    const items = []
    for (let i = 0; i < 6000; i++) items.push(JSON.stringify({ id: `c${i}`, pop: i }))
    items[4711] = '{"id":"c4711","pop":12a}'
    const text = '[' + items.join(',') + ']'
    return { text, offset: text.indexOf(items[4711]) }
  }

  it('is named by its element and byte on the terminal, in --json and in the rejects file', async () => {
    const { text, offset } = minified()
    const file = write('cities.json', text)
    const rejects = path.join(tmp, 'cities.rejects')
    const named = `cities.json:1: element [4711] (byte ${offset}): not valid JSON`

    const res = await pipeload(['import', file, '-c', 'SET mc:{id} {pop}', '--on-error', 'skip', '--rejects', rejects, '-u', srv.url])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain(named)
    const [line] = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(line).toMatchObject({ line: 1, offset, raw: '{"id":"c4711","pop":12a}' })
    expect(line.reason).toMatch(new RegExp(`^element \\[4711\\] \\(byte ${offset}\\): not valid JSON`))
    expect(await redis.get('mc:c5999')).toBe('5999')
    expect(await redis.exists('mc:c4711')).toBe(0)

    const json = await pipeload(['import', file, '-c', 'SET mc2:{id} {pop}', '--on-error', 'skip', '-u', srv.url, '--json'])
    const out = JSON.parse(json.stdout)
    expect(out).toMatchObject({ records: 6000, loaded: 5999, errors: 1 })
    expect(out.failures[0].message).toContain(named)
  })

  it('a pretty-printed document keeps file:line alone (one element per line)', async () => {
    const file = write('pretty.json', '[\n{"id":"1","pop":1},\n{"id":"2","pop":x}\n]')
    const err = await load({ url: srv.url, input: file, command: 'SET pp:{id} {pop}' }).then(() => null, e => e)
    expect(err.message).toMatch(/pretty\.json:3: not valid JSON/)
  })
})

describe('help', () => {
  it('import --help: the --json-path spellings, {$key} and examples', async () => {
    const res = await pipeload(['import', '--help'])
    const text = res.stdout.replace(/\s+/g, ' ')
    expect(text).toContain('$.data.items, data.items[*]; $ = the top level')
    expect(text).toContain('an object keyed by id')
    expect(text).toContain("--json-path '$.data.items[*]' --key 'item:{id}'")
    expect(text).toContain("-c 'HSET country:{$key} *'")
    expect(text).toMatch(/\{\$key\} the member's key/)
  })
})
