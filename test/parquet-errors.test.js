'use strict'
/* global describe, it, expect, beforeAll */

// Parquet input that cannot be read, or not all of it (issue 24 items 1, 3, 4): a broken
// footer, a broken column chunk (file, row group and column named, exit 3, no stack), a
// template field that is no column (exit 2, nothing sent), stdin refused, failed rows named by
// row and row group with --rejects and --max-errors, and URLs read by HTTP Range requests.
const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { useHttpServer } = require('./helpers/http-server')
const { runCli } = require('./helpers/run-cli')
const { writeQuery, chunksOf } = require('./helpers/parquet')
const { load } = require('..')
const { ParquetFile } = require('../lib/read/parquet/reader')
const { fileBuffer } = require('../lib/read/parquet/file-buffer')

let server
let redis
let dir
useServer('pipeload-parquet-errors-', s => { server = s.srv; redis = s.redis; dir = s.tmp })
const web = useHttpServer()

const GROUP = 10240
let file // 30000 rows, 3 row groups: id, v (null when id % 7 = 3), payload
beforeAll(async () => {
  file = path.join(dir, 'data.parquet')
  await writeQuery(file, 'SELECT i AS id, CASE WHEN i % 7 = 3 THEN NULL ELSE i * 2 END AS v, sha256(i::VARCHAR) AS payload FROM range(30000) r(i)',
    `COMPRESSION zstd, ROW_GROUP_SIZE ${GROUP}`)
})

async function count (prefix) {
  return (await redis.keys(prefix + '*')).length
}

describe('a file that cannot be read', () => {
  it('a truncated file: its footer cannot be read, exit 3, no stack trace', async () => {
    const cut = path.join(dir, 'cut.parquet')
    fs.writeFileSync(cut, fs.readFileSync(file).subarray(0, 50000))
    const res = await runCli(['import', cut, '-u', server.url, '-c', 'SET cut:{id} 1'])
    expect(res.code).toBe(3)
    expect(res.stderr).toMatch(/cut\.parquet: cannot read the Parquet footer \(a Parquet file is read from its end\): /)
    expect(res.stderr).not.toMatch(/\n\s+at /)
    expect(await count('cut:')).toBe(0)
  })

  it('text named .parquet: the same', async () => {
    const text = path.join(dir, 'text.parquet')
    fs.writeFileSync(text, 'id,name\n1,a\n')
    const res = await runCli(['import', text, '-u', server.url, '-c', 'SET t:{id} 1'])
    expect(res.code).toBe(3)
    expect(res.stderr).toMatch(/text\.parquet: cannot read the Parquet footer/)
  })

  it('a damaged column chunk names the file, the row group, its rows and the column; the rows before it are loaded', async () => {
    const bad = path.join(dir, 'bad.parquet')
    const bytes = Buffer.from(fs.readFileSync(file))
    const chunk = (await chunksOf(file)).find(c => c.rowGroup === 1 && c.column === 'payload')
    bytes.fill(0xa5, chunk.start + 40, chunk.end - 8) // past the page header: the zstd frame
    fs.writeFileSync(bad, bytes)
    const res = await runCli(['import', bad, '-u', server.url, '-c', 'SET bad:{id} {payload}'])
    expect(res.code).toBe(3)
    expect(res.stderr).toMatch(/bad\.parquet: row group 1 \(rows 10241-20480\), column "payload": cannot be read: /)
    expect(res.stderr).not.toMatch(/\n\s+at /)
    expect(await count('bad:')).toBe(GROUP)
  })
})

describe('a codec it cannot read, a chunk not where the footer says', () => {
  // No writer here writes LZO: the footer as read is changed in memory, so the reader meets it
  // where a file written so would have it.
  it('name the file, the row group and the column, and why; other row groups still read', async () => {
    const pf = await ParquetFile.open({ name: 'data.parquet', buffer: await fileBuffer(file) })
    try {
      pf.readable.row_groups[1].columns[1].meta_data.codec = 'LZO'
      await expect(pf.readGroup(1, ['id', 'v', 'payload'])).rejects.toThrow('data.parquet: row group 1 (rows 10241-20480), column "v": cannot be read: unsupported compression codec: LZO')
      await expect(pf.readGroup(0, ['id', 'v'])).resolves.toMatchObject({ rows: GROUP })
      const meta = pf.readable.row_groups[2].columns[2].meta_data
      pf.readable.row_groups[2].columns[2].meta_data = { ...meta, data_page_offset: meta.data_page_offset + 3n }
      const err = await pf.readGroup(2, ['payload']).catch(e => e)
      expect(err).toMatchObject({ code: 'PIPELOAD_INPUT_INVALID', rowGroup: 2, column: 'payload', line: 2 * GROUP + 1 })
    } finally {
      await pf.close()
    }
  })
})

describe('refused before anything is sent', () => {
  it('a template field that is no column: exit 2, the columns listed, no key written', async () => {
    const res = await runCli(['import', file, '-u', server.url, '-c', 'SET nc:{id} {id}', '-c', 'SET nc2:{id} {value}'])
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('template "SET nc2:{id} {value}" uses {value}, which is not a column of ' + file + ' (columns are: id, v, payload)')
    expect(await count('nc')).toBe(0)
  })

  it('stdin: refused, saying why', async () => {
    const res = await runCli(['import', '-', '--format', 'parquet', '-u', server.url, '--key', 'k:{id}'], { input: fs.readFileSync(file) })
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/Parquet cannot be read from stdin: a Parquet file is read from its end/)
  })
})

describe('failed rows', () => {
  it('name the row and its row group; --rejects and --max-errors work as for other formats', async () => {
    const rejects = path.join(dir, 'rejects.ndjson')
    const res = await runCli(['import', file, '-u', server.url, '-c', 'SET fr:{id} {v}', '--on-error', 'skip', '--rejects', rejects])
    expect(res.code).toBe(1)
    const nulls = Array.from({ length: 30000 }, (_, i) => i).filter(i => i % 7 === 3)
    expect(await count('fr:')).toBe(30000 - nulls.length)
    expect(res.stderr).toContain(`${file}:4: (row group 0) field "v" is null`)
    const lines = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(lines.map(l => l.line)).toEqual(nulls.map(i => i + 1))
    expect(JSON.parse(lines[0].raw)).toMatchObject({ id: 3, v: null })

    const capped = await runCli(['import', file, '-u', server.url, '-c', 'SET fm:{id} {v}', '--on-error', 'skip', '--max-errors', '1500'])
    expect(capped.code).toBe(1)
    // the 1501st null is row 10504 (id 10503), in row group 1
    expect(capped.stderr).toContain(`more than 1,500 records failed (max-errors 1500); the last: ${file}:${nulls[1500] + 1}: (row group 1) field "v" is null`)
  })

  it('the library reports them with rowGroup', async () => {
    const failures = []
    await load({ input: file, url: server.url, command: 'SET lib:{id} {v}', onError: 'skip', onFailure: f => failures.push(f) })
    expect(failures[0]).toMatchObject({ file, line: 4, rowGroup: 0, code: 'PIPELOAD_FIELD_MISSING' })
    expect(failures.find(f => f.line > 2 * GROUP)).toMatchObject({ rowGroup: 2 })
  })

  it('an error reply names the row and its row group too', async () => {
    await redis.set('wt:20000', 'a string') // HSET on it: WRONGTYPE
    const failures = []
    const res = await runCli(['import', file, '-u', server.url, '-c', 'HSET wt:{id} id {id}', '--on-error', 'skip'])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain(`${file}:20001: (row group 1) WRONGTYPE`)
    await load({ input: file, url: server.url, command: 'HSET wt:{id} id {id}', onError: 'skip', onFailure: f => failures.push(f) })
    expect(failures).toEqual([expect.objectContaining({ line: 20001, rowGroup: 1, source: 'reply' })])
  })
})

describe('a Parquet file at a URL', () => {
  /** Serves `bytes`, with Range support or without. */
  function serve (route, bytes, { ranges = true, type = 'application/octet-stream' } = {}) {
    web.routes.set(route, (req, res) => {
      const m = ranges && /^bytes=(\d+)-(\d+)$/.exec(req.headers.range || '')
      if (!m) {
        res.writeHead(200, { 'content-type': type, 'content-length': bytes.length })
        return res.end(bytes)
      }
      const first = Number(m[1])
      const last = Math.min(Number(m[2]), bytes.length - 1)
      res.writeHead(206, { 'content-type': type, 'content-range': `bytes ${first}-${last}/${bytes.length}`, 'content-length': last - first + 1, etag: '"v1"' })
      res.end(bytes.subarray(first, last + 1))
    })
  }

  it('is read by Range requests: its footer, then only the columns used', async () => {
    const bytes = fs.readFileSync(file)
    serve('/lake/data.parquet', bytes)
    const before = web.seen.length
    const res = await runCli(['import', `${web.base}/lake/data.parquet`, '-u', server.url, '-c', 'SET url:{id} {id}'])
    expect(res.code, res.stderr).toBe(0)
    expect(await count('url:')).toBe(30000)
    const asked = web.seen.slice(before).map(s => s.headers.range)
    expect(asked.every(r => /^bytes=\d+-\d+$/.test(r))).toBe(true)
    const ranges = asked.map(r => r.slice(6).split('-').map(Number))
    expect(ranges[0]).toEqual([0, 3]) // the magic bytes, and the file's size in Content-Range
    expect(ranges[1][1]).toBe(bytes.length - 1) // the footer, from the end
    const payload = (await chunksOf(file)).filter(c => c.column === 'payload')
    for (const [a, b] of ranges.slice(2)) expect(payload.filter(c => a < c.end && b >= c.start)).toEqual([])
  })

  it('its Content-Type names the format when its path does not', async () => {
    serve('/export', fs.readFileSync(file), { type: 'application/vnd.apache.parquet' })
    const summary = await load({ input: `${web.base}/export`, url: server.url, command: 'SET ct:{id} 1' })
    expect(summary.loaded).toBe(30000)
  })

  it('follows a redirect to where the ranges are read; the URL\'s credentials are sent', async () => {
    serve('/lake/moved.parquet', fs.readFileSync(file))
    web.routes.set('/old.parquet', (req, res) => { res.writeHead(302, { location: '/lake/moved.parquet' }); res.end() })
    const before = web.seen.length
    const summary = await load({ input: web.base.replace('//', '//me:secret@') + '/old.parquet', url: server.url, command: 'SET rd:{id} 1' })
    expect(summary.loaded).toBe(30000)
    const seen = web.seen.slice(before)
    expect(seen[0]).toMatchObject({ path: '/old.parquet', headers: { authorization: 'Basic ' + Buffer.from('me:secret').toString('base64') } })
    expect(seen.slice(1).every(x => x.path === '/lake/moved.parquet')).toBe(true) // each range where the redirect led
  })

  it('a file replaced while it is read stops the run (If-Range: its ETag), naming the row group', async () => {
    const bytes = fs.readFileSync(file)
    let served = 0
    web.routes.set('/changing.parquet', (req, res) => {
      const etag = served++ < 3 ? '"v1"' : '"v2"' // the probe, the footer, one chunk; then a new file
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range)
      if (req.headers['if-range'] && req.headers['if-range'] !== etag) {
        res.writeHead(200, { etag, 'content-length': bytes.length })
        return res.end(bytes)
      }
      const first = Number(m[1])
      const last = Math.min(Number(m[2]), bytes.length - 1)
      res.writeHead(206, { etag, 'content-range': `bytes ${first}-${last}/${bytes.length}`, 'content-length': last - first + 1 })
      res.end(bytes.subarray(first, last + 1))
    })
    const res = await runCli(['import', `${web.base}/changing.parquet`, '-u', server.url, '-c', 'SET ch:{id} {v}', '--on-error', 'skip'])
    expect(res.code).toBe(3)
    expect(res.stderr).toMatch(/changing\.parquet: row group \d \(rows \d+-\d+\).*cannot be read: bytes \d+-\d+: it changed while it was read/)
  })

  it('a server without Range support: a clear error, exit 3, nothing downloaded whole', async () => {
    serve('/plain/data.parquet', fs.readFileSync(file), { ranges: false })
    const res = await runCli(['import', `${web.base}/plain/data.parquet`, '-u', server.url, '-c', 'SET nr:{id} 1'])
    expect(res.code).toBe(3)
    expect(res.stderr).toContain('does not answer Range requests')
    expect(await count('nr:')).toBe(0)
  })
})
