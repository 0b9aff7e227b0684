'use strict'
/* global describe, it, expect, beforeAll */

// --shard i/n end to end: n separate CLI processes, one per shard, into the same server.
// Their union is the plain load, key for key and command for command (--dry-run resp), every
// record once; each shard's failures name the file's real lines. A plain file is split by
// byte ranges; gzip and stdin by ~1 MiB chunk numbers, so those inputs span several chunks.
const fs = require('node:fs')
const path = require('node:path')
const zlib = require('node:zlib')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { prng } = require('./helpers/prng')
const { writeQuery, rowGroupsOf } = require('./helpers/parquet')
const { scaledMs } = require('./helpers/wait')

let server
let redis
let write
let dir
const input = {}

useServer('pipeload-shard-', s => { server = s.srv; redis = s.redis; write = s.write; dir = s.tmp })

/** A CSV note: quoted line breaks, doubled quotes and commas, so cuts fall near quotes. */
function note (rand, i) {
  const r = rand.next()
  if (r < 0.5) return `n${i}`
  if (r < 0.8) return `"a\n""q"",${i}\n"`
  return `"${'"'.repeat(2 * rand.int(3))}x\r\ny"`
}

function csvText (rows, bad, pad = '') {
  const rand = prng(12)
  let s = 'id,name,note\n'
  for (let i = 1; i <= rows; i++) s += bad.has(i) ? `${i},only-two\n` : `${i},name ${i}${pad},${note(rand, i)}\n`
  return s
}

function ndjsonText (rows, bad, pad = '') {
  let s = ''
  for (let i = 1; i <= rows; i++) s += bad.has(i) ? `{"id":${i},\n` : JSON.stringify({ id: i, name: `name ${i}${pad}`, note: i % 3 ? 'x"\ny' : '' }) + '\n'
  return s
}

beforeAll(() => {
  const bad = new Set([2, 77, 150])
  input.csv = write('small.csv', csvText(300, bad))
  input.ndjson = write('small.ndjson', ndjsonText(300, bad))
  // Bigger than 2 MiB: three chunks or more, so chunk numbers spread over the shards. Wide
  // records (~250 bytes): 10,000 of them, not 40,000 narrow ones, as each case loads its
  // input 16 times and reads it back 6 times.
  // Bad rows late: after one, a whole read goes on in csv-parse, ~10x slower than the fast path.
  const wide = ' '.padEnd(240, 'p')
  const big = csvText(10_000, new Set([9_500, 9_999]), wide)
  input.gzip = write('big.csv.gz', zlib.gzipSync(big))
  input.bigNdjson = ndjsonText(10_000, new Set([7, 6_250]), wide)
  expect(Buffer.byteLength(big)).toBeGreaterThan(2 << 20)
  expect(Buffer.byteLength(input.bigNdjson)).toBeGreaterThan(2 << 20)
})

// Parquet (issue 24): shared by row groups, one contiguous run of them per shard; written by
// DuckDB, 7 row groups (the last one short), some ids null (a failed row: the key needs it) in
// the first, a middle and the last group. 7 groups share out unevenly among 2 to 5 shards; DuckDB
// makes no group smaller than 2048 rows, so more groups would only mean more rows to load.
beforeAll(async () => {
  input.parquet = path.join(dir, 'rows.parquet')
  await writeQuery(input.parquet, `SELECT CASE WHEN i IN (3, 7000, 12999) THEN NULL ELSE i END AS id, 'name ' || i AS name,
    CASE WHEN i % 3 = 0 THEN 'x"\ny' ELSE NULL END AS note FROM range(13000) t(i)`, 'COMPRESSION zstd, ROW_GROUP_SIZE 2048')
  expect((await rowGroupsOf(input.parquet)).map(g => g.rows)).toEqual([2048, 2048, 2048, 2048, 2048, 2048, 712])
})

/** Commands of a RESP stream, each as its bytes (latin1), sorted: a multiset. */
function respMultiset (buf) {
  const out = []
  let p = 0
  while (p < buf.length) {
    const start = p
    const nl = buf.indexOf('\r\n', p)
    const n = Number(buf.toString('latin1', p + 1, nl))
    p = nl + 2
    for (let k = 0; k < n; k++) {
      const e = buf.indexOf('\r\n', p)
      p = e + 2 + Number(buf.toString('latin1', p + 1, e)) + 2
    }
    out.push(buf.toString('latin1', start, p))
  }
  return out.sort()
}

const CASES = {
  csv: { file: () => input.csv, args: ['--key', 'u:{id}'] },
  ndjson: { file: () => input.ndjson, args: ['--key', 'u:{id}'] },
  gzip: { file: () => input.gzip, args: ['--key', 'u:{id}'] },
  stdin: { file: () => '-', stdin: () => input.bigNdjson, args: ['--format', 'ndjson', '--key', 'u:{id}'] },
  parquet: { file: () => input.parquet, args: ['--key', 'u:{id}'] }
}

function runCase (c, extra, options = {}) {
  return runCli(['import', c.file(), ...c.args, '--on-error', 'skip', ...extra], { input: c.stdin ? c.stdin() : undefined, ...options })
}

/** Every key of a db with its hash. */
async function contents (db) {
  await redis.select(db)
  const keys = await redis.keys('*')
  const p = redis.pipeline()
  for (const k of keys) p.hgetall(k)
  const values = await p.exec()
  await redis.select(0)
  return Object.fromEntries(keys.map((k, i) => [k, values[i][1]]))
}

describe('--shard i/n: the union of the shards is the whole load', () => {
  for (const [name, c] of Object.entries(CASES)) {
    // n = 4 is left out: its cuts are n = 2's and two more of the same kind; 1, 2, 3 and 5 processes cut each input at 1/2, 1/3, 2/3 and the fifths.
    it(`${name}: n = 1, 2, 3, 5 processes, dry-run resp and a real server`, async () => {
      await redis.flushall() // this test file's own server
      const whole = await runCase(c, ['--dry-run', 'resp'])
      const wholeCommands = respMultiset(whole.stdoutBytes)
      const plain = await runCase(c, ['-u', server.url, '-n', '1', '--json'])
      expect(plain.code, plain.stderr).toBe(1) // the bad rows
      const plainSummary = JSON.parse(plain.stdout)
      const wholeData = await contents(1)
      expect(Object.keys(wholeData).length).toBe(plainSummary.loaded)
      for (const n of [1, 2, 3, 5]) {
        const shards = Array.from({ length: n }, (_, i) => i)
        const dry = await Promise.all(shards.map(i => runCase(c, ['--dry-run', 'resp', '--shard', `${i}/${n}`])))
        const union = dry.flatMap(r => respMultiset(r.stdoutBytes)).sort()
        expect(union.length, `${name}, ${n} shards`).toBe(wholeCommands.length)
        expect(union).toEqual(wholeCommands)

        const db = String(1 + n)
        const runs = await Promise.all(shards.map(i => runCase(c, ['-u', server.url, '-n', db, '--json', '--shard', `${i}/${n}`])))
        const summaries = runs.map(r => JSON.parse(r.stdout))
        for (const [i, r] of runs.entries()) {
          expect([0, 1], r.stderr).toContain(r.code)
          expect(summaries[i].shard).toBe(n === 1 ? null : `${i}/${n}`)
        }
        const sum = k => summaries.reduce((t, s) => t + s[k], 0)
        expect(sum('records')).toBe(plainSummary.records) // every record once
        expect(sum('loaded')).toBe(plainSummary.loaded)
        expect(sum('errors')).toBe(plainSummary.errors)
        // The failures, each in one shard, at the file's real line.
        const failures = summaries.flatMap(s => s.failures.map(f => `${f.file}:${f.line} ${f.code}`)).sort()
        expect(failures).toEqual(plainSummary.failures.map(f => `${f.file}:${f.line} ${f.code}`).sort())
        expect(await contents(Number(db))).toEqual(wholeData)
      }
    }, scaledMs(120_000))
  }

  it('several inputs: each is shared out, the union of the shards is the whole list', async () => {
    const files = [input.csv, input.gzip, input.ndjson]
    const run = extra => runCli(['import', ...files, '--key', 'u:{id}', '--on-error', 'skip', ...extra])
    const whole = await run(['--dry-run', 'resp'])
    const wholeCommands = respMultiset(whole.stdoutBytes)
    const plain = JSON.parse((await run(['-u', server.url, '-n', '8', '--json'])).stdout)
    const plainFailures = plain.failures.map(f => `${f.file}:${f.line}`).sort()
    expect(plainFailures.length).toBeGreaterThan(3)
    for (const n of [2, 3]) {
      const shards = Array.from({ length: n }, (_, i) => i)
      const dry = await Promise.all(shards.map(i => run(['--dry-run', 'resp', '--shard', `${i}/${n}`])))
      const union = dry.flatMap(r => respMultiset(r.stdoutBytes)).sort()
      expect(union.length, `${n} shards`).toBe(wholeCommands.length)
      expect(union).toEqual(wholeCommands)
      const runs = await Promise.all(shards.map(i => run(['-u', server.url, '-n', String(9 + n), '--json', '--shard', `${i}/${n}`])))
      const summaries = runs.map(r => JSON.parse(r.stdout))
      // Every input has a share in every shard (each file is split, not handed out whole).
      for (const s of summaries) expect(s.files.map(f => f.records > 0)).toEqual([true, true, true])
      // Each failure in exactly one shard, at its file's real line.
      expect(summaries.flatMap(s => s.failures.map(f => `${f.file}:${f.line}`)).sort()).toEqual(plainFailures)
      const sum = k => summaries.reduce((t, s) => t + s[k], 0)
      expect(sum('records')).toBe(plain.records)
      expect(sum('loaded')).toBe(plain.loaded)
    }
  }, scaledMs(120_000))

  it('on-error abort: a bad row stops only the shard whose share holds it', async () => {
    // Two chunks from stdin; the first row is bad: shard 1 reads it only to learn the header.
    const text = csvText(30_000, new Set([1]), ' '.padEnd(30, 'p'))
    expect(Buffer.byteLength(text)).toBeGreaterThan(1 << 20)
    const args = ['import', '-', '--format', 'csv', '--key', 'u:{id}', '--dry-run', 'text']
    const [zero, one] = await Promise.all(['0/2', '1/2'].map(s => runCli([...args, '--shard', s], { input: text })))
    expect(zero.code).toBe(3)
    expect(zero.stderr).toMatch(/^pipeload: <stdin>:2: Invalid Record Length/)
    expect(one.code, one.stderr).toBe(0)
    expect(one.stdout).toMatch(/^HSET u:\d+ /)
  })

  it('more shards than records: the others load nothing and exit 0', async () => {
    const file = write('two.csv', 'id,v\n1,a\n2,b\n')
    const runs = await Promise.all([0, 1, 2, 3, 4].map(i => runCli(['import', file, '--key', 'tiny:{id}', '-u', server.url, '-n', '9', '--json', '--shard', `${i}/5`])))
    expect(runs.map(r => r.code)).toEqual([0, 0, 0, 0, 0])
    expect(runs.map(r => JSON.parse(r.stdout).records).sort()).toEqual([0, 0, 0, 1, 1])
    expect(await contents(9)).toEqual({ 'tiny:1': { id: '1', v: 'a' }, 'tiny:2': { id: '2', v: 'b' } })
  })

  it('--workers 1: the plan crosses into the encode thread', async () => {
    const whole = respMultiset((await runCase(CASES.csv, ['--dry-run', 'resp'])).stdoutBytes)
    for (const c of [CASES.csv, CASES.gzip]) {
      const base = respMultiset((await runCase(c, ['--dry-run', 'resp'])).stdoutBytes)
      const runs = await Promise.all([0, 1, 2].map(i => runCase(c, ['--dry-run', 'resp', '--workers', '1', '--shard', `${i}/3`])))
      expect(runs.flatMap(r => respMultiset(r.stdoutBytes)).sort()).toEqual(base)
    }
    expect(whole.length).toBeGreaterThan(0)
  }, scaledMs(60_000))
})

describe('--shard: how it is given and refused', () => {
  it('PIPELOAD_SHARD when --shard is not given; --shard wins', async () => {
    const c = CASES.csv
    const byEnv = await runCase(c, ['--dry-run', 'resp'], { env: { PIPELOAD_SHARD: '1/3' } })
    const byFlag = await runCase(c, ['--dry-run', 'resp', '--shard', '1/3'])
    expect(byEnv.stdout).toBe(byFlag.stdout)
    expect(byEnv.stderr).toMatch(/^wrote resp for \d+ of \d+ records \(\d+ commands\) from .*small\.csv \(shard 1\/3\) in /m)
    const whole = await runCase(c, ['--dry-run', 'resp'])
    expect(byEnv.stdout.length).toBeLessThan(whole.stdout.length)
    const both = await runCase(c, ['--dry-run', 'resp', '--shard', '1/3'], { env: { PIPELOAD_SHARD: '0/3' } })
    expect(both.stdout).toBe(byFlag.stdout)
    const empty = await runCase(c, ['--dry-run', 'resp'], { env: { PIPELOAD_SHARD: '' } })
    expect(empty.stdout).toBe(whole.stdout)
  })

  it('invalid specs: one line, exit 2', async () => {
    const cases = [
      [['--shard', '4/4'], /^pipeload: --shard must be i\/n with 0 ≤ i < n.*shards count from 0: the last of 4 is 3\/4.*got "4\/4"\n$/],
      [['--shard', '1'], /^pipeload: --shard must be i\/n .*got "1"\n$/],
      [['--shard', 'a/b'], /got "a\/b"\n$/],
      [['--shard', '-1/3'], /got "-1\/3"\n$/],
      [['--shard', '0/0'], /got "0\/0"\n$/]
    ]
    for (const [args, message] of cases) {
      const r = await runCase(CASES.csv, ['--dry-run', 'resp', ...args])
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr).toMatch(message)
    }
    const env = await runCase(CASES.csv, ['--dry-run', 'resp'], { env: { PIPELOAD_SHARD: '3' } })
    expect(env.code).toBe(2)
    expect(env.stderr).toMatch(/^pipeload: PIPELOAD_SHARD must be i\/n .*got "3"\n$/)
  })

  it('{$n} and a JSON document are refused with --shard; {$line} is fine', async () => {
    const n = await runCli(['import', input.csv, '-c', 'SET r:{$n} {id}', '--shard', '0/2', '--dry-run', 'text'])
    expect(n.code).toBe(2)
    expect(n.stderr).toMatch(/^pipeload: --shard cannot be used with \{\$n\}: .*Use \{\$line\}/)
    const line = await runCli(['import', input.csv, '-c', 'SET r:{$line} {id}', '--shard', '1/2', '--dry-run', 'text'])
    expect(line.code, line.stderr).toBe(0)
    expect(line.stdout).toMatch(/^SET r:\d+ 300$/m)
    const json = write('doc.json', '[{"id":1}]')
    const doc = await runCli(['import', json, '--key', 'd:{id}', '--shard', '0/2', '--dry-run', 'text'])
    expect(doc.code).toBe(2)
    expect(doc.stderr).toMatch(/^pipeload: --shard cannot split .*doc\.json: a JSON document can only be read from its beginning/)
  })

  it('map()\'s ctx.n fails the record with why; ctx.line works', async () => {
    const mod = path.join(dir, 'by-n.cjs')
    fs.writeFileSync(mod, 'module.exports = (r, ctx) => [["SET", "m:" + ctx.n, r.id]]')
    const r = await runCli(['import', input.csv, '--map', mod, '--shard', '0/2', '--dry-run', 'text'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/small\.csv:2: map\(\) threw: shard cannot be used with map\(\)'s ctx\.n/)
  })
})

describe('--shard with --checkpoint: one checkpoint per shard', () => {
  it('a shard resumes its own share; another shard or none is refused', async () => {
    await redis.flushall()
    const file = write('ck.csv', 'id,v\n' + Array.from({ length: 2000 }, (_, i) => `${i + 1},v${i + 1}`).join('\n') + '\n')
    const ck = path.join(dir, 'ck.json')
    await redis.select(10)
    // A key of the wrong type in shard 1's share: the run stops there (WRONGTYPE), checkpointed.
    await redis.set('ck:1500', 'string')
    await redis.select(0)
    const args = ['import', file, '--key', 'ck:{id}', '-u', server.url, '-n', '10', '--checkpoint', ck, '-b', '100']
    const first = await runCli([...args, '--shard', '1/2'])
    expect(first.code).toBe(1)
    expect(first.stderr).toMatch(/ck\.csv:1501: .*WRONGTYPE/)
    const saved = JSON.parse(fs.readFileSync(ck, 'utf8'))
    expect(saved.input.shard).toBe('1/2')
    expect(saved.records).toBeLessThan(1000)

    const other = await runCli([...args, '--shard', '0/2', '--resume'])
    expect(other.code).toBe(2)
    expect(other.stderr).toMatch(/^pipeload: checkpoint .*ck\.json: it was written by shard 1\/2 of .*ck\.csv; this is shard 0\/2: resume with --shard 1\/2/)
    const none = await runCli([...args, '--resume'])
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/this is a run without --shard/)

    await redis.select(10)
    await redis.del('ck:1500')
    await redis.select(0)
    // The failed record stays failed (counted in the checkpoint, as in any resumed run).
    const resumed = await runCli([...args, '--shard', '1/2', '--resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(1)
    const s = JSON.parse(resumed.stdout)
    expect(s.resumedFrom).toBe(saved.records)
    expect(s.errors).toBe(1)
    expect(s.shard).toBe('1/2')
    const zero = await runCli(['import', file, '--key', 'ck:{id}', '-u', server.url, '-n', '10', '--shard', '0/2', '--json'])
    expect(zero.code).toBe(0)
    expect(s.records + JSON.parse(zero.stdout).records).toBe(2000)
    const data = await contents(10)
    expect(Object.keys(data).length).toBe(1999)
    expect(data['ck:1500']).toBeUndefined()
    expect(data['ck:1501']).toEqual({ id: '1501', v: 'v1501' })
    expect(data['ck:2000']).toEqual({ id: '2000', v: 'v2000' })
  }, scaledMs(60_000))
})
