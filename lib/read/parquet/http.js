'use strict'

const { PipeloadError } = require('../../errors')
const { tooLong } = require('./file-buffer')

// A Parquet file at an http(s) URL as the AsyncBuffer hyparquet reads: each byte range one
// GET with a Range header. A Parquet file is read from its end (the footer says where each
// column chunk is), so a server that does not answer Range requests is refused with a clear
// error rather than downloaded whole (docs/parquet.md). The first request asks for the magic
// bytes (bytes=0-3): its 206 gives the file's size (Content-Range) and shows ranges work;
// redirects are followed once there, and the later ranges go to where they led. The resource
// must not change while it is read: each range is asked If-Range its ETag (or Last-Modified),
// and a 200 then (the whole, changed file) stops the run; so does a 206 whose ETag,
// Last-Modified or size (Content-Range) differs from the first answer's (a server that ignores
// If-Range sends the new file's bytes at the old offsets), or whose Content-Range is not the
// range asked for. A body that sends nothing for --timeout is given up; a range past the end of
// the file, or longer than a column chunk may be here (a footer's claim), is never requested.

const MAX_REDIRECTS = 5

/**
 * @param {{ url: string, name: string }} input a described URL input (lib/read/input.js)
 * @param {{ connectTimeout: number, signal?: AbortSignal }} o
 * @param {{ get, parseInputUrl, userAgent }} http lib/read/http-input.js's request helpers
 */
async function urlBuffer (input, o, http) {
  const shown = input.name
  const { url: first, auth } = http.parseInputUrl(input.url)
  const origin = first.origin
  const headersFor = (target, extra) => {
    const h = { 'user-agent': http.userAgent, accept: '*/*', 'accept-encoding': 'identity', ...extra }
    // Credentials go to the origin they were written for, not to one a redirect names.
    if (auth && target.origin === origin) h.authorization = auth
    return h
  }
  let url = bare(first)
  let res
  for (let hops = 0; ; hops++) {
    res = await http.get(url, headersFor(url, { range: 'bytes=0-3' }), o, shown)
    const location = res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304 ? res.headers.location : null
    if (!location) break
    res.resume()
    if (hops === MAX_REDIRECTS) throw invalid(shown, `more than ${MAX_REDIRECTS} redirects`, res.statusCode)
    try { url = bare(new URL(location, url)) } catch { throw invalid(shown, 'it redirects to a Location that is no URL', res.statusCode) }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(shown, `it redirects to a ${url.protocol} URL`, res.statusCode)
  }
  const status = res.statusCode
  if (status === 200) {
    res.destroy()
    throw new PipeloadError('PIPELOAD_INPUT_INVALID',
      `cannot read ${shown}: its server does not answer Range requests (it sent the whole file, HTTP 200), and a Parquet file is read from its end, a part at a time: download it first and load the file`,
      { file: shown, url: shown, status })
  }
  if (status !== 206) {
    res.resume()
    const code = status === 404 || status === 410 ? 'PIPELOAD_INPUT_NOT_FOUND' : 'PIPELOAD_INPUT_INVALID'
    throw new PipeloadError(code, `cannot read ${shown}: HTTP ${status} ${res.statusMessage || ''}`.trimEnd(), { file: shown, url: shown, status })
  }
  const m = /^bytes 0-\d+\/(\d+)$/.exec(String(res.headers['content-range'] ?? '').trim())
  res.resume()
  if (!m) throw invalid(shown, `asked for bytes 0-3, the server answered 206 with ${res.headers['content-range'] === undefined ? 'no Content-Range' : `Content-Range ${JSON.stringify(res.headers['content-range'])}`}, so the file's size is not known`, 206)
  const size = Number(m[1])
  const validator = res.headers.etag ?? res.headers['last-modified'] ?? null
  const identity = { url: shown, etag: res.headers.etag ?? null, lastModified: res.headers['last-modified'] ?? null, size }
  return {
    byteLength: size,
    bytesRead: 0,
    identity,
    async slice (start, end = size) {
      if (end <= start) return new ArrayBuffer(0)
      const bytes = `bytes ${start}-${end - 1}`
      if (end > size) throw new Error(`${bytes} are past the end of the file (${size.toLocaleString('en-US')} bytes)`)
      const long = tooLong(start, end)
      if (long) throw new Error(long)
      const headers = headersFor(url, { range: `bytes=${start}-${end - 1}` })
      if (validator) headers['if-range'] = validator
      const part = await http.get(url, headers, o, shown)
      let body
      try {
        const why = changeOf(part, identity, start, end)
        if (why) throw new Error(why)
        body = await readAll(part, end - start, o.timeout, http.idleText)
      } catch (err) {
        part.destroy() // its socket is not left holding a body nobody reads
        if (err instanceof PipeloadError) throw err
        throw Object.assign(new Error(`${bytes}: ${err.message}`), { code: err.code })
      }
      this.bytesRead += body.length
      return body.buffer.byteLength === body.length ? body.buffer : body.buffer.slice(body.byteOffset, body.byteOffset + body.length)
    },
    async close () {}
  }
}

/** The URL without credentials (they travel as a header). */
function bare (url) {
  const u = new URL(url)
  u.username = ''
  u.password = ''
  return u
}

function invalid (shown, why, status) {
  return new PipeloadError('PIPELOAD_INPUT_INVALID', `cannot read ${shown}: ${why}`, { file: shown, url: shown, status })
}

/**
 * Why an answer to `bytes=start-(end-1)` is not that range of the file the first answer
 * described (`identity`), or null: not a 206, another ETag, Last-Modified or size, another
 * range, another length. A server that ignores If-Range answers a changed file with a 206.
 */
function changeOf (res, identity, start, end) {
  const status = res.statusCode
  if (status === 200) return 'it changed while it was read (the server sent the whole new file)'
  if (status !== 206) return `HTTP ${status}`
  const changed = []
  const etag = res.headers.etag ?? null
  const lastModified = res.headers['last-modified'] ?? null
  if (etag !== identity.etag) changed.push(`ETag ${identity.etag ?? 'none'} → ${etag ?? 'none'}`)
  if (lastModified !== identity.lastModified) changed.push(`Last-Modified ${identity.lastModified ?? 'none'} → ${lastModified ?? 'none'}`)
  const value = res.headers['content-range']
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(value ?? '').trim())
  if (m && Number(m[3]) !== identity.size) changed.push(`size ${identity.size.toLocaleString('en-US')} → ${Number(m[3]).toLocaleString('en-US')} bytes`)
  if (changed.length) return `it changed while it was read (${changed.join(', ')})`
  if (!m || Number(m[1]) !== start || Number(m[2]) !== end - 1) {
    return `the server answered 206 with ${value === undefined ? 'no Content-Range' : `Content-Range ${JSON.stringify(value)}`}`
  }
  const length = res.headers['content-length']
  if (length !== undefined && Number(length) !== end - start) return `the server answered 206 with Content-Length ${length}`
  return null
}

/**
 * A response's body, which must be `length` bytes. `idleMs` (--timeout; 0: none): how long
 * it may send nothing before it is given up as stalled.
 */
async function readAll (res, length, idleMs, idleText) {
  const buf = Buffer.allocUnsafeSlow(length)
  let got = 0
  let timer = null
  const wait = () => {
    if (idleMs > 0) {
      timer = setTimeout(() => res.destroy(Object.assign(new Error(`the server sent nothing for ${idleText(idleMs)} after ${got.toLocaleString('en-US')} of ${length.toLocaleString('en-US')} bytes (--timeout)`), { code: 'ETIMEDOUT' })), idleMs)
    }
  }
  wait()
  try {
    for await (const chunk of res) {
      clearTimeout(timer)
      if (got + chunk.length > length) throw new Error(`the server sent more than the ${length} bytes asked for`)
      chunk.copy(buf, got)
      got += chunk.length
      wait()
    }
  } finally {
    clearTimeout(timer)
  }
  if (got !== length) throw new Error(`the connection closed after ${got} of ${length} bytes`)
  return buf
}

module.exports = { urlBuffer }
