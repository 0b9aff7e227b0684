'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// The CLI as a user runs it: bin/pipeload.js spawned with process.execPath against a
// private redis-server (never the shared one on 6379: every run names its target with
// -u, -p or REDIS_URL, and the inherited REDIS_URL/REDISCLI_AUTH are removed).

const { spawn } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { startRedis, withDeadPort, useServer } = require('./helpers/redis-server')
const ds = require('./helpers/datasets')
const { runCli: pipeload, ROOT, BIN, BASE_ENV } = require('./helpers/run-cli')
const { version } = require('../package.json')
const { scaledMs } = require('./helpers/wait')
const { load } = require('..')

const CHILD_TIMEOUT_MS = scaledMs(30_000) // on a quiet machine, scaled to this one
const STACK = /\n\s+at /
const PASSWORD_WARNING = /Warning: Using a password with '-a'/

let srv
let redis
let tmp
useServer('pipeload-cli-', s => { ({ srv, redis, tmp } = s) })

/** Drain a readable into one Buffer. */
function collect (stream) {
  const chunks = []
  stream.on('data', (d) => chunks.push(d))
  return () => Buffer.concat(chunks)
}

/**
 * Spawn `consumer` reading `producer`'s stdout through an OS pipe, as a shell's `|` would.
 * The parent's copy of the read end is closed at once: left open (and never read) it
 * would keep the producer's 'close' from firing.
 */
function pipeInto (producer, command, args, opts = {}) {
  const consumer = spawn(command, args, { ...opts, stdio: [producer.stdout, 'pipe', 'pipe'] })
  producer.stdout.destroy()
  return consumer
}

/** Wait for a child to exit; kill it (and fail) if it hangs. */
function exited (child, label) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${label} did not exit within ${CHILD_TIMEOUT_MS} ms`))
    }, CHILD_TIMEOUT_MS)
    child.on('error', (err) => { clearTimeout(timer); reject(err) })
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal }) })
  })
}

/** A file in this run's tmpdir. */
function writeTmp (name, content) {
  const file = path.join(tmp, name)
  fs.writeFileSync(file, content)
  return file
}

/** The lines of a text without the trailing empty one. */
function lines (text) {
  return text.split('\n').filter((l, i, all) => !(l === '' && i === all.length - 1))
}

/** A user error: the exit code and one line on stderr, no stack, nothing on stdout. */
function expectUserError (res, code, pattern) {
  expect(res.stderr).not.toMatch(STACK)
  expect(res.stderr).not.toMatch(/internal error/)
  expect(res.stdout).toBe('')
  expect(res.stderr).toMatch(pattern)
  expect(res.code, res.stderr).toBe(code)
}

async function hashes (prefix, ids, client = redis) {
  const p = client.pipeline()
  for (const id of ids) p.hgetall(prefix + id)
  return (await p.exec()).map(([err, h]) => { expect(err).toBe(null); return h })
}

async function keysWithPrefix (prefix, client = redis) {
  const keys = []
  let cursor = '0'
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = next
    keys.push(...batch)
  } while (cursor !== '0')
  return keys.sort()
}

const CITIES = path.join(ROOT, 'examples', 'data', 'cities.csv')

// A small CSV with a quoted field spanning two lines, so record 3 starts on line 5.
const SMALL_CSV = 'id,name\n1,"two\nlines"\n2,b\n3,c\n'

describe('cli: help and version', () => {
  it('--help lists the import command and exits 0', async () => {
    const res = await pipeload(['--help'])
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/Usage: pipeload/)
    expect(res.stdout).toMatch(/import \[options\] <input\.\.\.>/)
    expect(res.stderr).toBe('')
  })

  it('import --help documents the flags and exits 0', async () => {
    const res = await pipeload(['import', '--help'])
    expect(res.code).toBe(0)
    for (const flag of ['--format', '--no-header', '--delimiter', '--json-path', '--key', '--command', '--ttl',
      '--batch-size', '--window', '--dry-run', '--json', '--quiet', '--url', '--host', '--port', '--pass', '--db']) {
      expect(res.stdout, flag).toContain(flag)
    }
    expect(res.stderr).toBe('')
  })

  it('--version prints the package version and exits 0', async () => {
    const res = await pipeload(['--version'])
    expect(res.code).toBe(0)
    expect(res.stdout.trim()).toBe(version)
  })
})

describe('cli: formats and inputs', () => {
  it('csv file with --key: every record lands as a hash, exactly', async () => {
    const records = ds.generateRecords({ count: 250, seed: 101, extraIds: ['ü-ñ', '007', '7'] })
    const { file } = ds.writeDataset(fs.mkdtempSync(path.join(tmp, 'csv-')), 'csv', records)
    const res = await pipeload(['import', file, '--key', 'cli:csv:{id}', '-u', srv.url])
    expect(res.stderr).not.toMatch(STACK)
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toBe('') // the human summary goes to stderr
    expect(res.stderr).toMatch(/loaded 250 of 250 records/)
    const expected = ds.expectedHashes(records)
    const got = await hashes('cli:csv:', [...expected.keys()])
    expect(got).toEqual([...expected.values()])
    expect((await keysWithPrefix('cli:csv:')).length).toBe(expected.size)
  })

  it('the bundled examples/data/cities.csv loads', async () => {
    const res = await pipeload(['import', CITIES, '-k', 'cli:cities:{id}', '-u', srv.url, '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.hgetall('cli:cities:4')).toMatchObject({ name: 'São Paulo', note: 'Name has a "tilde"' })
    const dataRows = lines(fs.readFileSync(CITIES, 'utf8')).filter((l) => /^\d+,/.test(l)).length
    expect((await keysWithPrefix('cli:cities:')).length).toBe(dataRows)
  })

  it('tsv chosen by the .tsv extension', async () => {
    const file = writeTmp('plain.tsv', 'id\tname\tnote\n1\tAnn Lee\ta,b\n2\tBo\t\n')
    const res = await pipeload(['import', file, '-k', 'cli:tsv:{id}', '-u', srv.url, '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect(await hashes('cli:tsv:', ['1', '2'])).toEqual([
      { id: '1', name: 'Ann Lee', note: 'a,b' },
      { id: '2', name: 'Bo', note: '' }
    ])
  })

  it('tsv chosen by --format tsv for a file with another extension', async () => {
    const file = writeTmp('tabs.txt', 'id\tname\n1\tx,y z\n')
    const res = await pipeload(['import', file, '--format', 'tsv', '-k', 'cli:tsvf:{id}', '-u', srv.url, '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.hgetall('cli:tsvf:1')).toEqual({ id: '1', name: 'x,y z' })
  })

  it('json: the array at --json-path, nested fields by {a.b} and as JSON text in *', async () => {
    const doc = {
      type: 'FeatureCollection',
      meta: { features: [{ id: 'decoy' }] },
      features: [
        { id: 'fr', properties: { name: 'France', capital: 'Paris' }, population: 68 },
        { id: 'jp', properties: { name: 'Japan', capital: 'Tōkyō' }, population: 124 }
      ]
    }
    const file = writeTmp('geo.json', JSON.stringify(doc, null, 2))
    const res = await pipeload(['import', file, '--json-path', 'features',
      '-c', 'SET cli:json:cap:{id} {properties.capital}', '-k', 'cli:json:h:{id}', '-u', srv.url, '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.mget('cli:json:cap:fr', 'cli:json:cap:jp')).toEqual(['Paris', 'Tōkyō'])
    const fr = await redis.hgetall('cli:json:h:fr')
    expect(fr.population).toBe('68')
    expect(JSON.parse(fr.properties)).toEqual(doc.features[0].properties)
    expect(await keysWithPrefix('cli:json:')).toEqual(['cli:json:cap:fr', 'cli:json:cap:jp', 'cli:json:h:fr', 'cli:json:h:jp'])
  })

  it('ndjson with repeated -c and --ttl: the first command\'s key expires, the others keep theirs', async () => {
    const users = [{ id: 'u1', name: 'Ann', tags: ['a'] }, { id: 'u2', name: 'Bo', tags: [] }]
    const file = writeTmp('users.ndjson', users.map((u) => JSON.stringify(u)).join('\n') + '\n')
    const res = await pipeload(['import', file, '-c', 'HSET cli:nd:{id} *', '-c', 'SADD cli:nd:all {id}',
      '--ttl', '120', '-u', srv.url, '--json'])
    expect(res.code, res.stderr).toBe(0)
    const summary = JSON.parse(res.stdout)
    expect(summary).toMatchObject({ records: 2, errors: 0 })
    expect(await redis.hgetall('cli:nd:u1')).toEqual({ id: 'u1', name: 'Ann', tags: '["a"]' })
    expect((await redis.smembers('cli:nd:all')).sort()).toEqual(['u1', 'u2'])
    for (const id of ['u1', 'u2']) {
      const ttl = await redis.ttl(`cli:nd:${id}`)
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(120)
    }
    expect(await redis.ttl('cli:nd:all')).toBe(-1)
  })

  it('gzip is detected by content: .csv.gz, and gzip bytes in a file named .ndjson', async () => {
    const csv = writeTmp('z.csv.gz', ds.gzip('id,name\n1,zipped\n'))
    const nd = writeTmp('z.ndjson', ds.gzip('{"id":"2","name":"zipped too"}\n'))
    const a = await pipeload(['import', csv, '-k', 'cli:gz:{id}', '-u', srv.url, '-q'])
    const b = await pipeload(['import', nd, '-k', 'cli:gz:{id}', '-u', srv.url, '-q'])
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    expect(await hashes('cli:gz:', ['1', '2'])).toEqual([{ id: '1', name: 'zipped' }, { id: '2', name: 'zipped too' }])
  })

  it('stdin: - with --format csv', async () => {
    const res = await pipeload(['import', '-', '--format', 'csv', '-k', 'cli:stdin:{id}', '-u', srv.url, '-q'],
      { input: 'id,name\n1,"from, stdin"\n2,二\n' })
    expect(res.code, res.stderr).toBe(0)
    expect(await hashes('cli:stdin:', ['1', '2'])).toEqual([{ id: '1', name: 'from, stdin' }, { id: '2', name: '二' }])
  })

  it('stdin: --no-header with {0} {1}, gzipped input', async () => {
    const res = await pipeload(['import', '-', '--format', 'csv', '--no-header', '-c', 'SET cli:nh:{0} {1}', '-u', srv.url, '-q'],
      { input: ds.gzip('a,1\nb,"two\nlines"\na,3\n') })
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.mget('cli:nh:a', 'cli:nh:b')).toEqual(['3', 'two\nlines']) // later rows win
    expect(await keysWithPrefix('cli:nh:')).toEqual(['cli:nh:a', 'cli:nh:b'])
  })

  it('stdin without --format is a usage error', async () => {
    const res = await pipeload(['import', '-', '-k', 'cli:nofmt:{id}', '-u', srv.url], { input: 'id\n1\n' })
    expectUserError(res, 2, /--format/)
    expect(await keysWithPrefix('cli:nofmt:')).toEqual([])
  })

  it('--delimiter \';\'', async () => {
    const file = writeTmp('semi.csv', 'id;name;price\n1;"a;b";3,50\n')
    const res = await pipeload(['import', file, '--delimiter', ';', '-k', 'cli:semi:{id}', '-u', srv.url, '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.hgetall('cli:semi:1')).toEqual({ id: '1', name: 'a;b', price: '3,50' })
  })
})

describe('cli: connection flags and environment', () => {
  it('-h 127.0.0.1 -p PORT -n 3 writes into database 3', async () => {
    const res = await pipeload(['import', writeTmp('db3.csv', 'id,v\n1,x\n'), '-k', 'cli:db3:{id}',
      '-h', '127.0.0.1', '-p', String(srv.port), '-n', '3', '-q'])
    expect(res.code, res.stderr).toBe(0)
    const db3 = srv.client({ db: 3 })
    expect(await db3.hgetall('cli:db3:1')).toEqual({ id: '1', v: 'x' })
    expect(await redis.exists('cli:db3:1')).toBe(0)
  })

  it('REDIS_URL from the environment, database from its path', async () => {
    const res = await pipeload(['import', writeTmp('env.csv', 'id,v\n1,x\n'), '-k', 'cli:env:{id}', '-q'],
      { env: { REDIS_URL: `${srv.url}/5` } })
    expect(res.code, res.stderr).toBe(0)
    const db5 = srv.client({ db: 5 })
    expect(await db5.hgetall('cli:env:1')).toEqual({ id: '1', v: 'x' })
    expect(await redis.exists('cli:env:1')).toBe(0)
  })

  it('-u wins over REDIS_URL', () => withDeadPort(async dead => {
    const res = await pipeload(['import', writeTmp('envu.csv', 'id,v\n1,x\n'), '-k', 'cli:envu:{id}', '-u', srv.url, '-q'],
      { env: { REDIS_URL: `redis://127.0.0.1:${dead}` } })
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.hgetall('cli:envu:1')).toEqual({ id: '1', v: 'x' })
  }))
})

describe('cli: authentication never shows the password', () => {
  const PW = 'pw-' + crypto.randomBytes(9).toString('hex')
  let auth
  let authClient
  const file = () => writeTmp('auth.csv', 'id,v\n1,x\n2,y\n')

  beforeAll(async () => {
    // The password is set after start: the harness's readiness check is an
    // unauthenticated PING, which a server started with --requirepass refuses.
    auth = await startRedis()
    const admin = auth.client()
    await admin.config('SET', 'requirepass', PW)
    admin.disconnect()
    authClient = auth.client({ password: PW })
  })
  afterAll(async () => { if (auth) await auth.stop() })

  function expectNoPassword (res) {
    expect(res.stdout).not.toContain(PW)
    expect(res.stderr).not.toContain(PW)
    expect(res.stderr).not.toMatch(STACK)
  }

  it('-a PASSWORD: loads, prints the redis-cli warning', async () => {
    const res = await pipeload(['import', file(), '-k', 'cli:auth-a:{id}', '-p', String(auth.port), '-a', PW])
    expectNoPassword(res)
    expect(res.code, res.stderr).toBe(0)
    expect(res.stderr).toMatch(PASSWORD_WARNING)
    expect(await authClient.hgetall('cli:auth-a:2')).toEqual({ id: '2', v: 'y' })
  })

  it('REDISCLI_AUTH: loads without a warning', async () => {
    const res = await pipeload(['import', file(), '-k', 'cli:auth-env:{id}', '-p', String(auth.port)],
      { env: { REDISCLI_AUTH: PW } })
    expectNoPassword(res)
    expect(res.code, res.stderr).toBe(0)
    expect(res.stderr).not.toMatch(PASSWORD_WARNING)
    expect(await authClient.hgetall('cli:auth-env:1')).toEqual({ id: '1', v: 'x' })
  })

  it('password in the URL, --json summary: no password in the output', async () => {
    const res = await pipeload(['import', file(), '-k', 'cli:auth-url:{id}', '-u', `redis://:${PW}@127.0.0.1:${auth.port}/1`, '--json'])
    expectNoPassword(res)
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).records).toBe(2)
    const db1 = auth.client({ password: PW, db: 1 })
    expect(await db1.hgetall('cli:auth-url:1')).toEqual({ id: '1', v: 'x' })
  })

  const WRONG = 'wrong-' + crypto.randomBytes(6).toString('hex')
  const cases = [
    ['-a wrong', (port) => ['-p', String(port), '-a', WRONG], {}],
    ['REDISCLI_AUTH wrong', (port) => ['-p', String(port)], { REDISCLI_AUTH: WRONG }],
    ['URL with wrong password', (port) => ['-u', `redis://:${WRONG}@127.0.0.1:${port}`], {}],
    ['no password', (port) => ['-p', String(port)], {}]
  ]
  for (const [name, flags, env] of cases) {
    it(`${name}: exit 4, one line naming the server, no password`, async () => {
      const res = await pipeload(['import', file(), '-k', 'cli:auth-bad:{id}', ...flags(auth.port)], { env })
      expectNoPassword(res)
      expect(res.stdout).not.toContain(WRONG)
      expect(res.stderr).not.toContain(WRONG)
      const errLines = lines(res.stderr).filter((l) => !PASSWORD_WARNING.test(l))
      expect(errLines, res.stderr).toHaveLength(1)
      expect(errLines[0]).toMatch(new RegExp(`127\\.0\\.0\\.1:${auth.port}`))
      expect(errLines[0]).toMatch(/auth|password/i)
      expect(res.code, res.stderr).toBe(4)
    })
  }
  it('nothing was written by the failed attempts', async () => {
    expect(await keysWithPrefix('cli:auth-bad:', authClient)).toEqual([])
  })
})

describe('cli: output modes', () => {
  it('--json prints the summary as one JSON document on stdout', async () => {
    const res = await pipeload(['import', CITIES, '-c', 'SET cli:js:{id} {name}', '-c', 'SADD cli:js:ids {id}', '-u', srv.url, '--json'])
    expect(res.code, res.stderr).toBe(0)
    const s = JSON.parse(res.stdout)
    expect(typeof s.records).toBe('number')
    expect(s.records).toBeGreaterThan(0)
    expect(s).toMatchObject({ commands: 2 * s.records, errors: 0, loaded: s.records, failures: [] })
    expect(typeof s.durationMs).toBe('number')
    expect(s.durationMs).toBeGreaterThan(0)
    expect(s.batches).toBeGreaterThanOrEqual(1)
    expect(await redis.scard('cli:js:ids')).toBe(s.records)
    expect(res.stderr).toBe('')
  })

  it('-q prints nothing on success', async () => {
    const res = await pipeload(['import', CITIES, '-k', 'cli:q:{id}', '-u', srv.url, '-q'])
    expect(res.code).toBe(0)
    expect(res.stdout).toBe('')
    expect(res.stderr).toBe('')
    expect(await redis.hget('cli:q:1', 'name')).toBe('Tokyo')
  })

  it('--dry-run text: one command per line, quoted as redis-cli reads it, no server needed', () => withDeadPort(async dead => { // nothing listens: a dry run must not connect
    const file = writeTmp('dry.csv', 'id,name\n1,Ann\n2,"B ""q"" c"\n3,"a\nb"\n4,ü\n5,\n')
    const res = await pipeload(['import', file, '-c', 'HSET cli:dry:{id} name {name}', '-c', 'SADD cli:dry:all {id}',
      '--dry-run', 'text', '-u', `redis://127.0.0.1:${dead}`, '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect(res.stderr).toBe('')
    expect(lines(res.stdout)).toEqual([
      'HSET cli:dry:1 name Ann', 'SADD cli:dry:all 1',
      'HSET cli:dry:2 name "B \\"q\\" c"', 'SADD cli:dry:all 2',
      'HSET cli:dry:3 name "a\\nb"', 'SADD cli:dry:all 3',
      'HSET cli:dry:4 name "ü"', 'SADD cli:dry:all 4',
      'HSET cli:dry:5 name ""', 'SADD cli:dry:all 5'
    ])
  }))

  it('--dry-run resp | redis-cli --pipe loads what a direct run loads', async () => {
    const records = ds.generateRecords({ count: 300, seed: 202, extraIds: ['😀', 'id with space', '007'] })
    const { file } = ds.writeDataset(fs.mkdtempSync(path.join(tmp, 'resp-')), 'csv', records)

    const direct = await pipeload(['import', file, '-k', 'cli:direct:{id}', '-u', srv.url, '-q'])
    expect(direct.code, direct.stderr).toBe(0)

    const producer = spawn(process.execPath, [BIN, 'import', file, '-k', 'cli:piped:{id}', '--dry-run', 'resp', '-q'],
      { cwd: ROOT, env: BASE_ENV, stdio: ['ignore', 'pipe', 'pipe'] })
    const consumer = pipeInto(producer, 'redis-cli', ['-h', '127.0.0.1', '-p', String(srv.port), '--pipe'], { env: BASE_ENV })
    const producerErr = collect(producer.stderr)
    const consumerOut = collect(consumer.stdout)
    const consumerErr = collect(consumer.stderr)
    const [p, c] = await Promise.all([exited(producer, 'pipeload --dry-run resp'), exited(consumer, 'redis-cli --pipe')])
    expect(p.code, producerErr().toString()).toBe(0)
    const cliOut = consumerOut().toString() + consumerErr().toString()
    expect(c.code, cliOut).toBe(0)
    expect(cliOut).toMatch(new RegExp(`errors: 0, replies: ${records.length}\\b`))

    const expected = ds.expectedHashes(records)
    const ids = [...expected.keys()]
    const viaPipe = await hashes('cli:piped:', ids)
    expect(viaPipe).toEqual(await hashes('cli:direct:', ids))
    expect(viaPipe).toEqual([...expected.values()])
    expect((await keysWithPrefix('cli:piped:')).length).toBe(expected.size)
  })

  it('--dry-run resp | head -c 10: a closed pipe ends the run quietly', async () => {
    // Far more than a pipe buffer (64 KiB), so the writer meets EPIPE mid-run.
    const rows = []
    for (let i = 0; i < 30000; i++) rows.push(`${i},value-${i}-${'x'.repeat(40)}`)
    const file = writeTmp('big.csv', rows.join('\n') + '\n')
    const producer = spawn(process.execPath, [BIN, 'import', file, '--no-header', '-c', 'SET cli:epipe:{0} {1}',
      '--dry-run', 'resp', '-u', srv.url], { cwd: ROOT, env: BASE_ENV, stdio: ['ignore', 'pipe', 'pipe'] })
    const head = pipeInto(producer, 'head', ['-c', '10'])
    const producerErr = collect(producer.stderr)
    const headOut = collect(head.stdout)
    const [p, h] = await Promise.all([exited(producer, 'pipeload --dry-run resp'), exited(head, 'head -c 10')])
    const stderr = producerErr().toString()
    expect(h.code).toBe(0)
    expect(headOut().toString()).toBe('*3\r\n$3\r\nSE')
    expect(stderr).not.toMatch(/EPIPE|Error|internal|write after end/)
    expect(stderr).not.toMatch(STACK)
    // README (exit codes, PIPELOAD_OUTPUT_CLOSED): a closed pipe is not an error, exit 0.
    // Node ignores SIGPIPE, so a signal or a shell-style 141 would both be bugs here.
    expect(p).toEqual({ code: 0, signal: null })
    expect(await keysWithPrefix('cli:epipe:')).toEqual([])
  })
})

describe('cli: exit codes', () => {
  it('1: an error reply (WRONGTYPE) fails that record, reported as file:line; with --on-error skip the others load', async () => {
    const file = writeTmp('wrongtype.csv', SMALL_CSV)
    await redis.set('cli:wt:3', 'a string')
    const res = await pipeload(['import', file, '-k', 'cli:wt:{id}', '-u', srv.url, '--json', '--on-error', 'skip'])
    expect(res.stderr).not.toMatch(STACK)
    expect(res.stderr).toContain(`${file}:5: WRONGTYPE`)
    expect(res.code, res.stderr).toBe(1)
    const s = JSON.parse(res.stdout)
    expect(s).toMatchObject({ records: 3, errors: 1, loaded: 2 })
    expect(s.failures).toHaveLength(1)
    expect(s.failures[0]).toMatchObject({ line: 5 })
    expect(await hashes('cli:wt:', ['1', '2'])).toEqual([{ id: '1', name: 'two\nlines' }, { id: '2', name: 'b' }])
    expect(await redis.get('cli:wt:3')).toBe('a string')
  })

  it('1: the human summary counts the failure', async () => {
    const file = writeTmp('wrongtype2.csv', SMALL_CSV)
    await redis.set('cli:wt2:1', 'a string')
    const res = await pipeload(['import', file, '-k', 'cli:wt2:{id}', '-u', srv.url])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain(`${file}:2: WRONGTYPE`)
    expect(res.stderr).toMatch(/errors: 1\b/)
    expect(res.stderr).not.toMatch(STACK)
  })

  const usage = [
    ['an unknown flag', ['--bogus'], /^pipeload: unknown option "--bogus"\n$/],
    ['--batch-size 0', ['-k', 'k:{id}', '--batch-size', '0'], /batch.?size/i],
    ['--batch-size abc', ['-k', 'k:{id}', '--batch-size', 'abc'], /batch.?size/i],
    ['neither --key nor -c', [], /--key/],
    ['an unknown --format', ['-k', 'k:{id}', '--format', 'xml'], /xml/],
    ['--ttl abc', ['-k', 'k:{id}', '--ttl', 'abc'], /ttl/],
    ['--json with --dry-run', ['-k', 'k:{id}', '--json', '--dry-run', 'text'], /--json/],
    ['a bad template', ['-c', 'SET k:{id'], /\{id|template/i]
  ]
  for (const [name, flags, pattern] of usage) {
    it(`2: ${name}`, async () => {
      const res = await pipeload(['import', CITIES, '-u', srv.url, ...flags])
      expectUserError(res, 2, pattern)
    })
  }

  it('2: no input argument, an unknown command', async () => {
    expectUserError(await pipeload(['import', '-u', srv.url]), 2, /^pipeload: missing required argument 'input'\n$/)
    expectUserError(await pipeload(['frobnicate']), 2, /^pipeload: unknown command "frobnicate"\n$/)
  })

  // Issue 34 item 11: commander's "error: unknown option '--x'" (and its "(Did you mean …?)"
  // on a second line) beside our "pipeload: …" and the library's 'unknown option "x"': one
  // prefix and one form, for import, bench and the program alike.
  it('2: an unknown option has one form wherever it is given, as the library says it', async () => {
    for (const args of [['import', CITIES, '--bogus'], ['bench', '--bogus'], ['--bogus']]) {
      expectUserError(await pipeload(args), 2, /^pipeload: unknown option "--bogus"\n$/)
    }
    expectUserError(await pipeload(['import', CITIES, '-k', 'k:{id}', '--bach-size', '5']), 2, /^pipeload: unknown option "--bach-size": did you mean "--batch-size"\?\n$/)
    expectUserError(await pipeload(['imprt', CITIES]), 2, /^pipeload: unknown command "imprt": did you mean "import"\?\n$/)
    await expect(load({ input: CITIES, key: 'k:{id}', batchsize: 5 })).rejects.toThrow('unknown option "batchsize": did you mean "batchSize"?')
  })

  it('3: a missing file', async () => {
    const missing = path.join(tmp, 'does-not-exist.csv')
    const res = await pipeload(['import', missing, '-k', 'cli:missing:{id}', '-u', srv.url])
    expectUserError(res, 3, missing)
    expect(lines(res.stderr)).toHaveLength(1)
  })

  it('3: a row with too many fields stops the run with file:line', async () => {
    const file = writeTmp('bad-length.csv', 'id,a\n1,x\n2,"y\nz",extra\n3,w\n')
    const res = await pipeload(['import', file, '-k', 'cli:badlen:{id}', '-u', srv.url])
    expectUserError(res, 3, new RegExp(`${file.replace(/[.]/g, '\\.')}:3: .*(field|length)`, 'i'))
    expect(await redis.exists('cli:badlen:3')).toBe(0)
  })

  it('3: an unclosed quote stops the run with file:line', async () => {
    const file = writeTmp('bad-quote.csv', 'id,a\n1,x\n2,"never closed\n3,y\n')
    const res = await pipeload(['import', file, '-k', 'cli:badq:{id}', '-u', srv.url])
    expectUserError(res, 3, `${file}:3: `)
    expect(res.stderr).toMatch(/quote/i)
  })

  it('3: an NDJSON line that is not JSON, with file:line', async () => {
    const file = writeTmp('bad.ndjson', '{"id":1}\n{"id":2}\n{bad\n{"id":4}\n')
    const res = await pipeload(['import', file, '-k', 'cli:badnd:{id}', '-u', srv.url])
    expectUserError(res, 3, `${file}:3: `)
    expect(await redis.exists('cli:badnd:4')).toBe(0)
  })

  it('4: an unreachable server, one line naming host:port (-u and -h/-p)', () => withDeadPort(async dead => {
    for (const flags of [['-u', `redis://127.0.0.1:${dead}`], ['-h', '127.0.0.1', '-p', String(dead)]]) {
      const res = await pipeload(['import', CITIES, '-k', 'cli:dead:{id}', ...flags])
      expectUserError(res, 4, `127.0.0.1:${dead}`)
      expect(lines(res.stderr), res.stderr).toHaveLength(1)
    }
  }))

  it('4: an unreachable server given by a URL with a password: the password is not shown', () => withDeadPort(async dead => {
    const secret = 'hidden-' + crypto.randomBytes(6).toString('hex')
    const res = await pipeload(['import', CITIES, '-k', 'cli:dead:{id}', '-u', `redis://someone:${secret}@127.0.0.1:${dead}`])
    expectUserError(res, 4, `127.0.0.1:${dead}`)
    expect(res.stderr).not.toContain(secret)
  }))
})
