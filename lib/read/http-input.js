'use strict'

const { Readable } = require('node:stream')
const { PipeloadError } = require('../errors')
const { version } = require('../../package.json')
const { splitUrl, userAndPassword } = require('./userinfo')

// An http(s):// input: one GET, its body streamed into the reader like stdin (never saved
// whole), gzip found by the reader's magic-byte check. The format comes from --format, the
// URL path's extension, or the Content-Type, in that order; Content-Length is the size the
// progress line counts against. Errors are input errors (exit 3): an HTTP status, a host
// that cannot be reached (the input is unreachable, the Redis server may be fine), too many
// redirects, a body cut short (the reader names the byte offset).

const MAX_REDIRECTS = 5

const CONTENT_TYPES = Object.freeze({
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/json': 'json',
  'text/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'application/x-jsonlines': 'ndjson',
  'application/jsonlines': 'ndjson',
  'application/vnd.apache.parquet': 'parquet',
  'application/x-parquet': 'parquet',
  'application/parquet': 'parquet'
})

/** Whether a string input names an http(s) URL rather than a file. */
function isUrl (s) {
  return typeof s === 'string' && /^https?:\/\//i.test(s)
}

/** An http(s) URL split at the last "@" before its query (./userinfo.js); null for any other string. */
function httpParts (s) {
  return /^https?:\/\//i.test(s) ? splitUrl(s, { beforeQuery: true }) : null
}

/**
 * An input URL as the URL to request (no credentials) and its Basic authorization (null
 * without a user-info). A URL that does not parse, or a user-info whose %-escapes do not
 * decode, is PIPELOAD_OPTION_INVALID (exit 2) showing the URL without them.
 */
function parseInputUrl (s) {
  const parts = httpParts(s)
  let url = null
  try { url = parts && new URL(parts.scheme + parts.rest) } catch {}
  if (!url) throw new PipeloadError('PIPELOAD_OPTION_INVALID', `input: not a valid URL: ${hiddenUrl(s)}`, { option: 'input' })
  if (!parts.userinfo) return { url, auth: null }
  const { user, pass } = userAndPassword(parts.userinfo)
  try {
    return { url, auth: 'Basic ' + Buffer.from(`${decodeURIComponent(user)}:${decodeURIComponent(pass)}`).toString('base64') }
  } catch {
    // The message shows neither part: the bad escape is in the secret itself.
    throw new PipeloadError('PIPELOAD_OPTION_INVALID',
      `input: the user name and password of ${displayUrl(s)} do not decode: a "%" there must be written %25`, { option: 'input' })
  }
}

/**
 * The URL as messages, progress and checkpoints show it: no user name or password (`***@`),
 * no query (it often carries a token or a signature: `?…`). A string is split at its last
 * "@" (httpParts) before it is parsed.
 */
function displayUrl (u) {
  if (!(u instanceof URL)) {
    const parts = httpParts(String(u))
    try {
      if (parts?.userinfo) return displayUrl(new URL(parts.scheme + parts.rest)).replace('//', '//***@')
      u = new URL(u)
    } catch {
      return hiddenUrl(u)
    }
  }
  const auth = u.username || u.password ? '***@' : ''
  return `${u.protocol}//${auth}${u.host}${u.pathname}${u.search ? '?…' : ''}`
}

/**
 * A URL that does not parse, as it may be shown: everything up to the last "@" of the whole
 * text hidden (a password may hold a raw "?"), and the query.
 */
function hiddenUrl (s) {
  return String(s).replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, (x, scheme) => `${scheme ?? ''}***@`).replace(/\?.*$/s, '?…')
}

/** The format a Content-Type names, or null. */
function formatOfContentType (type) {
  if (!type) return null
  return CONTENT_TYPES[String(type).split(';')[0].trim().toLowerCase()] ?? null
}

function unreachable (shown, err) {
  const why = err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' ? `host not found (${err.code})`
    : err.code === 'ECONNREFUSED' ? 'connection refused (ECONNREFUSED)'
      : err.code === 'ETIMEDOUT' ? err.message
        : err.message
  return new PipeloadError('PIPELOAD_INPUT_NOT_FOUND', `cannot read ${shown}: ${why}`, { file: shown, url: shown, cause: err })
}

/**
 * One request; resolves with the response once its headers are in. `o`: the run's options
 * ({ connectTimeout, signal }); `shown`: the input as messages show it.
 */
function get (url, headers, o, shown) {
  const { connectTimeout: timeoutMs, signal } = o
  return new Promise((resolve, reject) => {
    const mod = require(url.protocol === 'https:' ? 'node:https' : 'node:http') // loaded for URL inputs only
    const req = mod.request(url, { method: 'GET', headers, signal }, res => {
      req.setTimeout(0) // from here the body is read at the loader's pace: idle is not dead
      resolve(res)
    })
    req.setTimeout(timeoutMs, () => {
      req.destroy(Object.assign(new Error(`no response within ${o.said?.connectTimeout ?? `${timeoutMs / 1000}s`} (--connect-timeout)`), { code: 'ETIMEDOUT' }))
    })
    req.on('error', err => {
      if (err.name === 'AbortError') reject(new PipeloadError('PIPELOAD_ABORTED', 'aborted', { cause: err }))
      else reject(unreachable(shown, err))
    })
    req.end()
  })
}

/**
 * GET `input.url`, following up to 5 redirects; resolves with the input's description
 * completed (`stream`, `format`, `size`, `http` identity), a new object of kind 'bytes':
 * `input` is left as it was. With `range` (--resume), ask for the bytes from `range.offset`
 * on, if the resource still matches `range.ifRange`: a 206 gives `range` ({ offset }: the
 * body starts there); a 200 is the whole body, as without `range` (the server ignores
 * ranges, or the resource changed).
 * @param {{ url: string, name: string, format?: string }} input
 * @param {{ format?: string, connectTimeout: number, signal?: AbortSignal }} o
 * @param {{ offset: number, ifRange: string, checkpoint: string }|null} [range]
 */
async function openUrl (input, o, range = null) {
  // Parquet is read by byte ranges, from its footer: no GET of the whole body (parquet/http.js).
  if (input.format === 'parquet') return openParquetUrl(input, o)
  const given = parseInputUrl(input.url)
  const auth = given.auth
  let url = given.url
  const shown = input.name
  const origin = url.origin
  let res
  for (let hops = 0; ; hops++) {
    const target = new URL(url)
    target.username = ''
    target.password = ''
    const headers = { 'user-agent': `pipeload/${version}`, accept: '*/*', 'accept-encoding': 'identity' }
    if (range) Object.assign(headers, { range: `bytes=${range.offset}-`, 'if-range': range.ifRange })
    // Credentials go to the origin they were written for (scheme, host and port), not to
    // another one a redirect names; the URL asked for never carries them.
    if (auth && target.origin === origin) headers.authorization = auth
    res = await get(target, headers, o, shown)
    if (res.statusCode < 300 || res.statusCode >= 400 || res.statusCode === 304) break
    res.resume() // a redirect's body is not wanted
    const location = res.headers.location
    if (!location) break
    if (hops === MAX_REDIRECTS) {
      throw new PipeloadError('PIPELOAD_INPUT_INVALID', `cannot read ${shown}: more than ${MAX_REDIRECTS} redirects`, { file: shown, url: shown, status: res.statusCode })
    }
    try {
      url = new URL(location, target)
    } catch {
      throw new PipeloadError('PIPELOAD_INPUT_INVALID', `cannot read ${shown}: it redirects to a Location that is no URL`, { file: shown, url: shown, status: res.statusCode })
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new PipeloadError('PIPELOAD_INPUT_INVALID', `cannot read ${shown}: it redirects to a ${url.protocol} URL`, { file: shown, url: shown })
    }
  }
  const status = res.statusCode
  if (range && status === 416) {
    res.resume()
    throw new PipeloadError('PIPELOAD_CHECKPOINT_INVALID',
      `checkpoint ${range.checkpoint}: ${shown} has no byte ${range.offset} (HTTP 416 Range Not Satisfiable): it is shorter than when the checkpoint was written; remove the checkpoint to start over`,
      { file: range.checkpoint, url: shown, status })
  }
  if (status < 200 || status >= 300) {
    res.resume()
    const code = status === 404 || status === 410 ? 'PIPELOAD_INPUT_NOT_FOUND' : 'PIPELOAD_INPUT_INVALID'
    throw new PipeloadError(code, `cannot read ${shown}: HTTP ${status} ${res.statusMessage || require('node:http').STATUS_CODES[status] || ''}`.trimEnd(), { file: shown, url: shown, status })
  }
  const type = res.headers['content-type'] || null
  const format = input.format || formatOfContentType(type)
  if (!format) {
    res.destroy()
    throw new PipeloadError('PIPELOAD_FORMAT_UNKNOWN',
      `cannot tell the format of ${shown} from its path or its Content-Type (${type || 'none'}): use --format csv|tsv|json|ndjson|parquet`, { file: shown })
  }
  if (format === 'parquet') { // known from the Content-Type only: read by ranges instead
    res.destroy()
    return openParquetUrl({ ...input, format }, o)
  }
  const length = Number(res.headers['content-length'])
  const bodySize = Number.isSafeInteger(length) && length >= 0 ? length : undefined
  const part = status === 206 && range ? partOf(res, range, bodySize, shown) : null
  const size = part ? part.total ?? undefined : bodySize // the whole resource's: progress counts from the offset
  return {
    ...input,
    kind: 'bytes',
    format,
    size,
    range: part ? { offset: range.offset } : null,
    stream: bodyStream(res, bodySize, o.timeout, o.said?.timeout),
    // What a checkpoint compares on --resume: the same resource, unchanged. A 206 need not
    // repeat Last-Modified, but it answers If-Range: the validator sent still holds.
    http: {
      url: shown,
      etag: res.headers.etag ?? (part ? range.etag : null) ?? null,
      lastModified: res.headers['last-modified'] ?? (part ? range.lastModified : null) ?? null,
      size: size ?? null
    }
  }
}

/**
 * A Parquet URL: its size and identity from a first Range request; the description's `buffer`
 * then reads the byte ranges the reader asks for (no `stream`: nothing is downloaded whole).
 */
async function openParquetUrl (input, o) {
  const buffer = await require('./parquet/http').urlBuffer(input, o, { get, parseInputUrl, idleText: ms => idleText(ms, o.said?.timeout), userAgent: `pipeload/${version}` })
  return { ...input, kind: 'bytes', buffer, size: buffer.byteLength, range: null, stream: null, http: buffer.identity }
}

/**
 * A 206's Content-Range, checked against the range asked for: `bytes <offset>-<last>/<total>`
 * (`*` for an unknown total). Anything else would load bytes from the wrong place.
 */
function partOf (res, range, bodySize, shown) {
  const value = res.headers['content-range']
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(value ?? '').trim())
  const first = m && Number(m[1])
  const last = m && Number(m[2])
  const total = m && m[3] !== '*' ? Number(m[3]) : null
  const fits = m && first === range.offset && last >= first && (total === null || last < total) &&
    (bodySize === undefined || bodySize === last - first + 1)
  if (!fits) {
    res.destroy()
    throw new PipeloadError('PIPELOAD_INPUT_INVALID',
      `cannot resume ${shown}: asked for its bytes from ${range.offset} on, the server answered 206 with ${value === undefined ? 'no Content-Range' : `Content-Range ${JSON.stringify(value)}`}${m && bodySize !== undefined && bodySize !== last - first + 1 ? ` and Content-Length ${bodySize}` : ''}`,
      { file: shown, url: shown, status: 206 })
  }
  return { total: total ?? range.size ?? null }
}

/** A --timeout as messages say it: as it was given (`said`: "2m"), else `500 ms`, `30s`. */
function idleText (ms, said) {
  return said ?? (ms % 1000 ? `${ms} ms` : `${ms / 1000}s`)
}

// Unread body bytes held here before the response is paused. Node drops what a response
// holds when the connection closes early; what is held here is read first, so records
// received before a cut still load and the error names the offset after them.
const HELD_BYTES = 1024 * 1024

/**
 * The response body as a byte stream whose error (a cut connection) comes after its data.
 * `idleMs` (--timeout; 0: none): how long the reader may wait for the next bytes (none
 * held) before the download is given up as stalled; `said`: that timeout as given, for the message.
 */
function bodyStream (res, size, idleMs = 0, said) {
  const held = []
  let heldBytes = 0
  let received = 0
  let ended = false
  let failure = null
  let wake = null
  let timer = null
  const signal = () => { if (wake) { const w = wake; wake = null; w() } }
  res.on('data', chunk => {
    held.push(chunk)
    heldBytes += chunk.length
    received += chunk.length
    if (heldBytes >= HELD_BYTES) res.pause()
    signal()
  })
  res.on('end', () => { ended = true; signal() })
  res.on('error', err => {
    if (failure) return // given up as stalled (below): that is the reason
    const of = size === undefined ? '' : ` of ${size.toLocaleString('en-US')}`
    failure = Object.assign(new Error(`the connection closed after ${received.toLocaleString('en-US')}${of} bytes (${err.message})`), { code: err.code })
    signal()
  })
  async function * chunks () {
    for (;;) {
      if (held.length) {
        const chunk = held.shift()
        heldBytes -= chunk.length
        if (heldBytes < HELD_BYTES && res.isPaused()) res.resume()
        yield chunk
      } else if (failure) throw failure
      else if (ended) return
      else await new Promise(resolve => { wake = resolve; if (idleMs > 0) timer = setTimeout(stalled, idleMs) })
      clearTimeout(timer)
    }
  }
  const stalled = () => {
    failure = Object.assign(new Error(`the server sent nothing for ${idleText(idleMs, said)} after ${received.toLocaleString('en-US')} bytes (--timeout)`), { code: 'ETIMEDOUT' })
    res.destroy()
    signal()
  }
  const body = Readable.from(chunks(), { objectMode: false })
  body.once('close', () => res.destroy()) // a run stopped early closes the download
  return body
}

module.exports = { openUrl, isUrl, displayUrl, parseInputUrl, formatOfContentType, MAX_REDIRECTS }
