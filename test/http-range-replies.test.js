'use strict'
/* global describe, it, expect, beforeAll */

// --resume of a URL (issue 22 item 3): what the server answers to `Range: bytes=<offset>-`
// decides where the body starts, and only a 206 whose Content-Range starts at <offset> may
// be read as starting there. A 206 that starts later (records lost) or earlier (records
// loaded twice), one without a Content-Range, or a multipart one is an input error (exit 3)
// before anything more is loaded; a 200 that ignores the Range is the whole body, read from
// its start with the loaded records skipped. Each reply starts at a record boundary, so a
// reader that took it for the asked offset would parse it without a complaint.
const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { useHttpServer } = require('./helpers/http-server')

let server
let redis
let dir
useServer('pipeload-range-replies-', s => { server = s.srv; redis = s.redis; dir = s.tmp })
const web = useHttpServer()
let base
beforeAll(() => { base = web.base })

const ROWS = 3000
const body = Buffer.from(Array.from({ length: ROWS }, (_, i) => JSON.stringify({ id: i }) + '\n').join(''))
const at = id => body.indexOf(`{"id":${id}}`) // the byte where record `id` starts (the oracle: the bytes served)

/**
 * `p` served with ETag "v1": the first GET is cut mid-body; a Range request gets `reply(offset)`:
 * { status, start (where the body sent starts), headers }.
 */
function resource (p, reply) {
  let gets = 0
  const ranges = []
  web.routes.set(p, (req, res) => {
    gets++
    const m = /^bytes=(\d+)-$/.exec(req.headers.range || '')
    if (!m) {
      res.writeHead(200, { etag: '"v1"', 'content-length': body.length })
      if (gets === 1) return res.write(body.subarray(0, at(1500) + 5), () => res.socket.destroy())
      return res.end(body)
    }
    ranges.push(Number(m[1]))
    const r = reply(Number(m[1]))
    const part = body.subarray(r.start)
    res.writeHead(r.status, { etag: '"v1"', 'content-length': part.length, ...r.headers })
    res.end(part)
  })
  return ranges
}

const range = (first, extra = {}) => ({ 'content-range': `bytes ${first}-${body.length - 1}/${body.length}`, ...extra })

/** Keys p:0 … p:ROWS-1 as INCR left them: 1 each, or null where never loaded. */
async function counts (prefix) {
  return redis.mget(Array.from({ length: ROWS }, (_, i) => `${prefix}:${i}`))
}

async function firstRun (p, prefix) {
  const cp = path.join(dir, `${prefix}.ckpt`)
  const args = ['import', `${base}${p}`, '-u', server.url, '-c', `INCR ${prefix}:{id}`, '-b', '100', '--checkpoint', cp]
  expect((await runCli(args)).code).toBe(3)
  const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
  expect(saved.records).toBe(1500)
  expect(saved.next.offset).toBe(at(saved.next.records))
  return { args, cp, saved, before: await counts(prefix) }
}

describe('--resume of a URL: the reply to the Range request', () => {
  const wrong = [
    ['a 206 that starts 100 records later', off => ({ status: 206, start: at(1600), headers: range(at(1600)) }), off => `Content-Range "bytes ${at(1600)}-${body.length - 1}/${body.length}"`],
    ['a 206 that starts 100 records earlier', off => ({ status: 206, start: at(1300), headers: range(at(1300)) }), off => `Content-Range "bytes ${at(1300)}-${body.length - 1}/${body.length}"`],
    ['a 206 that starts at 0', () => ({ status: 206, start: 0, headers: range(0) }), () => `Content-Range "bytes 0-${body.length - 1}/${body.length}"`],
    ['a 206 without a Content-Range', off => ({ status: 206, start: off, headers: {} }), () => 'no Content-Range'],
    ['a 206 as multipart/byteranges (no Content-Range of its own)', off => ({ status: 206, start: off, headers: { 'content-type': 'multipart/byteranges; boundary=x' } }), () => 'no Content-Range']
  ]
  for (const [i, [name, reply, said]] of wrong.entries()) {
    it(`${name}: exit 3 naming what was asked and what came, nothing more loaded, the checkpoint kept`, async () => {
      const p = `/w${i}.ndjson`
      const ranges = resource(p, reply)
      const { args, cp, saved, before } = await firstRun(p, `w${i}`)
      const res = await runCli([...args, '--resume'])
      expect(ranges).toEqual([saved.next.offset])
      expect(res.code, res.stderr).toBe(3)
      expect(res.stderr).toBe(`pipeload: cannot resume ${base}${p}: asked for its bytes from ${saved.next.offset} on, the server answered 206 with ${said(saved.next.offset)}\n`)
      expect(await counts(`w${i}`)).toEqual(before)
      expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toEqual(saved)
    })
  }

  const right = [
    ['a 206 from the offset asked', off => ({ status: 206, start: off, headers: range(off) }), null],
    ['a 200 that ignores the Range (the whole body)', () => ({ status: 200, start: 0, headers: {} }), 'the server sent the whole body (HTTP 200), not the range asked for'],
    ['a 200 that ignores the Range but sends a Content-Range', () => ({ status: 200, start: 0, headers: range(0) }), 'the server sent the whole body (HTTP 200), not the range asked for']
  ]
  for (const [i, [name, reply, reason]] of right.entries()) {
    it(`${name}: every record loaded once`, async () => {
      const p = `/k${i}.ndjson`
      const ranges = resource(p, reply)
      const { args, saved } = await firstRun(p, `k${i}`)
      const res = await runCli([...args, '--resume', '--json'])
      expect(ranges).toEqual([saved.next.offset])
      expect(res.code, res.stderr).toBe(0)
      if (reason) expect(res.stderr).toContain(reason)
      expect(JSON.parse(res.stdout)).toMatchObject({ resumedFrom: 1500, records: ROWS, loaded: ROWS, bytesRead: body.length })
      expect(await counts(`k${i}`)).toEqual(Array(ROWS).fill('1'))
    })
  }
})
