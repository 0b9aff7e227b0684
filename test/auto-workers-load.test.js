'use strict'
/* global describe, it, expect, beforeAll, afterAll, afterEach, vi */ // vitest globals (see vitest.config.js)

// `workers: 'auto'` as load() feeds it, for every rule of docs/workers-and-shards.md "Parallel parsing"
// (lib/threads/modes.js autoWorkers: 0 on 2 cores or fewer, for one server, a cluster of
// one master, a file under 8 MiB; min(cores - 1, 4) for a cluster of several masters or a
// dry run), read from the summary (`workers`) of real loads: the core count is stubbed, the
// cluster sizes are real. auto-workers.test.js checks what is loaded; this, what is decided,
// also for an input after the first (the sink known by then) and one of unknown size.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PassThrough, Readable } = require('node:stream')
const { load } = require('..')
const { useServer } = require('./helpers/redis-server')
const { startCluster } = require('./helpers/cluster')
const { scaledMs } = require('./helpers/wait')

const ROWS = 150_000 // ~8.6 MB: over the size below which auto keeps one thread
let big
let small
let text
let srv

useServer('pipeload-auto-load-', s => {
  srv = s.srv
  const line = i => `${i},name ${i},user${i}@example.com,"City, ${i % 97}",${(i * 7) % 1000}.5\n`
  const rows = ['id,name,email,city,score\n']
  for (let i = 0; i < ROWS; i++) rows.push(line(i))
  text = rows.join('')
  big = s.write('big.csv', text)
  small = s.write('small.csv', text.slice(0, text.indexOf('\n', 100_000) + 1))
  expect(fs.statSync(big).size).toBeGreaterThan(8 * 1024 * 1024)
})

const cores = n => vi.spyOn(os, 'availableParallelism').mockReturnValue(n)
const output = () => new PassThrough().resume()
const dry = options => load({ dryRun: 'resp', output: output(), key: 'w:{id}', ...options })
/** The big file as a stream: its size is not known. */
const stream = () => Readable.from([Buffer.from(text)])

describe('workers auto through load(): dry runs and one server', () => {
  afterEach(() => vi.restoreAllMocks())

  it('a dry run: min(cores - 1, 4) on more than 2 cores, for a file or a stream of unknown size', async () => {
    for (const [n, want] of [[16, 4], [4, 3], [2, 0]]) {
      cores(n)
      expect((await dry({ input: big })).workers, `${n} cores`).toBe(want)
    }
    cores(16)
    expect((await dry({ input: stream(), format: 'csv' })).workers).toBe(4)
  })

  it('a dry run of a file under 8 MiB: 0; of a small file then a big one: the big one gets its workers', async () => {
    cores(16)
    expect((await dry({ input: small })).workers).toBe(0)
    const both = await dry({ input: [small, big] })
    expect(both).toMatchObject({ workers: 4, records: ROWS + (await dry({ input: small })).records })
  })

  it('one server: 0, for a file over 8 MiB, a stream, and a big file after a small one', async () => {
    cores(16)
    const url = srv.url
    expect(await load({ url, input: big, key: 'a1:{id}' })).toMatchObject({ workers: 0, loaded: ROWS })
    expect((await load({ url, input: stream(), format: 'csv', key: 'a2:{id}' })).workers).toBe(0)
    expect((await load({ url, input: [small, big], key: 'a3:{id}' })).workers).toBe(0)
  })
})

describe('workers auto through load(): clusters', () => {
  afterEach(() => vi.restoreAllMocks())

  describe('one master', () => {
    let cluster
    beforeAll(async () => { cluster = await startCluster({ masters: 1 }) })
    afterAll(async () => { if (cluster) await cluster.stop() })

    it('0 workers: the server, not the parse, is the limit (a file, a big file after a small one, a stream)', async () => {
      cores(16)
      expect(await load({ url: cluster.url, input: big, key: 'b1:{id}' })).toMatchObject({ workers: 0, loaded: ROWS, cluster: { masters: 1 } })
      expect((await load({ url: cluster.url, input: [small, big], key: 'b2:{id}' })).workers).toBe(0)
      expect((await load({ url: cluster.url, input: stream(), format: 'csv', key: 'b3:{id}' })).workers).toBe(0)
    })
  })

  describe('three masters', () => {
    let cluster
    beforeAll(async () => { cluster = await startCluster({ masters: 3 }) })
    afterAll(async () => { if (cluster) await cluster.stop() })

    it('min(cores - 1, 4); 0 on 2 cores or for a file under 8 MiB; a big file after a small one gets its workers', async () => {
      cores(3)
      expect(await load({ url: cluster.url, input: big, key: 'c1:{id}' })).toMatchObject({ workers: 2, loaded: ROWS, cluster: { masters: 3 } })
      cores(2)
      expect((await load({ url: cluster.url, input: big, key: 'c2:{id}' })).workers).toBe(0)
      cores(16)
      expect((await load({ url: cluster.url, input: small, key: 'c3:{id}' })).workers).toBe(0)
      const both = await load({ url: cluster.url, input: [small, big], key: 'c4:{id}' })
      expect(both).toMatchObject({ workers: 4, errors: 0 })
      expect(both.loaded).toBe(both.records)
    }, scaledMs(60_000))
  })
})

// Parquet (issue 24): `auto` decides by the same rules, from the file's size; the workers then
// read its row groups side by side (lib/threads/row-groups.js).
describe('workers auto through load(): a Parquet file', () => {
  const { writeQuery } = require('./helpers/parquet')
  let bigParquet
  let smallParquet
  beforeAll(async () => {
    bigParquet = path.join(path.dirname(big), 'big.parquet')
    smallParquet = path.join(path.dirname(big), 'small.parquet')
    // md5 texts do not compress: ~13 MB uncompressed, in 8 row groups.
    await writeQuery(bigParquet, 'SELECT i AS id, md5(i::VARCHAR) AS a, md5((i + 1)::VARCHAR) AS b FROM range(200000) t(i)', 'COMPRESSION uncompressed, ROW_GROUP_SIZE 24576')
    await writeQuery(smallParquet, 'SELECT i AS id, md5(i::VARCHAR) AS a FROM range(1000) t(i)')
    expect(fs.statSync(bigParquet).size).toBeGreaterThan(8 * 1024 * 1024)
  })
  afterEach(() => vi.restoreAllMocks())

  it('a dry run: min(cores - 1, 4) over 8 MiB, 0 under it or on 2 cores; one server: 0', async () => {
    for (const [n, want] of [[16, 4], [3, 2], [2, 0]]) {
      cores(n)
      expect((await dry({ input: bigParquet })).workers, `${n} cores`).toBe(want)
    }
    cores(16)
    expect((await dry({ input: smallParquet })).workers).toBe(0)
    const one = await load({ input: bigParquet, key: 'pq:{id}', url: srv.url })
    expect(one).toMatchObject({ workers: 0, records: 200_000, loaded: 200_000 })
  }, scaledMs(60_000))

  describe('three masters', () => {
    let cluster
    beforeAll(async () => { cluster = await startCluster({ masters: 3 }) })
    afterAll(async () => { if (cluster) await cluster.stop() })

    it('min(cores - 1, 4): the workers read the row groups and hash the slots; every row lands on its master', async () => {
      cores(16)
      const s = await load({ url: cluster.url, input: bigParquet, key: 'pq:{id}' })
      expect(s).toMatchObject({ workers: 4, records: 200_000, loaded: 200_000, errors: 0, cluster: { masters: 3 } })
      const client = cluster.client()
      for (const i of [0, 1, 77_777, 199_999]) expect(await client.hget(`pq:${i}`, 'b'), `row ${i}`).toMatch(/^[0-9a-f]{32}$/)
      expect(await client.hget('pq:12345', 'id')).toBe('12345')
    }, scaledMs(60_000))
  })
})
