'use strict'
/* global describe, it, expect, beforeAll, afterAll, afterEach, vi */ // vitest globals (see vitest.config.js)

// `workers: 'auto'`, the default: what it decides on a machine with many cores (the core
// count is stubbed; the CI machine has 2) for a dry run, one server, a cluster and a small
// file, and that what it loads is what one thread loads. The rule is docs/workers-and-shards.md "Parallel
// parsing"; its table of cases is in options.test.js.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { PassThrough } = require('node:stream')
const keySlot = require('cluster-key-slot')
const { load } = require('..')
const { useServer } = require('./helpers/redis-server')
const { startCluster } = require('./helpers/cluster')
const { runCli } = require('./helpers/run-cli')

const ROWS = 160_000 // 9 MB: over the size below which auto keeps one thread
let big
let small
let srv
let redis

useServer('pipeload-auto-workers-', s => {
  ({ srv, redis } = s)
  const line = i => `${i},name ${i},user${i}@example.com,"City, ${i % 97}",${(i * 7) % 1000}.5\n`
  let text = 'id,name,email,city,score\n'
  for (let i = 0; i < ROWS; i++) text += line(i)
  big = s.write('big.csv', text)
  small = s.write('small.csv', text.slice(0, text.indexOf('\n', 100_000) + 1))
  expect(fs.statSync(big).size).toBeGreaterThan(8 * 1024 * 1024)
})

/** A dry run into memory: { bytes, summary }. */
async function dryRun (options) {
  const output = new PassThrough()
  const chunks = []
  output.on('data', c => chunks.push(c))
  const summary = await load({ dryRun: 'resp', output, key: 'u:{id}', ...options })
  return { bytes: Buffer.concat(chunks), summary }
}

const md5 = b => crypto.createHash('md5').update(b).digest('hex')

describe('workers auto (the default) on 16 cores', () => {
  afterEach(() => vi.restoreAllMocks())
  const cores = n => vi.spyOn(os, 'availableParallelism').mockReturnValue(n)

  it('a dry run of a large file: 4 workers, the bytes of one thread', async () => {
    const one = await dryRun({ input: big, workers: 0 })
    cores(16)
    const auto = await dryRun({ input: big })
    expect(auto.summary.workers).toBe(4)
    expect(auto.summary.records).toBe(ROWS)
    expect(md5(auto.bytes)).toBe(md5(one.bytes))
    expect(one.summary.workers).toBe(0)
  })

  it('a small file, or 2 cores: one thread', async () => {
    cores(16)
    expect((await dryRun({ input: small })).summary.workers).toBe(0)
    cores(2)
    expect((await dryRun({ input: big })).summary.workers).toBe(0)
  })

  it('one server: one thread (the server is the limit), every row loaded', async () => {
    cores(16)
    const s = await load({ url: srv.url, input: big, key: 'one:{id}' })
    expect(s).toMatchObject({ workers: 0, records: ROWS, loaded: ROWS, errors: 0 })
    expect(await redis.hget(`one:${ROWS - 1}`, 'city')).toBe(`City, ${(ROWS - 1) % 97}`)
  })

  it('the CLI says how many parse workers it used', async () => {
    const r = await runCli(['import', big, '--key', 'u:{id}', '--dry-run', 'resp'], { env: { NODE_OPTIONS: `--require ${path.join(__dirname, 'helpers', 'sixteen-cores.js')}` } })
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/errors: 0 · batches: [\d,]+ · parse workers: 4\n/)
    const one = await runCli(['import', big, '--key', 'u:{id}', '--dry-run', 'resp', '--workers', '0'])
    expect(one.stderr).toMatch(/· parse workers: 0\n/)
    expect(md5(r.stdoutBytes)).toBe(md5(one.stdoutBytes))
  })
})

describe('workers auto (the default) on 16 cores, into a cluster', () => {
  let cluster
  beforeAll(async () => { cluster = await startCluster({ masters: 3 }) })
  afterAll(async () => { if (cluster) await cluster.stop() })
  afterEach(() => vi.restoreAllMocks())

  it('3 masters: 4 workers, every row on the master owning its slot', async () => {
    vi.spyOn(os, 'availableParallelism').mockReturnValue(16)
    const s = await load({ url: cluster.url, input: big, key: 'c:{id}' })
    expect(s).toMatchObject({ workers: 4, records: ROWS, loaded: ROWS, errors: 0 })
    expect(s.cluster.masters).toBe(3)
    // Sampled rows, each read from the master its slot belongs to.
    const owner = new Map()
    for (const [start, end, port] of await cluster.slots()) for (let k = start; k <= end; k++) owner.set(k, port)
    for (const i of [0, 1, 4097, 77_777, ROWS - 1]) {
      const key = `c:${i}`
      const node = cluster.nodes.find(n => n.port === owner.get(keySlot(key)))
      const c = node.client()
      try {
        expect(await c.hget(key, 'email')).toBe(`user${i}@example.com`)
      } finally {
        c.disconnect()
      }
    }
  })
})
