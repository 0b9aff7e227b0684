'use strict'

const { PipeloadError } = require('../errors')

// A Parquet file at an http(s) URL as the AsyncBuffer hyparquet reads: each byte range one
// GET with a Range header. A Parquet file is read from its end (the footer says where each
// column chunk is), so a server that does not answer Range requests is refused with a clear
// error rather than downloaded whole (docs/parquet.md). The first request asks for the magic
// bytes (bytes=0-3): its 206 gives the file's size (Content-Range) and shows ranges work;
// redirects are followed once there, and the later ranges go to where they led. The resource
// must not change while it is read: each range is asked If-Range its ETag (or Last-Modified),
// and a 200 then (the whole, changed file) stops the run.

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
    res = await http.get(url, headersFor(url, { range: 'bytes=0-3' }), o.connectTimeout, o.signal, shown)
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
      const headers = headersFor(url, { range: `bytes=${start}-${end - 1}` })
      if (validator) headers['if-range'] = validator
      const part = await http.get(url, headers, o.connectTimeout, o.signal, shown)
      if (part.statusCode !== 206) {
        part.resume()
        const why = part.statusCode === 200 ? 'it changed while it was read (the server sent the whole new file)' : `HTTP ${part.statusCode}`
        throw new Error(`bytes ${start}-${end - 1}: ${why}`)
      }
      const body = await readAll(part, end - start)
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

/** A response's body, which must be `length` bytes. */
async function readAll (res, length) {
  const buf = Buffer.allocUnsafeSlow(length)
  let got = 0
  for await (const chunk of res) {
    if (got + chunk.length > length) throw new Error(`the server sent more than the ${length} bytes asked for`)
    chunk.copy(buf, got)
    got += chunk.length
  }
  if (got !== length) throw new Error(`the connection closed after ${got} of ${length} bytes`)
  return buf
}

module.exports = { urlBuffer }
