'use strict'
/* global describe, it, expect */

// Several inputs in one run: `pipeload import a.csv b.csv 'parts/*.ndjson'` and
// load({ input: [...] }). Each input keeps its own format and header; they load one after
// another through one connection, and the result is that of loading them one by one.
// Failures name their own file:line; the summary counts per file; {$n} goes on over them.

const fs = require('node:fs')
const path = require('node:path')
const zlib = require('node:zlib')
const http = require('node:http')
const { spawn } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { BIN, BASE_ENV } = require('./helpers/run-cli')
const { scriptedServer, usual } = require('./helpers/scripted-server')
const { load } = require('..')

let server
let redis
let dir
let write

useServer('pipeload-multi-', s => { server = s.srv; redis = s.redis; dir = s.tmp; write = s.write })

/** The CLI, run in `cwd` (the test's tmpdir unless given), so relative paths and patterns resolve there. */
function pipeload (args, { cwd = dir, stdin = '' } = {}) {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] })
    const out = []
    let err = ''
    child.stdout.on('data', d => out.push(d))
    child.stderr.on('data', d => { err += d })
    child.stdin.end(stdin)
    child.on('close', code => { const stdout = Buffer.concat(out); resolve({ code, stdoutBytes: stdout, stdout: stdout.toString(), stderr: err }) })
  })
}

/** Three inputs of three shapes: two CSVs with different headers and a gzip NDJSON; a folder of two more. */
function dataset (name) {
  const d = path.join(dir, name)
  fs.mkdirSync(path.join(d, 'parts'), { recursive: true })
  fs.writeFileSync(path.join(d, 'a.csv'), 'id,name\n1,ann\n2,bob\n')
  fs.writeFileSync(path.join(d, 'b.csv'), 'name,id,extra\ncy,3,x\ndee,4,y\neve,5,z\n')
  fs.writeFileSync(path.join(d, 'c.ndjson.gz'), zlib.gzipSync('{"id":6,"name":"fay"}\n{"id":7,"name":"gus"}\n'))
  // Written out of order: the pattern's matches are loaded in byte order all the same.
  fs.writeFileSync(path.join(d, 'parts', 'p2.ndjson'), '{"id":9,"name":"ivy"}\n')
  fs.writeFileSync(path.join(d, 'parts', 'p1.ndjson'), '{"id":8,"name":"hal"}\n')
  return d
}

describe('pipeload import with several inputs', () => {
  it('two CSVs (their own headers), a gzip NDJSON and a pattern: every record, each from its own file and line, {$n} over the run', async () => {
    const d = dataset('all')
    const res = await pipeload(['import', 'a.csv', 'b.csv', 'c.ndjson.gz', 'parts/*.ndjson', '-u', server.url, '--json',
      '-c', 'HSET m1:{id} name {name} from {$file}:{$line} n {$n}'], { cwd: d })
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    const got = {}
    for (let id = 1; id <= 9; id++) got[id] = await redis.hgetall(`m1:${id}`)
    expect(got).toEqual({
      1: { name: 'ann', from: 'a.csv:2', n: '1' },
      2: { name: 'bob', from: 'a.csv:3', n: '2' },
      3: { name: 'cy', from: 'b.csv:2', n: '3' },
      4: { name: 'dee', from: 'b.csv:3', n: '4' },
      5: { name: 'eve', from: 'b.csv:4', n: '5' },
      6: { name: 'fay', from: 'c.ndjson.gz:1', n: '6' },
      7: { name: 'gus', from: 'c.ndjson.gz:2', n: '7' },
      8: { name: 'hal', from: 'parts/p1.ndjson:1', n: '8' },
      9: { name: 'ivy', from: 'parts/p2.ndjson:1', n: '9' }
    })
    const s = JSON.parse(res.stdout)
    expect(s.input).toBe('a.csv, b.csv, c.ndjson.gz, parts/*.ndjson')
    expect(s.records).toBe(9)
    expect(s.loaded).toBe(9)
    expect(s.files).toEqual([
      { input: 'a.csv', started: true, records: 2, loaded: 2, errors: 0, skipped: 0 },
      { input: 'b.csv', started: true, records: 3, loaded: 3, errors: 0, skipped: 0 },
      { input: 'c.ndjson.gz', started: true, records: 2, loaded: 2, errors: 0, skipped: 0 },
      { input: 'parts/p1.ndjson', started: true, records: 1, loaded: 1, errors: 0, skipped: 0 },
      { input: 'parts/p2.ndjson', started: true, records: 1, loaded: 1, errors: 0, skipped: 0 }
    ])
    // Counted over the files, not from 0 in each.
    expect(s.bytesRead).toBeGreaterThan(['a.csv', 'b.csv', 'parts/p1.ndjson', 'parts/p2.ndjson'].reduce((n, f) => n + fs.statSync(path.join(d, f)).size, 0))
  })

  it('the terminal summary has a line per file', async () => {
    const d = dataset('human')
    const res = await pipeload(['import', 'a.csv', 'b.csv', '-u', server.url, '--key', 'm2:{id}'], { cwd: d })
    expect(res.code).toBe(0)
    expect(res.stderr).toMatch(/loaded 5 of 5 records \(5 commands\) from a\.csv, b\.csv into/)
    expect(res.stderr).toMatch(/^ {2}a\.csv: 2 of 2 records loaded$/m)
    expect(res.stderr).toMatch(/^ {2}b\.csv: 3 of 3 records loaded$/m)
  })

  for (const worker of [[], ['--workers', '1']]) {
    it(`--dry-run resp of a b c is byte for byte that of a, b and c run one by one${worker.length ? ' (--worker)' : ''}`, async () => {
      const d = dataset('diff' + worker.length)
      const files = ['a.csv', 'b.csv', 'c.ndjson.gz', 'parts/p1.ndjson']
      const args = ['-c', 'HSET d:{id} name {name} at {$file}:{$line}', '-c', 'SADD d:all {id}', '--batch-size', '2', '--dry-run', 'resp', ...worker]
      const together = await pipeload(['import', ...files, ...args], { cwd: d })
      expect(together.code).toBe(0)
      const apart = []
      for (const f of files) apart.push((await pipeload(['import', f, ...args], { cwd: d })).stdoutBytes)
      expect(together.stdoutBytes.length).toBeGreaterThan(0)
      expect(together.stdoutBytes.equals(Buffer.concat(apart))).toBe(true)
    })
  }

  it('{$n} goes on across files in the worker too', async () => {
    const d = dataset('n-worker')
    const res = await pipeload(['import', 'a.csv', 'b.csv', '-c', 'SET n:{$n} {$file}:{$line}', '--dry-run', 'text', '--workers', '1'], { cwd: d })
    expect(res.stdout).toBe('SET n:1 a.csv:2\nSET n:2 a.csv:3\nSET n:3 b.csv:2\nSET n:4 b.csv:3\nSET n:5 b.csv:4\n')
  })

  it('a pattern that matches nothing: exit 2 naming it, before anything is sent', async () => {
    const d = dataset('nomatch')
    const res = await pipeload(['import', 'a.csv', 'nothing/*.csv', '-u', server.url, '--key', 'nm:{id}'], { cwd: d })
    expect(res.code).toBe(2)
    expect(res.stderr).toBe('pipeload: input: no file matches the pattern nothing/*.csv\n')
    expect(await redis.exists('nm:1')).toBe(0)
  })

  it('one file listed twice (here by a pattern too), or - twice: refused, exit 2', async () => {
    const d = dataset('twice')
    const res = await pipeload(['import', 'a.csv', '*.csv', '--key', 'tw:{id}', '--dry-run', 'text'], { cwd: d })
    expect(res.code).toBe(2)
    expect(res.stderr).toBe('pipeload: input: a.csv is listed twice: it would be loaded twice\n')
    const stdin = await pipeload(['import', '-', './a.csv', '-', '--format', 'csv', '--key', 'tw:{id}', '--dry-run', 'text'], { cwd: d })
    expect(stdin.code).toBe(2)
    expect(stdin.stderr).toBe('pipeload: input: - (stdin) is listed twice: it can be read once\n')
    const other = await pipeload(['import', 'a.csv', `${d}/a.csv`, '--key', 'tw:{id}', '--dry-run', 'text'], { cwd: d })
    expect(other.stderr).toBe(`pipeload: input: ${d}/a.csv is listed twice (also as a.csv): it would be loaded twice\n`)
  })

  it('a file whose name has pattern characters is taken as it is; matches are in byte order', async () => {
    const d = path.join(dir, 'literal')
    fs.mkdirSync(d)
    fs.writeFileSync(path.join(d, 'x[1].csv'), 'id\nbracket\n')
    fs.writeFileSync(path.join(d, 'x1.csv'), 'id\nplain\n')
    fs.writeFileSync(path.join(d, 'B.csv'), 'id\nB\n')
    fs.writeFileSync(path.join(d, '_.csv'), 'id\n_\n')
    const lit = await pipeload(['import', 'x[1].csv', '-c', 'SET {id} {$file}', '--dry-run', 'text'], { cwd: d })
    expect(lit.stdout).toBe('SET bracket x[1].csv\n')
    // Bytes: "B" (0x42) < "_" (0x5f) < "x"; a locale's order would put "_" first.
    const all = await pipeload(['import', `${d}/*.csv`, '-c', 'SET {id} 1', '--dry-run', 'text'])
    expect(all.stdout).toBe('SET B 1\nSET _ 1\nSET plain 1\nSET bracket 1\n') // x1 before x[1]: "1" < "["
  })

  it('stdin among files: - once, at its place in the list', async () => {
    const d = dataset('stdin')
    const res = await pipeload(['import', 'a.csv', '-', '--format', 'csv', '-c', 'SET {id} {$file}', '--dry-run', 'text'], { cwd: d, stdin: 'id\n10\n' })
    expect(res.stdout).toBe('SET 1 a.csv\nSET 2 a.csv\nSET 10 <stdin>\n')
  })
})

describe('a URL among the inputs', () => {
  it('is requested in its turn; the checkpoint keeps its ETag once requested; --resume after the end sends nothing again', async () => {
    const d = dataset('url')
    let requests = 0
    const web = http.createServer((req, res) => {
      requests++
      res.writeHead(200, { 'content-type': 'text/csv', etag: '"v1"' })
      res.end('id,name\n50,web\n51,net\n')
    })
    await new Promise(resolve => web.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${web.address().port}/more`
    try {
      const args = ['import', 'a.csv', url, 'b.csv', '-u', server.url, '--json', '-c', 'HSET u:{id} from {$file}:{$line}', '--checkpoint', 'cp.json']
      const res = await pipeload(args, { cwd: d })
      expect(res.code).toBe(0)
      expect(JSON.parse(res.stdout).files.map(f => [f.input, f.loaded])).toEqual([['a.csv', 2], [url, 2], ['b.csv', 3]])
      expect(await redis.hget('u:51', 'from')).toBe(`${url}:3`)
      const cp = JSON.parse(fs.readFileSync(path.join(d, 'cp.json'), 'utf8'))
      expect(cp.inputs[1]).toEqual({ name: url, url, etag: '"v1"', lastModified: null, size: null })
      expect(cp.files.map(f => f.complete)).toEqual([true, true, true])
      const again = await pipeload([...args, '--resume'], { cwd: d })
      expect(again.code).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({ records: 7, loaded: 7, commands: 7, batches: 0 })
      expect(requests).toBe(1) // complete: not requested again
    } finally {
      web.close()
    }
  })
})

describe('failures in several inputs name their own file:line', () => {
  function failing (name) {
    const d = dataset(name)
    fs.writeFileSync(path.join(d, 'bad.csv'), 'id,name\n20,ok\n21\n22,ok\n') // line 3: a field short
    fs.writeFileSync(path.join(d, 'wrong.ndjson'), '{"id":30,"name":"a"}\n{"id":"taken","name":"b"}\n') // line 2: WRONGTYPE
    return d
  }

  it('--on-error skip: a bad row and an error reply, each with its file:line in --json, the rejects file and the per-file counts', async () => {
    const d = failing('skip')
    await redis.sadd('sk:taken', 'a set') // HSET on it: WRONGTYPE
    const res = await pipeload(['import', 'a.csv', 'bad.csv', 'wrong.ndjson', 'b.csv', '-u', server.url, '--json', '--on-error', 'skip',
      '--rejects', 'rejects.ndjson', '-c', 'HSET sk:{id} name {name}'], { cwd: d })
    expect(res.code).toBe(1)
    const s = JSON.parse(res.stdout)
    expect(s.failures.map(f => `${f.file}:${f.line} ${f.source}`)).toEqual(['bad.csv:3 input', 'wrong.ndjson:2 reply'])
    expect(s.files).toEqual([
      { input: 'a.csv', started: true, records: 2, loaded: 2, errors: 0, skipped: 0 },
      { input: 'bad.csv', started: true, records: 3, loaded: 2, errors: 1, skipped: 0 },
      { input: 'wrong.ndjson', started: true, records: 2, loaded: 1, errors: 1, skipped: 0 },
      { input: 'b.csv', started: true, records: 3, loaded: 3, errors: 0, skipped: 0 }
    ])
    expect(s.errors).toBe(2)
    expect(s.loaded).toBe(8)
    const rejects = fs.readFileSync(path.join(d, 'rejects.ndjson'), 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(rejects.map(r => `${r.file}:${r.line} ${r.raw}`)).toEqual(['bad.csv:3 21', 'wrong.ndjson:2 {"id":"taken","name":"b"}'])
    expect(res.stderr).toMatch(/^bad\.csv:3: /m)
    expect(res.stderr).toMatch(/^wrong\.ndjson:2: WRONGTYPE/m)
  })

  it('--on-error abort: the error reply in the second file stops the run there, named by its file:line', async () => {
    const d = failing('abort')
    await redis.sadd('ab:taken', 'a set')
    // --window 1: each batch's reply is in before the next batch goes. With more batches in
    // flight, b.csv's could be sent before the WRONGTYPE came back (docs/errors.md: the
    // batches already sent are awaited), and ab:3 written: it was, in one run of the whole suite.
    const res = await pipeload(['import', 'a.csv', 'wrong.ndjson', 'b.csv', '-u', server.url, '-c', 'HSET ab:{id} name {name}', '-w', '1'], { cwd: d })
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/^pipeload: wrong\.ndjson:2: WRONGTYPE .* \(stopped: on-error abort\)$/m)
    expect(await redis.exists('ab:1', 'ab:30', 'ab:3')).toBe(2) // a.csv and the first of wrong.ndjson; nothing of b.csv
  })

  it('--on-error abort: a bad row in the second file stops the run before it, with the place in that file', async () => {
    const d = failing('abort-row')
    const res = await pipeload(['import', 'a.csv', 'bad.csv', 'b.csv', '-u', server.url, '--json', '-c', 'HSET ar:{id} name {name}'], { cwd: d })
    expect(res.code).toBe(3)
    const s = JSON.parse(res.stdout)
    expect(s.error.message).toMatch(/^bad\.csv:3: /)
    expect(s.stoppedAt).toEqual({ file: 'bad.csv', line: 3, offset: 14 })
    expect(s.files.map(f => [f.input, f.loaded, f.errors])).toEqual([['a.csv', 2, 0], ['bad.csv', 1, 1], ['b.csv', 0, 0]])
    expect(await redis.exists('ar:3')).toBe(0)
  })
})

describe('--on-error abort sends nothing after the error reply', () => {
  it('the next input\'s batch, already waiting for the window when the error reply comes, is not sent', async () => {
    const d = path.join(dir, 'abort-waiting')
    fs.mkdirSync(d)
    fs.writeFileSync(path.join(d, 'one.ndjson'), '{"id":"bad"}\n')
    fs.writeFileSync(path.join(d, 'two.ndjson'), '{"id":"next"}\n')
    // The error reply to one.ndjson's command comes late: two.ndjson is read and its batch
    // handed to the sender, which waits for the window (-w 1), before the reply is in.
    const srv = await scriptedServer((args, conn) => {
      if (args[0] !== 'SET') return usual(args)
      if (args[1] === 'k:bad') setTimeout(() => conn.socket.write('-ERR refused\r\n'), 300)
      else return '+OK\r\n'
      return null
    })
    try {
      const res = await pipeload(['import', 'one.ndjson', 'two.ndjson', '-u', srv.url, '-c', 'SET k:{id} 1', '-w', '1'], { cwd: d })
      expect(res.code).toBe(1)
      expect(res.stderr).toMatch(/^pipeload: one\.ndjson:1: ERR refused \(stopped: on-error abort\)$/m)
      const sets = srv.connections.flatMap(c => c.commands).filter(a => a[0] === 'SET').map(a => a[1])
      expect(sets).toEqual(['k:bad'])
    } finally {
      await srv.close()
    }
  })
})

describe('a batch never spans two inputs', () => {
  it('records without commands at the start of an input, while the last input\'s batch awaits its reply, are counted for their own input', async () => {
    const d = path.join(dir, 'empty-batch')
    fs.mkdirSync(d)
    fs.writeFileSync(path.join(d, 'one.ndjson'), '{"id":1,"tags":["x"]}\n')
    fs.writeFileSync(path.join(d, 'two.ndjson'), '{"id":2,"tags":[]}\n') // no tags: no command, loaded
    // The reply to one.ndjson's command comes late: two.ndjson's command-less batch is read meanwhile.
    const srv = await scriptedServer((args, conn) => {
      if (args[0] !== 'SADD') return usual(args)
      setTimeout(() => conn.socket.write(':1\r\n'), 300)
      return null
    })
    try {
      const res = await pipeload(['import', 'one.ndjson', 'two.ndjson', '-u', srv.url, '--json', '-c', 'SADD t:{id} {tags[]}'], { cwd: d })
      expect(res.code).toBe(0)
      expect(JSON.parse(res.stdout).files).toEqual([
        { input: 'one.ndjson', started: true, records: 1, loaded: 1, errors: 0, skipped: 0 },
        { input: 'two.ndjson', started: true, records: 1, loaded: 1, errors: 0, skipped: 0 }
      ])
    } finally {
      await srv.close()
    }
  })
})

describe('load({ input: [...] })', () => {
  it('an array of strings is a list of inputs (patterns expanded); an array of other things is records, as before', async () => {
    const d = dataset('lib')
    const s = await load({ input: [path.join(d, 'a.csv'), path.join(d, 'parts/*.ndjson')], url: server.url, key: 'lib:{id}' })
    expect(s.files.map(f => [path.basename(f.input), f.records])).toEqual([['a.csv', 2], ['p1.ndjson', 1], ['p2.ndjson', 1]])
    expect(await redis.hget('lib:9', 'name')).toBe('ivy')
    const records = await load({ input: [{ id: 'r1', name: 'obj' }], url: server.url, key: 'lib:{id}' })
    expect(records.files).toEqual([{ input: '<records>', started: true, records: 1, loaded: 1, errors: 0, skipped: 0 }])
    expect(await redis.hget('lib:r1', 'name')).toBe('obj')
  })

  it('progress: totalBytes adds up the sizes, bytesRead counts on over the inputs', async () => {
    const d = dataset('progress')
    const seen = []
    const files = ['a.csv', 'b.csv', 'parts/p1.ndjson'].map(f => path.join(d, f))
    const s = await load({ input: files, dryRun: 'text', output: fs.createWriteStream('/dev/null'), command: 'SET {id} 1', batchSize: 1, progressInterval: 1, onProgress: p => seen.push(p) })
    const total = files.reduce((n, f) => n + fs.statSync(f).size, 0)
    expect(seen.every(p => p.totalBytes === total)).toBe(true)
    expect(seen.at(-1)).toMatchObject({ records: 6, bytesRead: total })
    // A dry run's records count as loaded once written, per file too.
    expect(s.files.map(f => f.loaded)).toEqual([2, 3, 1])
    const bytes = seen.map(p => p.bytesRead)
    expect(bytes).toEqual([...bytes].sort((a, b) => a - b)) // never back to 0 at the next input
  })

  it('a pattern as the only input is expanded; one match is one input', async () => {
    const d = dataset('lib-one')
    const s = await load({ input: path.join(d, 'parts/*1.ndjson'), url: server.url, key: 'lib1:{id}' })
    expect(s.input).toBe(path.join(d, 'parts/p1.ndjson'))
    expect(s.records).toBe(1)
  })

  it('an array of strings is never records: strings to load as records go in as an iterable that is no array', async () => {
    const err = await load({ input: ['not-a-file-1', 'not-a-file-2'], dryRun: 'text', output: fs.createWriteStream('/dev/null'), command: 'SET {0} 1' }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_INPUT_NOT_FOUND')
    const chunks = []
    const output = new (require('node:stream').Writable)({ write (c, e, cb) { chunks.push(c); cb() } })
    const s = await load({ input: ['x', 'y'].values(), dryRun: 'text', output, command: 'SET k:{$n} {$}' })
    expect(s.records).toBe(2)
    expect(Buffer.concat(chunks).toString()).toBe('SET k:1 "\\"x\\""\nSET k:2 "\\"y\\""\n')
  })
})
