'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// --resume of an http(s) input with a Range request (issue 13 item 7): against an HTTP
// server on loopback that this file starts, which honours Range/If-Range like a static
// file server (or ignores Range, or answers a malformed 206 or a 416). A first run is cut
// mid-body (the connection closed), leaving a checkpoint; the resumed run must ask only for
// the bytes from the checkpoint's record on, load every record exactly once and name the
// real lines of failures.
const fs = require('node:fs')
const path = require('node:path')
const zlib = require('node:zlib')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { useHttpServer } = require('./helpers/http-server')
const { load } = require('..')
const { checkpointProblems } = require('../lib/run/checkpoint')

let server
let redis
let dir

useServer('pipeload-http-resume-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

const web = useHttpServer()
const { routes, seen } = web
let base
beforeAll(() => { base = web.base })

/**
 * A resource served like a static file: the first GET is cut after `cutAt` bytes; a Range
 * request whose If-Range matches the current ETag gets a 206 (unless `ignoreRange`), with
 * `contentRange` overriding a correct Content-Range. `r.etag`/`r.body` may change between runs.
 */
function resource (p, body, { etag = '"v1"', cutAt, ignoreRange = false, contentRange, type } = {}) {
  const r = { etag, body, gets: 0 }
  routes.set(p, (req, res) => {
    r.gets++
    const headers = { etag: r.etag, 'accept-ranges': 'bytes', ...(type ? { 'content-type': type } : {}) }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range || '')
    const matches = !req.headers['if-range'] || req.headers['if-range'] === r.etag
    if (m && matches && !ignoreRange) {
      const start = Number(m[1])
      if (start >= r.body.length) {
        res.writeHead(416, { 'content-range': `bytes */${r.body.length}` })
        return res.end()
      }
      const part = r.body.subarray(start)
      res.writeHead(206, { ...headers, 'content-length': part.length, 'content-range': contentRange ?? `bytes ${start}-${r.body.length - 1}/${r.body.length}` })
      return res.end(part)
    }
    res.writeHead(200, { ...headers, 'content-length': r.body.length })
    if (r.gets === 1 && cutAt) res.write(r.body.subarray(0, cutAt), () => res.socket.destroy())
    else res.end(r.body)
  })
  return r
}

const requestsTo = p => seen.filter(s => s.path === p)

const ROWS = 3000
const ndjson = Buffer.from(Array.from({ length: ROWS }, (_, i) => JSON.stringify({ id: i }) + '\n').join(''))
const cutNdjson = ndjson.indexOf('{"id":1500}') + 5 // mid-record

/** Every key `prefix:0` … `prefix:n-1` holds exactly `value` (counted INCRs: loaded once). */
async function expectEach (prefix, n, value) {
  const keys = Array.from({ length: n }, (_, i) => `${prefix}:${i}`)
  const values = await redis.mget(keys)
  const wrong = values.map((v, i) => [i, v]).filter(([, v]) => v !== value)
  expect(wrong.slice(0, 5)).toEqual([])
}

describe('--resume of a URL with a Range request', () => {
  // The thread(s) parsing: this one, one worker, and the ranged body cut into chunks for two.
  for (const [tag, flags] of [['', []], ['w', ['--workers', '1']], ['p', ['--workers', '2', '--chunk-size', '4KiB']]]) {
    it(`NDJSON: asks for the bytes from the checkpoint's record on and loads each record once${flags.length ? ` (${flags.join(' ')})` : ''}`, async () => {
      const p = `/n${tag}.ndjson`
      const prefix = `r1${tag}`
      resource(p, ndjson, { cutAt: cutNdjson })
      const cp = path.join(dir, `${prefix}.ckpt`)
      const args = ['import', `${base}${p}`, '-u', server.url, '-c', `INCR ${prefix}:{id}`, '-c', `SET ${prefix}n:{id} {$n}`, '-b', '100', '--checkpoint', cp, ...flags]
      const first = await runCli(args)
      expect(first.code).toBe(3)
      const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
      expect(saved.records).toBe(1500)
      // The start of a record the acknowledged prefix reaches: its byte offset and line.
      const n = saved.next.records
      expect(n).toBeGreaterThan(0)
      expect(n).toBeLessThanOrEqual(1500)
      expect(saved.next).toEqual({ records: n, offset: ndjson.indexOf(`{"id":${n}}`), line: n + 1 })

      const second = await runCli([...args, '--resume', '--json'])
      expect(second.code).toBe(0)
      const last = requestsTo(p).at(-1)
      expect(last.headers.range).toBe(`bytes=${saved.next.offset}-`)
      expect(last.headers['if-range']).toBe('"v1"')
      expect(second.stderr).toContain(`pipeload: resuming ${base}${p} at byte ${saved.next.offset.toLocaleString('en-US')} (line ${(n + 1).toLocaleString('en-US')}) with a Range request; 1,500 records already loaded`)
      const summary = JSON.parse(second.stdout)
      expect(summary).toMatchObject({ resumedFrom: 1500, records: ROWS, loaded: ROWS, errors: 0, commands: 2 * ROWS })
      // {$n} goes on from the checkpoint's count, not from the ranged body's first record.
      expect(await redis.mget(`${prefix}n:${n}`, `${prefix}n:2999`)).toEqual([String(n + 1), '3000'])
      // Positions in the whole input: the ranged body ends where the resource ends.
      expect(summary.bytesRead).toBe(ndjson.length)
      await expectEach(prefix, ROWS, '1')
      const done = JSON.parse(fs.readFileSync(cp, 'utf8'))
      expect(done).toMatchObject({ records: ROWS, complete: true })
      expect(done.next.offset).toBe(ndjson.indexOf(`{"id":${done.next.records}}`))
    })
  }

  for (const workers of [0, 2]) {
  it(`CSV with a header: the ranged body has no header, the columns come from the checkpoint; failures name their real lines; progress counts from the offset${workers ? ' (--workers 2, 4 KiB chunks)' : ''}`, async () => {
    const t = workers ? 'p' : '' // this run's own resource and keys
    const rows = ['id,name,n']
    for (let i = 0; i < ROWS; i++) rows.push(i === 2500 ? '2500,ragged' : `${i},name ${i},"${i}\nx"`) // a quoted field spans two lines
    const csv = Buffer.from(rows.join('\n') + '\n')
    const p = `/c${t}.csv`
    const r = resource(p, csv, { cutAt: csv.indexOf('1500,name') + 3 })
    const cp = path.join(dir, `c${t}.ckpt`)
    const options = { url: server.url, input: `${base}${p}`, commands: [`INCR r2${t}:{id}`, `HSET r2${t}h:{id} name {name} n {$n} line {$line}`], batchSize: 200, checkpoint: cp, onError: 'skip', workers, chunkSize: 4096 }
    await expect(load(options)).rejects.toMatchObject({ code: 'PIPELOAD_INPUT_FAILED' })
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    const n = saved.next.records
    expect(saved.next).toEqual({ records: n, offset: csv.indexOf(`\n${n},name`) + 1, line: 2 * n + 2, columns: ['id', 'name', 'n'], fields: 3 })

    const progress = []
    const notices = []
    const summary = await load({ ...options, resume: true, progressInterval: 1, onProgress: p => progress.push(p), onResume: e => notices.push(e) })
    expect(requestsTo(p).at(-1).headers.range).toBe(`bytes=${saved.next.offset}-`)
    expect(r.gets).toBe(2)
    expect(notices).toEqual([{ input: `${base}${p}`, records: saved.records, range: { offset: saved.next.offset, line: 2 * n + 2 }, reason: null, unchecked: [] }])
    expect(summary).toMatchObject({ resumedFrom: saved.records, records: ROWS, loaded: ROWS - 1, errors: 1 })
    expect(summary.failures).toHaveLength(1)
    expect(summary.failures[0]).toMatchObject({ line: 2 * 2500 + 2, offset: csv.indexOf('2500,ragged') })
    expect(await redis.get(`r2${t}:2500`)).toBe(null) // the ragged row failed
    await redis.set(`r2${t}:2500`, '1')
    await expectEach(`r2${t}`, ROWS, '1')
    expect(await redis.hgetall(`r2${t}h:2999`)).toEqual({ name: 'name 2999', n: '3000', line: String(2 * 2999 + 1) }) // two lines a row, but the ragged one
    expect(await redis.hget(`r2${t}h:${n}`, 'name')).toBe(`name ${n}`)
    for (const pr of progress) {
      expect(pr.totalBytes).toBe(csv.length)
      // From the offset: a call before the first batch (onProgress is also called while the
      // run waits, issue 34 item 7) says the offset itself.
      expect(pr.bytesRead).toBeGreaterThanOrEqual(saved.next.offset)
    }
    expect(progress.filter(pr => pr.records > 0).every(pr => pr.bytesRead > saved.next.offset)).toBe(true)
    expect(progress.at(-1).bytesRead).toBe(csv.length)
  })
  }

  it('a server that ignores Range (200): the body is read from its start and the loaded records skipped, said in one line', async () => {
    const p = '/ignore.ndjson'
    resource(p, ndjson, { cutAt: cutNdjson, ignoreRange: true })
    const cp = path.join(dir, 'r3.ckpt')
    const args = ['import', `${base}${p}`, '-u', server.url, '-c', 'INCR r3:{id}', '-b', '100', '--checkpoint', cp]
    expect((await runCli(args)).code).toBe(3)
    const second = await runCli([...args, '--resume', '--json'])
    expect(second.code).toBe(0)
    expect(requestsTo(p).at(-1).headers.range).toMatch(/^bytes=\d+-$/)
    expect(second.stderr).toBe(`pipeload: resuming ${base}${p} by reading it again from its start and skipping the 1,500 records already loaded: the server sent the whole body (HTTP 200), not the range asked for\n`)
    expect(JSON.parse(second.stdout)).toMatchObject({ resumedFrom: 1500, records: ROWS, loaded: ROWS, bytesRead: ndjson.length })
    await expectEach('r3', ROWS, '1')
  })

  it('a changed ETag: If-Range does not match, the server sends the new body whole, and the resume is refused as before (exit 2)', async () => {
    const p = '/changed.ndjson'
    const r = resource(p, ndjson, { cutAt: cutNdjson })
    const cp = path.join(dir, 'r4.ckpt')
    const args = ['import', `${base}${p}`, '-u', server.url, '-c', 'INCR r4:{id}', '--checkpoint', cp]
    expect((await runCli(args)).code).toBe(3)
    r.etag = '"v2"'
    const second = await runCli([...args, '--resume'])
    expect(second.code).toBe(2)
    expect(requestsTo(p).at(-1).headers['if-range']).toBe('"v1"')
    expect(second.stderr).toContain(`${base}${p} changed since the checkpoint was written (ETag "v1" → "v2")`)
    expect(await redis.get('r4:2999')).toBe(null)
  })

  for (const [t, flags] of [['', []], ['p', ['--workers', '2', '--chunk-size', '4KiB']]]) {
  it(`gzip: no Range request (a gzip body cannot be read from its middle); read again and skipped${flags.length ? ` (${flags.join(' ')})` : ''}`, async () => {
    // The first run stops at a record without `id` (on-error abort): a gzip body cut short
    // loses what gunzip still held, so the cut is not the way to stop this one.
    const p = `/z${t}.ndjson`
    const body = zlib.gzipSync(Buffer.from(ndjson.toString().replace('{"id":1500}', '{"x":1500}')))
    resource(p, body)
    const cp = path.join(dir, `r5${t}.ckpt`)
    const args = ['import', `${base}${p}`, '-u', server.url, '-c', `INCR r5${t}:{id}`, '-b', '100', '--checkpoint', cp, ...flags]
    expect((await runCli(args)).code).toBe(1)
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved).toMatchObject({ records: 1501, errors: 1 })
    expect(saved.next.gzip).toBe(true)
    const second = await runCli([...args, '--resume'])
    expect(second.code).toBe(1) // the earlier run's failed record still counts
    expect(requestsTo(p).at(-1).headers.range).toBe(undefined)
    expect(second.stderr).toContain('pipeload: resuming ' + base + p + ' by reading it again from its start and skipping the 1,501 records already loaded: a gzip body cannot be read from its middle')
    expect(await redis.get(`r5${t}:1500`)).toBe(null)
    await redis.set(`r5${t}:1500`, '1')
    await expectEach(`r5${t}`, ROWS, '1')
  })
  }

  it('a JSON document: no Range request; read again and skipped', async () => {
    const p = '/doc.json'
    const doc = Buffer.from(JSON.stringify(Array.from({ length: ROWS }, (_, i) => ({ id: i }))))
    resource(p, doc, { cutAt: doc.indexOf('{"id":1500}') })
    const cp = path.join(dir, 'r6.ckpt')
    const args = ['import', `${base}${p}`, '-u', server.url, '-c', 'INCR r6:{id}', '-b', '100', '--checkpoint', cp]
    expect((await runCli(args)).code).toBe(3)
    const second = await runCli([...args, '--resume'])
    expect(second.code).toBe(0)
    expect(requestsTo(p).at(-1).headers.range).toBe(undefined)
    expect(second.stderr).toContain('a JSON document cannot be read from its middle')
    await expectEach('r6', ROWS, '1')
  })

  it('--shard: no Range request (chunk numbers count from the body\'s start); read again and skipped', async () => {
    const p = '/shard.ndjson'
    const rows = 60_000 // ~2.4 MiB: chunks for both shards
    const body = Buffer.from(Array.from({ length: rows }, (_, i) => JSON.stringify({ id: i, pad: 'p'.repeat(20) }) + '\n').join(''))
    resource(p, body, { cutAt: body.length - 1000 }) // after shard 1's chunk 1 (bytes 1-2 MiB)
    const cp = path.join(dir, 'r8.ckpt')
    const args = ['import', `${base}${p}`, '-u', server.url, '-c', 'INCR r8:{id}', '-b', '500', '--checkpoint', cp, '--shard', '1/2']
    expect((await runCli(args)).code).toBe(3)
    expect(JSON.parse(fs.readFileSync(cp, 'utf8')).records).toBeGreaterThan(0)
    const second = await runCli([...args, '--resume'])
    expect(second.code, second.stderr).toBe(0)
    expect(requestsTo(p).at(-1).headers.range).toBe(undefined)
    expect(second.stderr).toContain('a shard counts its chunks from the start of the input')
    const zero = await runCli(['import', `${base}${p}`, '-u', server.url, '-c', 'INCR r8:{id}', '--shard', '0/2'])
    expect(zero.code, zero.stderr).toBe(0)
    await expectEach('r8', rows, '1')
  })

  it('a 206 whose Content-Range is not the range asked for is an input error (exit 3), nothing more loaded', async () => {
    const p = '/bad206.ndjson'
    resource(p, ndjson, { cutAt: cutNdjson, contentRange: 'bytes 0-99/99999' })
    const cp = path.join(dir, 'r7.ckpt')
    const args = ['import', `${base}${p}`, '-u', server.url, '-c', 'INCR r7:{id}', '-b', '100', '--checkpoint', cp]
    expect((await runCli(args)).code).toBe(3)
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    const second = await runCli([...args, '--resume'])
    expect(second.code).toBe(3)
    expect(second.stderr).toBe(`pipeload: cannot resume ${base}${p}: asked for its bytes from ${saved.next.offset} on, the server answered 206 with Content-Range "bytes 0-99/99999" and Content-Length ${ndjson.length - saved.next.offset}\n`)
    expect(await redis.get('r7:2999')).toBe(null)
    expect(JSON.parse(fs.readFileSync(cp, 'utf8')).records).toBe(1500)
  })

  it('a 416 (the resource is shorter than the checkpoint says) refuses the checkpoint (exit 2)', async () => {
    const p = '/short.ndjson'
    resource(p, ndjson, { cutAt: cutNdjson })
    const cp = path.join(dir, 'r8.ckpt')
    const args = ['import', `${base}${p}`, '-u', server.url, '-c', 'INCR r8:{id}', '-b', '100', '--checkpoint', cp]
    expect((await runCli(args)).code).toBe(3)
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    saved.next.offset = ndjson.length + 10 // as if written for a longer resource of the same ETag
    fs.writeFileSync(cp, JSON.stringify(saved))
    const second = await runCli([...args, '--resume'])
    expect(second.code).toBe(2)
    expect(second.stderr).toContain(`checkpoint ${cp}: ${base}${p} has no byte ${ndjson.length + 10} (HTTP 416 Range Not Satisfiable)`)
  })
})

describe('the checkpoint\'s next', () => {
  const valid = { version: 1, input: { name: 'x' }, records: 10, loaded: 10, errors: 0, commands: 10 }
  it('is optional, and checked when present', () => {
    expect(checkpointProblems(valid)).toEqual([])
    expect(checkpointProblems({ ...valid, next: { records: 8, offset: 120, line: 9, columns: ['a'], fields: 1, gzip: false } })).toEqual([])
    expect(checkpointProblems({ ...valid, next: { records: 11, offset: -1, line: 0, columns: [1], fields: 0, gzip: 'no' } })).toEqual([
      'next.records is 11, not a whole number ≤ records',
      'next.offset is -1, not a byte offset',
      'next.line is 0, not a line number',
      'next.gzip is "no", not true or false',
      'next.columns is not a list of column names',
      'next.fields is 0, not a positive whole number'
    ])
    expect(checkpointProblems({ ...valid, next: [] })).toEqual(['next is not { records, offset, line }'])
  })
})
