'use strict'
/* global describe, it, expect, beforeAll */

// A Parquet URL read by Range requests (issue 37 item 5): a file replaced mid-read on a server
// that ignores If-Range still answers 206, with the new file's bytes at the old offsets; each
// answer is compared with the first (ETag, Last-Modified, the size in Content-Range, the range
// sent) and a difference stops the run, exit 3, before a byte of the new file is decoded. A
// range whose body stalls obeys --timeout, and a footer claiming a column chunk of 5 GiB is
// refused before it is requested (Node 20 cannot allocate it; Node 24 would, and download it).
const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { useHttpServer } = require('./helpers/http-server')
const { runCli } = require('./helpers/run-cli')
const { writeQuery, editFooter, chunksOf } = require('./helpers/parquet')

let server
let redis
let dir
useServer('pipeload-parquet-url-', s => { server = s.srv; redis = s.redis; dir = s.tmp })
const web = useHttpServer()

const ROWS = 8192
const GROUP = 2048 // 4 row groups
// Two files of the same layout and size, byte for byte, but for their values of v: 'old…' and 'new…'.
const files = {}
beforeAll(async () => {
  for (const which of ['old', 'new']) {
    const file = path.join(dir, `${which}.parquet`)
    await writeQuery(file, `SELECT i AS id, '${which}' || i AS v, sha256(i::VARCHAR) AS payload FROM range(${ROWS}) r(i)`,
      `COMPRESSION uncompressed, ROW_GROUP_SIZE ${GROUP}`)
    files[which] = { file, bytes: fs.readFileSync(file) }
  }
})

/**
 * Serves `route` as a server that ignores If-Range: each Range request gets a 206 of the bytes
 * asked, from the file that `version(n)` (n: the requests so far) gives, with its headers.
 */
function serve (route, version) {
  const asked = []
  web.routes.set(route, (req, res) => {
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range)
    const { bytes, headers = {} } = version(asked.length)
    asked.push(req.headers.range)
    const first = Number(m[1])
    const last = Math.min(Number(m[2]), bytes.length - 1)
    res.writeHead(206, { 'content-range': `bytes ${first}-${last}/${bytes.length}`, 'content-length': last - first + 1, ...headers })
    res.end(bytes.subarray(first, last + 1))
  })
  return asked
}

/** The values of k:0 … k:ROWS-1 as loaded by `SET <prefix>:{id} {v}`. */
async function values (prefix) {
  return redis.mget(Array.from({ length: ROWS }, (_, i) => `${prefix}:${i}`))
}

describe('a Parquet URL replaced while it is read, on a server that ignores If-Range', () => {
  // The probe (bytes 0-3), the footer, then row group 0's chunks of id and v: 4 answers of
  // the old file, then the new one.
  const SWAP = 4
  const cases = [
    ['its ETag changes', 'etag', n => n < SWAP
      ? { bytes: files.old.bytes, headers: { etag: '"v1"', 'last-modified': 'Mon, 02 Nov 2026 10:00:00 GMT' } }
      : { bytes: files.new.bytes, headers: { etag: '"v2"', 'last-modified': 'Mon, 02 Nov 2026 10:00:00 GMT' } },
    'ETag "v1" → "v2"'],
    ['its Last-Modified changes (no ETag)', 'lm', n => n < SWAP
      ? { bytes: files.old.bytes, headers: { 'last-modified': 'Mon, 02 Nov 2026 10:00:00 GMT' } }
      : { bytes: files.new.bytes, headers: { 'last-modified': 'Mon, 02 Nov 2026 10:05:00 GMT' } },
    'Last-Modified Mon, 02 Nov 2026 10:00:00 GMT → Mon, 02 Nov 2026 10:05:00 GMT'],
    ['its size changes (no validator)', 'size', n => n < SWAP
      ? { bytes: files.old.bytes }
      : { bytes: Buffer.concat([files.new.bytes, Buffer.alloc(100)]) },
    () => `size ${files.old.bytes.length.toLocaleString('en-US')} → ${(files.old.bytes.length + 100).toLocaleString('en-US')} bytes`]
  ]
  for (const [name, prefix, version, said] of cases) {
    it(`${name}: exit 3 at the first answer of the new file, naming the row group and what changed; no row of it loaded`, async () => {
      expect(files.new.bytes.length).toBe(files.old.bytes.length) // same layout: the offsets alone cannot tell
      const asked = serve(`/${prefix}.parquet`, version)
      const res = await runCli(['import', `${web.base}/${prefix}.parquet`, '-u', server.url, '-c', `SET ${prefix}:{id} {v}`])
      expect(asked.length).toBe(SWAP + 1) // nothing asked after the first answer of the new file
      expect(res.code, res.stderr).toBe(3)
      const change = typeof said === 'function' ? said() : said
      expect(res.stderr).toMatch(new RegExp(`${prefix}\\.parquet: row group 1 \\(rows 2049-4096\\), column "id": cannot be read: bytes \\d+-\\d+: it changed while it was read \\(${change.replace(/[()]/g, '\\$&')}\\)`))
      expect(res.stderr).not.toMatch(/\n\s+at /)
      // Row group 0 from the old file, nothing from the new one.
      const loaded = await values(prefix)
      expect(loaded.slice(0, GROUP)).toEqual(Array.from({ length: GROUP }, (_, i) => `old${i}`))
      expect(loaded.slice(GROUP).every(v => v === null)).toBe(true)
    })
  }

  it('a 206 of another range than the one asked: exit 3, nothing of it loaded', async () => {
    let shifted = false
    web.routes.set('/shifted.parquet', (req, res) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range)
      const bytes = files.old.bytes
      let first = Number(m[1])
      let last = Math.min(Number(m[2]), bytes.length - 1)
      if (first >= 4 && last < bytes.length - 1 && !shifted) { shifted = true; first += 10; last += 10 } // the first chunk, from 10 bytes on
      res.writeHead(206, { etag: '"v1"', 'content-range': `bytes ${first}-${last}/${bytes.length}`, 'content-length': last - first + 1 })
      res.end(bytes.subarray(first, last + 1))
    })
    const res = await runCli(['import', `${web.base}/shifted.parquet`, '-u', server.url, '-c', 'SET sh:{id} {v}'])
    expect(res.code, res.stderr).toBe(3)
    expect(res.stderr).toMatch(/shifted\.parquet: row group 0 \(rows 1-2048\), column "id": cannot be read: bytes (\d+)-(\d+): the server answered 206 with Content-Range "bytes \d+-\d+\/\d+"/)
    expect((await values('sh')).every(v => v === null)).toBe(true)
  })
})

describe('a range read that stalls', () => {
  it('--timeout ends it: exit 3 naming the row group and the bytes received', async () => {
    const bytes = files.old.bytes
    const chunks = await chunksOf(files.old.file)
    const v1 = chunks.find(c => c.rowGroup === 1 && c.column === 'v') // row group 1's v: half of it, then nothing
    web.routes.set('/stall.parquet', (req, res) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range)
      const first = Number(m[1])
      const last = Math.min(Number(m[2]), bytes.length - 1)
      res.writeHead(206, { etag: '"v1"', 'content-range': `bytes ${first}-${last}/${bytes.length}`, 'content-length': last - first + 1 })
      if (first === v1.start) return res.write(bytes.subarray(first, first + 1000)) // and never more
      res.end(bytes.subarray(first, last + 1))
    })
    const res = await runCli(['import', `${web.base}/stall.parquet`, '-u', server.url, '-c', 'SET stp:{id} {v}', '--timeout', '500ms'])
    expect(res.code, res.stderr).toBe(3)
    expect(res.stderr).toContain(`stall.parquet: row group 1 (rows 2049-4096), column "v": cannot be read: bytes ${v1.start}-${v1.end - 1}: the server sent nothing for 500ms after 1,000 of ${(v1.end - v1.start).toLocaleString('en-US')} bytes (--timeout)`)
    const loaded = await values('stp')
    expect(loaded.slice(0, GROUP)).toEqual(Array.from({ length: GROUP }, (_, i) => `old${i}`))
    expect(loaded.slice(GROUP).every(v => v === null)).toBe(true)
  })
})

describe('a footer that claims a column chunk of 5 GiB', () => {
  const FIVE_GIB = 5n * 2n ** 30n
  /** old.parquet with row group 1's chunk of v said to be 5 GiB long; DuckDB reads the claim back. */
  async function claiming (file) {
    const edited = editFooter(files.old.bytes, (p, value) => p.join('.') === '4.1.1.1.3.7' ? FIVE_GIB : undefined)
    fs.writeFileSync(file, edited)
    const v1 = (await chunksOf(file)).find(c => c.rowGroup === 1 && c.column === 'v')
    expect(v1.end - v1.start).toBe(Number(FIVE_GIB))
    return { edited, v1 }
  }

  it('a URL whose size is the file\'s: refused before it is requested, exit 3, the process free to exit', async () => {
    const { edited, v1 } = await claiming(path.join(dir, 'claim.parquet'))
    const asked = serve('/claim.parquet', () => ({ bytes: edited, headers: { etag: '"v1"' } }))
    const res = await runCli(['import', `${web.base}/claim.parquet`, '-u', server.url, '-c', 'SET cl:{id} {v}'])
    expect(res.code, res.stderr).toBe(3)
    expect(res.stderr).toContain(`claim.parquet: row group 1 (rows 2049-4096), column "v": cannot be read: bytes ${v1.start}-${v1.end - 1} are past the end of the file (${edited.length.toLocaleString('en-US')} bytes)`)
    expect(asked.every(r => Number(r.split('-')[1]) < edited.length)).toBe(true) // no range past its end was asked
    expect((await values('cl')).slice(GROUP).every(v => v === null)).toBe(true)
  })

  it('a URL that says it is 6 GiB long: a range over 4 GiB is refused before it is requested', async () => {
    const { edited, v1 } = await claiming(path.join(dir, 'claim6.parquet'))
    // The file's bytes where they are, its footer at the end of 6 GiB of which only those are served.
    const size = 6 * 2 ** 30
    const tail = edited.length - 8 - edited.readUInt32LE(edited.length - 8)
    const asked = []
    web.routes.set('/claim6.parquet', (req, res) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range)
      asked.push(req.headers.range)
      const first = Number(m[1])
      const last = Math.min(Number(m[2]), size - 1)
      const at = i => i >= size - (edited.length - tail) ? edited[i - (size - edited.length)] : i < tail ? edited[i] : 0
      const body = Buffer.alloc(Math.min(last - first + 1, 1 << 20)) // never more than 1 MiB here
      for (let i = 0; i < body.length; i++) body[i] = at(first + i)
      res.writeHead(206, { etag: '"v1"', 'content-range': `bytes ${first}-${last}/${size}`, 'content-length': last - first + 1 })
      if (body.length === last - first + 1) return res.end(body)
      res.write(body) // then nothing: only a reader asking for more than 1 MiB waits here
    })
    const res = await runCli(['import', `${web.base}/claim6.parquet`, '-u', server.url, '-c', 'SET c6:{id} {v}', '--timeout', '2s'])
    expect(res.code, res.stderr).toBe(3)
    expect(res.stderr).toContain(`claim6.parquet: row group 1 (rows 2049-4096), column "v": cannot be read: bytes ${v1.start}-${v1.end - 1}: a read of ${Number(FIVE_GIB).toLocaleString('en-US')} bytes, over the 4 GiB a column chunk may take`)
    expect(asked).not.toContain(`bytes=${v1.start}-${v1.end - 1}`)
  })

  it('a file of 6 GiB (sparse): the same refusal, nothing of 5 GiB read', async () => {
    const { edited, v1 } = await claiming(path.join(dir, 'claim-src.parquet'))
    const file = path.join(dir, 'claim6.parquet')
    const tail = edited.length - 8 - edited.readUInt32LE(edited.length - 8)
    const size = 6 * 2 ** 30
    const fd = fs.openSync(file, 'w')
    try {
      fs.writeSync(fd, edited, 0, tail, 0) // the row groups where the footer says
      fs.ftruncateSync(fd, size - (edited.length - tail)) // a hole, no disk
      fs.writeSync(fd, edited, tail, edited.length - tail, size - (edited.length - tail)) // the footer at the end
    } finally {
      fs.closeSync(fd)
    }
    try {
      const res = await runCli(['import', file, '-u', server.url, '-c', 'SET c6f:{id} {v}'])
      expect(res.code, res.stderr).toBe(3)
      expect(res.stderr).toContain(`claim6.parquet: row group 1 (rows 2049-4096), column "v": cannot be read: bytes ${v1.start}-${v1.end - 1}: a read of ${Number(FIVE_GIB).toLocaleString('en-US')} bytes, over the 4 GiB a column chunk may take`)
    } finally {
      fs.unlinkSync(file)
    }
  })
})
