'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// http(s) URLs as inputs (issue 13 item 7), against an HTTP server on loopback that this file
// starts: CSV by extension, gzipped NDJSON by Content-Type, redirects, 4xx/5xx, a refused
// connection, a body cut mid-way, Content-Length as the progress total, and --resume over
// a URL that is unchanged, changed, or cannot be shown unchanged.
const fs = require('node:fs')
const path = require('node:path')
const https = require('node:https')
const zlib = require('node:zlib')
const { useServer, withDeadPort } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { useHttpServer } = require('./helpers/http-server')
const { makeCerts } = require('./helpers/certs')
const { load } = require('..')

let server
let redis
let dir

useServer('pipeload-http-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

const web = useHttpServer()
const { routes } = web
let base
beforeAll(() => { base = web.base })

function serve (p, body, headers = {}) {
  routes.set(p, (req, res) => {
    res.writeHead(200, { 'content-length': body.length, ...headers })
    res.end(body)
  })
}

const CSV = Buffer.from('id,name,country\n1,Tokyo,JP\n2,Delhi,IN\n3,Shanghai,CN\n')

describe('http(s) inputs from the CLI', () => {
  it('loads a CSV whose format comes from the URL path, streamed from the server', async () => {
    serve('/cities.csv', CSV, { 'content-type': 'application/octet-stream' })
    const res = await runCli(['import', `${base}/cities.csv`, '-u', server.url, '--key', 'h1:city:{id}'])
    expect(res.code).toBe(0)
    expect(await redis.hgetall('h1:city:2')).toEqual({ id: '2', name: 'Delhi', country: 'IN' })
    expect(res.stderr).toContain(`loaded 3 of 3 records (3 commands) from ${base}/cities.csv`)
  })

  it('reads gzipped NDJSON by its content, the format from the Content-Type', async () => {
    const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({ id: i, v: `value ${i}` })).join('\n') + '\n'
    serve('/export', zlib.gzipSync(lines), { 'content-type': 'application/x-ndjson; charset=utf-8' })
    const res = await runCli(['import', `${base}/export`, '-u', server.url, '-c', 'SET h2:{id} {v}'])
    expect(res.code).toBe(0)
    expect(await redis.get('h2:299')).toBe('value 299')
    expect(await redis.get('h2:0')).toBe('value 0')
  })

  it('an unknown Content-Type without an extension asks for --format (exit 2); --format wins', async () => {
    serve('/blob', Buffer.from('{"id":1}\n'), { 'content-type': 'application/octet-stream' })
    const res = await runCli(['import', `${base}/blob`, '-u', server.url, '-c', 'SET h3:{id} x'])
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('application/octet-stream')
    expect(res.stderr).toContain('--format')
    const ok = await runCli(['import', `${base}/blob`, '-u', server.url, '-f', 'ndjson', '-c', 'SET h3:{id} x'])
    expect(ok.code).toBe(0)
    expect(await redis.get('h3:1')).toBe('x')
  })

  it('follows a chain of redirects, and gives up after 5 (exit 3)', async () => {
    serve('/final.csv', CSV)
    for (let i = 1; i <= 7; i++) {
      const next = i === 7 ? '/final.csv' : `/hop${i + 1}`
      routes.set(`/hop${i}`, (req, res) => { res.writeHead(i % 2 ? 302 : 301, { location: next }); res.end() })
    }
    const ok = await runCli(['import', `${base}/hop3`, '-f', 'csv', '-u', server.url, '--key', 'h4:{id}']) // 5 redirects
    expect(ok.code).toBe(0)
    expect(await redis.hget('h4:3', 'name')).toBe('Shanghai')
    const res = await runCli(['import', `${base}/hop2`, '-f', 'csv', '-u', server.url, '--key', 'h4b:{id}']) // 6
    expect(res.code).toBe(3)
    expect(res.stderr).toContain(`cannot read ${base}/hop2: more than 5 redirects`)
    expect(await redis.exists('h4b:1')).toBe(0)
  })

  it('404 is PIPELOAD_INPUT_NOT_FOUND and 500 PIPELOAD_INPUT_INVALID, exit 3, naming the URL and status', async () => {
    const nf = await runCli(['import', `${base}/missing.csv`, '-u', server.url, '--key', 'h5:{id}', '--json'])
    expect(nf.code).toBe(3)
    expect(nf.stderr).toContain(`${base}/missing.csv: HTTP 404 Not Found`)
    expect(nf.stderr).not.toContain('no such file')
    routes.set('/broken.csv', (req, res) => { res.writeHead(500); res.end('oops') })
    const se = await runCli(['import', `${base}/broken.csv`, '-u', server.url, '--key', 'h5:{id}'])
    expect(se.code).toBe(3)
    expect(se.stderr).toContain(`${base}/broken.csv: HTTP 500 Internal Server Error`)
    const err = await load({ input: `${base}/broken.csv`, url: server.url, key: 'h5:{id}' }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_INPUT_INVALID')
    expect(err.status).toBe(500)
    const err2 = await load({ input: `${base}/missing.csv`, url: server.url, key: 'h5:{id}' }).catch(e => e)
    expect(err2.code).toBe('PIPELOAD_INPUT_NOT_FOUND')
  })

  it('never prints the user name, password or query of the URL; sends them as Basic auth to that host only', async () => {
    routes.set('/private.csv', (req, res) => {
      if (req.headers.authorization !== 'Basic ' + Buffer.from('ann:s3cret').toString('base64')) { res.writeHead(401); return res.end() }
      res.writeHead(200, { 'content-length': CSV.length })
      res.end(CSV)
    })
    const url = `http://ann:s3cret@127.0.0.1:${web.server.address().port}/private.csv?token=t0psecret`
    const ok = await runCli(['import', url, '-u', server.url, '--key', 'h6:{id}'])
    expect(ok.code).toBe(0)
    expect(await redis.hget('h6:1', 'name')).toBe('Tokyo')
    expect(ok.stderr).toContain(`http://***@127.0.0.1:${web.server.address().port}/private.csv?…`)
    const denied = await runCli(['import', url.replace('s3cret', 'wr0ng'), '-u', server.url, '--key', 'h6:{id}'])
    expect(denied.code).toBe(3)
    expect(denied.stderr).toContain('HTTP 401 Unauthorized')
    for (const r of [ok, denied]) {
      expect(r.stdout + r.stderr).not.toMatch(/s3cret|wr0ng|t0psecret|ann:/)
    }
  })

  it('an unreachable host is exit 3 (the input), not 4 (the Redis server)', async () => {
    await withDeadPort(async port => {
      const res = await runCli(['import', `http://127.0.0.1:${port}/x.csv`, '-u', server.url, '--key', 'h7:{id}'])
      expect(res.code).toBe(3)
      expect(res.stderr).toContain(`cannot read http://127.0.0.1:${port}/x.csv: connection refused (ECONNREFUSED)`)
    })
  })

  it('a server that never answers is exit 3 after --connect-timeout', async () => {
    routes.set('/silent.csv', () => {}) // headers never come
    const res = await runCli(['import', `${base}/silent.csv`, '-u', server.url, '--key', 'h13:{id}', '--connect-timeout', '300ms'])
    expect(res.code).toBe(3)
    expect(res.stderr).toContain(`cannot read ${base}/silent.csv: no response within 300ms (--connect-timeout)`) // as given
  })

  it('https: loads from a server whose CA is trusted, and refuses an untrusted certificate (exit 3)', async () => {
    const certs = makeCerts(path.join(dir, 'certs'))
    const tls = https.createServer({ cert: fs.readFileSync(certs.serverCert), key: fs.readFileSync(certs.serverKey) }, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv', 'content-length': CSV.length })
      res.end(CSV)
    })
    await new Promise(resolve => tls.listen(0, '127.0.0.1', resolve))
    try {
      const url = `https://127.0.0.1:${tls.address().port}/export`
      const ok = await runCli(['import', url, '-u', server.url, '--key', 'h14:{id}'], { env: { NODE_EXTRA_CA_CERTS: certs.ca } })
      expect(ok.code).toBe(0)
      expect(await redis.hget('h14:3', 'name')).toBe('Shanghai')
      const untrusted = await runCli(['import', url, '-u', server.url, '--key', 'h14b:{id}'])
      expect(untrusted.code).toBe(3)
      expect(untrusted.stderr).toContain(`cannot read ${url}:`)
      expect(untrusted.stderr).toMatch(/certificate/)
      expect(await redis.exists('h14b:1')).toBe(0)
    } finally {
      tls.closeAllConnections()
      await new Promise(resolve => tls.close(resolve))
    }
  })

  for (const worker of ['--workers=0', '--workers=1']) {
    it(`a body cut mid-way is exit 3 naming the byte offset; the records before it are loaded (${worker})`, async () => {
      const full = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ id: i })).join('\n') + '\n'
      const sent = full.slice(0, full.indexOf('{"id":1000}')) + '{"id":10'
      routes.set('/cut.ndjson', (req, res) => {
        res.writeHead(200, { 'content-length': full.length })
        res.write(sent, () => res.socket.destroy())
      })
      const p = `h8${worker}:`
      const res = await runCli(['import', `${base}/cut.ndjson`, '-u', server.url, '-c', `SET ${p}{id} 1`, worker])
      expect(res.code).toBe(3)
      const n = Buffer.byteLength(sent).toLocaleString('en-US')
      expect(res.stderr).toContain(`${base}/cut.ndjson@${Buffer.byteLength(sent)}: the input stream failed: the connection closed after ${n} of ${full.length.toLocaleString('en-US')} bytes`)
      expect(await redis.exists(`${p}999`)).toBe(1)
      expect(await redis.exists(`${p}1000`)).toBe(0)
    })
  }
})

describe('http(s) inputs from the library', () => {
  it("input: 'http://…' loads, with Content-Length as the progress total", async () => {
    const rows = ['id,score']
    for (let i = 0; i < 5000; i++) rows.push(`${i},${i * 3}`)
    const body = zlib.gzipSync(rows.join('\n') + '\n')
    serve('/scores.csv.gz', body, { 'content-type': 'application/gzip' })
    const seenProgress = []
    const summary = await load({
      input: `${base}/scores.csv.gz`,
      url: server.url,
      commands: ['SET h9:{id} {score}'],
      progressInterval: 1,
      onProgress: p => seenProgress.push(p)
    })
    expect(summary.records).toBe(5000)
    expect(summary.input).toBe(`${base}/scores.csv.gz`)
    expect(await redis.get('h9:4999')).toBe(String(4999 * 3))
    expect(seenProgress.length).toBeGreaterThan(0)
    for (const p of seenProgress) expect(p.totalBytes).toBe(body.length)
    expect(seenProgress.at(-1).bytesRead).toBe(body.length)
  })
})

describe('--resume over a URL', () => {
  const rowsText = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ id: i })).join('\n') + '\n'

  /** First request: cut after 1,500 rows; later ones: the whole body. */
  function flaky (p, headers) {
    let n = 0
    routes.set(p, (req, res) => {
      n++
      res.writeHead(200, { 'content-length': rowsText.length, ...headers })
      if (n === 1) res.write(rowsText.slice(0, rowsText.indexOf('{"id":1500}')), () => res.socket.destroy())
      else res.end(rowsText)
    })
  }

  it('re-reads an unchanged URL (same ETag) and skips what the checkpoint says is loaded', async () => {
    flaky('/r1.ndjson', { etag: '"v1"' })
    const cp = path.join(dir, 'r1.ckpt')
    const first = await runCli(['import', `${base}/r1.ndjson`, '-u', server.url, '-c', 'INCR h10:{id}', '--checkpoint', cp])
    expect(first.code).toBe(3)
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved.input).toMatchObject({ url: `${base}/r1.ndjson`, etag: '"v1"', size: rowsText.length })
    expect(saved.records).toBe(1500)
    const second = await runCli(['import', `${base}/r1.ndjson`, '-u', server.url, '-c', 'INCR h10:{id}', '--checkpoint', cp, '--resume', '--json'])
    expect(second.code).toBe(0)
    expect(JSON.parse(second.stdout)).toMatchObject({ resumedFrom: 1500, records: 3000 })
    // Every row counted exactly once: the skipped prefix was not sent again.
    expect(await redis.get('h10:0')).toBe('1')
    expect(await redis.get('h10:1499')).toBe('1')
    expect(await redis.get('h10:2999')).toBe('1')
  })

  it('refuses to resume when the ETag changed, or when the server gives no ETag or Last-Modified (exit 2)', async () => {
    flaky('/r2.ndjson', { etag: '"v1"' })
    const cp = path.join(dir, 'r2.ckpt')
    expect((await runCli(['import', `${base}/r2.ndjson`, '-u', server.url, '-c', 'INCR h11:{id}', '--checkpoint', cp])).code).toBe(3)
    serve('/r2.ndjson', Buffer.from(rowsText), { etag: '"v2"' })
    const changed = await runCli(['import', `${base}/r2.ndjson`, '-u', server.url, '-c', 'INCR h11:{id}', '--checkpoint', cp, '--resume'])
    expect(changed.code).toBe(2)
    expect(changed.stderr).toContain(`${base}/r2.ndjson changed since the checkpoint was written (ETag "v1" → "v2")`)
    expect(await redis.get('h11:2999')).toBe(null)

    flaky('/r3.ndjson', {})
    const cp3 = path.join(dir, 'r3.ckpt')
    expect((await runCli(['import', `${base}/r3.ndjson`, '-u', server.url, '-c', 'INCR h12:{id}', '--checkpoint', cp3])).code).toBe(3)
    const unknown = await runCli(['import', `${base}/r3.ndjson`, '-u', server.url, '-c', 'INCR h12:{id}', '--checkpoint', cp3, '--resume'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('has no ETag or Last-Modified')
    expect(await redis.get('h12:2999')).toBe(null)
  })
})

describe('help', () => {
  it('says the input can be an http(s) URL, with an example', async () => {
    const res = await runCli(['import', '--help'])
    expect(res.stdout).toMatch(/input\s+files to load, one after another: paths,\s+patterns[^]*- for stdin, http\(s\):\/\/ URLs/)
    expect(res.stdout).toContain('a URL that answers 4xx/5xx, cannot be reached or is cut short')
    expect(res.stdout).toContain('pipeload import https://')
  })
})
