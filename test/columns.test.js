'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// --columns / columns: names for a headerless CSV/TSV's columns, or new names for a header's
// (so a header that names a column twice can be loaded). Against a real server, on the
// byte-range fast path (templates) and the csv-parse path (a map function, a multi-character
// delimiter), from the CLI and the library.

const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli: pipeload } = require('./helpers/run-cli')
const { load } = require('..')

let srv
let redis
let write
useServer('pipeload-columns-', s => { ({ srv, redis, write } = s) })

describe('--columns', () => {
  it('names the columns of a --no-header CSV: fields by name, * writes the names (CLI)', async () => {
    const file = write('stations.csv', 'ST01,Paris,48.85\nST02,Lyon,45.76\n')
    const res = await pipeload(['import', file, '--no-header', '--columns', 'id,city,lat', '-c', 'HSET st:{id} * ', '-c', 'SADD st:by-city:{city} {id}', '-u', srv.url, '-q'])
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(await redis.hgetall('st:ST01')).toEqual({ id: 'ST01', city: 'Paris', lat: '48.85' })
    expect(await redis.hgetall('st:ST02')).toEqual({ id: 'ST02', city: 'Lyon', lat: '45.76' })
    expect(await redis.smembers('st:by-city:Lyon')).toEqual(['ST02'])
  })

  it('renames a header that names a column twice (refused without --columns)', async () => {
    const file = write('names.csv', 'id,name,name\n1,Paris,Parigi\n2,Rome,Roma\n')
    const refused = await pipeload(['import', file, '-k', 'dup:{id}', '-u', srv.url, '-q'])
    expect(refused.code).toBe(3)
    expect(refused.stderr).toContain('the header names column "name" twice')
    const res = await pipeload(['import', file, '--columns', 'id,name_fr,name_it', '-k', 'dup:{id}', '-u', srv.url, '-q'])
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(await redis.hgetall('dup:2')).toEqual({ id: '2', name_fr: 'Rome', name_it: 'Roma' })
  })

  it('a count other than the header\'s is a usage error naming both', async () => {
    const file = write('three.csv', 'a,b,c\n1,2,3\n')
    const res = await pipeload(['import', file, '--columns', 'x,y', '-k', 'three:{x}', '-u', srv.url])
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('--columns (columns) names 2 columns, but the header of')
    expect(res.stderr).toContain('has 3: a, b, c')
    expect(await redis.exists('three:1')).toBe(0)
  })

  it('a row with another field count is the usual ragged-row error, on both parse paths', async () => {
    const fast = write('ragged.csv', '1,a\n2,b,extra\n3,c\n')
    const slow = write('ragged2.csv', '1;;a\n2;;b;;extra\n3;;c\n') // a 2-byte delimiter: csv-parse only
    for (const [file, extra] of [[fast, []], [slow, ['--delimiter', ';;']]]) {
      const res = await pipeload(['import', file, '--no-header', '--columns', 'id,v', '-k', 'rag:{id}', '--on-error', 'skip', '-u', srv.url, '-q', ...extra])
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(`${path.basename(file)}:2: Invalid Record Length: --columns names 2 fields, got 3`)
    }
    // Without --columns the first row sets the count: a short first row makes row 2 the bad one too,
    // but here the first row is what --columns says: 1 and 3 are loaded.
    expect(await redis.hgetall('rag:3')).toEqual({ id: '3', v: 'c' })
    expect(await redis.exists('rag:2')).toBe(0)
  })

  it('the first row too is checked against --columns (not taken as the count)', async () => {
    const file = write('first.csv', '1,a,zz\n2,b\n')
    const res = await pipeload(['import', file, '--no-header', '--columns', 'id,v', '-k', 'first:{id}', '--on-error', 'skip', '-u', srv.url, '-q'])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('first.csv:1: Invalid Record Length: --columns names 2 fields, got 3')
    expect(await redis.hgetall('first:2')).toEqual({ id: '2', v: 'b' })
  })

  it('library: columns array, a TSV, the csv-parse path (map gets objects) and a multi-character delimiter', async () => {
    const tsv = write('p.tsv', 'k1\t10\nk2\t20\n')
    const a = await load({ url: srv.url, input: tsv, header: false, columns: ['key', 'score'], command: 'ZADD lib:scores {score} {key}', sameKey: true })
    expect(a.errors).toBe(0)
    expect(await redis.zrange('lib:scores', 0, -1, 'WITHSCORES')).toEqual(['k1', '10', 'k2', '20'])

    const seen = []
    const b = await load({ url: srv.url, input: tsv, header: false, columns: 'key,score', map: r => { seen.push(r); return [['SET', `lib:m:${r.key}`, r.score]] } })
    expect(b.errors).toBe(0)
    expect(seen).toEqual([{ key: 'k1', score: '10' }, { key: 'k2', score: '20' }])
    expect(await redis.get('lib:m:k2')).toBe('20')

    const multi = write('multi.csv', 'h1::h1\nx::y\n')
    const c = await load({ url: srv.url, input: multi, delimiter: '::', columns: ['left', 'right'], key: 'lib:multi:{left}' })
    expect(c.errors).toBe(0)
    expect(await redis.hgetall('lib:multi:x')).toEqual({ left: 'x', right: 'y' })
  })

  it('refuses bad names and non-tabular inputs', async () => {
    const csv = write('ok.csv', 'a\n1\n')
    await expect(load({ url: srv.url, input: csv, columns: ['a', 'a'], key: 'x:{a}' })).rejects.toThrow('columns must be distinct names, got "a" twice')
    await expect(load({ url: srv.url, input: csv, columns: ['a', ''], key: 'x:{a}' })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID' })
    const nd = write('x.ndjson', '{"a":1}\n')
    const res = await pipeload(['import', nd, '--columns', 'a', '-k', 'x:{a}', '-u', srv.url])
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('--columns (columns) names CSV/TSV columns')
  })

  it('import --help lists --columns with an example', async () => {
    const res = await pipeload(['import', '--help'])
    expect(res.code).toBe(0)
    const text = res.stdout.replace(/\s+/g, ' ')
    expect(text).toContain('--columns <names>')
    expect(text).toContain("name a --no-header file's columns, or rename the header's")
    expect(text).toContain("--no-header --columns id,lat,lon --key 'point:{id}'")
  })
})
