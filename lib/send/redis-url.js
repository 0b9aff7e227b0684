'use strict'

const { PipeloadError } = require('../errors')
const { splitUrl, userAndPassword } = require('../read/userinfo')

// Where to connect, as the user writes it: redis://, rediss:// and redis-sentinel:// URLs
// (credentials decoded, never passed on inside a URL string), sentinel lists, ports; and
// how a target or a URL is shown without its secrets (connection.js turns these into
// ioredis options and sockets).

/**
 * A port given as an option (a number, or digits), or a URL that is a bare number: 1 to
 * 65535. Node refuses others only when connecting, which read as a lost connection (exit 4).
 */
function checkPort (port, name) {
  const n = typeof port === 'string' && /^\d+$/.test(port) ? Number(port) : port
  if (Number.isInteger(n) && n >= 1 && n <= 65535) return
  throw new PipeloadError('PIPELOAD_OPTION_INVALID', `${name} must be a port number from 1 to 65535, got ${JSON.stringify(port)}`, { option: name })
}

const SENTINEL_URL = /^redis-sentinel:\/\//i
const URL_FORMS = 'a URL such as redis://[user:password@]host:port[/db], rediss://… or redis-sentinel://…'

/** "user:password" (%-encoded) → { username, password }; a bad %-escape is an option error. */
function decodeUserinfo (url, userinfo) {
  const { user, pass } = userAndPassword(userinfo)
  try {
    const out = {}
    if (user) out.username = decodeURIComponent(user)
    if (pass) out.password = decodeURIComponent(pass)
    return out
  } catch {
    // The message shows neither part: the bad escape is in the secret itself.
    throw urlError(url, `${URL_FORMS}, whose user name and password decode: a "%" there must be written %25`)
  }
}

/**
 * A redis://, rediss:// (or scheme-less host:port) URL as { options (username, password),
 * tls, host, rest (the URL without its credentials, for ioredis: host, port, db, query) },
 * or a redis-sentinel:// URL as { options } with the sentinels. A unix socket path is
 * passed on as it is. Anything else is a PIPELOAD_OPTION_INVALID that hides the password.
 */
function parseUrl (url) {
  if (typeof url !== 'string' || !url.trim()) throw urlError(url, URL_FORMS)
  if (SENTINEL_URL.test(url)) return { options: parseSentinelUrl(url) }
  if (/^\d+$/.test(url)) { // ioredis reads a bare number as a port
    checkPort(url, 'url')
    return { options: { port: Number(url) } }
  }
  if (url.startsWith('/') && !url.startsWith('//')) return { options: {}, rest: url }
  const { scheme, userinfo, rest } = splitUrl(url)
  if (scheme && !/^rediss?:\/\/$/i.test(scheme)) throw urlError(url, URL_FORMS)
  const tls = /^rediss:/i.test(scheme)
  const plain = `${tls ? 'rediss' : 'redis'}://${rest}`
  let u
  try {
    u = new URL(plain)
  } catch {
    u = null
  }
  // What follows the credentials is host[:port][/db][?options]: anything else means the
  // password held a character that ended it early, or the URL is not a Redis URL at all.
  if (!u || u.username || u.password || u.hash || (u.port && !(Number(u.port) > 0)) || !/^\/?(\d+\/?)?$/.test(u.pathname)) {
    throw urlError(url, `${URL_FORMS} (characters such as / # ? in a password must be %-encoded)`)
  }
  const options = userinfo === null ? {} : decodeUserinfo(url, userinfo)
  return { options, tls, host: u.hostname.replace(/^\[|\]$/g, '') || undefined, rest: plain }
}

/** Whether a URL carries a password (for the command-line warning and the precedence rules). */
function urlHasPassword (url) {
  if (typeof url !== 'string') return false
  const { userinfo } = splitUrl(url)
  return userinfo !== null && userAndPassword(userinfo).pass !== ''
}

function urlError (url, expected) {
  const shown = typeof url === 'string' ? JSON.stringify(redactUrl(url)) : typeof url
  return new PipeloadError('PIPELOAD_OPTION_INVALID', `url must be ${expected}, got ${shown}`, { option: 'url' })
}

/**
 * redis-sentinel://[[user]:password@]host:port[,host:port…]/master-name[/db]: the
 * sentinels to ask, the master's name, and the credentials and database for the master.
 */
function parseSentinelUrl (url) {
  const { userinfo, rest } = splitUrl(url)
  const m = /^([^/@]+)\/([^/?#]+)(?:\/(\d+))?\/?$/.exec(rest)
  if (!m) throw urlError(url, 'redis-sentinel://[[user]:password@]host:port[,host:port…]/master-name[/db] (characters such as / # ? in a password must be %-encoded)')
  const out = userinfo === null ? {} : decodeUserinfo(url, userinfo)
  try {
    out.name = decodeURIComponent(m[2])
  } catch {
    throw urlError(url, 'a redis-sentinel:// URL whose master name decodes')
  }
  out.sentinels = m[1].split(',').map(hp => parseHostPort(hp, () => urlError(url, 'redis-sentinel://host:port[,host:port…]/master-name')))
  if (m[3] !== undefined) out.db = Number(m[3])
  return out
}

/** "host:port" (or "[::1]:port", or "host" for port 26379) → { host, port }. */
function parseHostPort (text, error) {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(String(text).trim())
  if (!m || (m[3] !== undefined && !(Number(m[3]) > 0 && Number(m[3]) < 65536))) throw error()
  return { host: m[1] || m[2], port: m[3] === undefined ? 26379 : Number(m[3]) }
}

/** The library's sentinels ([{ host, port }] or ['host:port']) and masterName, for ioredis. */
function sentinelOptions (sentinels, masterName) {
  const bad = (name, expected, got) => new PipeloadError('PIPELOAD_OPTION_INVALID', `${name} must be ${expected}, got ${typeof got === 'string' ? JSON.stringify(got) : typeof got}`, { option: name })
  if (!Array.isArray(sentinels) || sentinels.length === 0) throw bad('sentinels', 'a list of sentinels ({ host, port } or "host:port") with masterName', sentinels)
  if (typeof masterName !== 'string' || !masterName) throw bad('masterName', 'the name the sentinels know the master by (with sentinels)', masterName)
  const list = sentinels.map(s => typeof s === 'string'
    ? parseHostPort(s, () => bad('sentinels', '"host:port" entries', s))
    : (s && typeof s.host === 'string' ? { host: s.host, port: Number(s.port ?? 26379) } : (() => { throw bad('sentinels', '{ host, port } entries', s) })()))
  return { sentinels: list, name: masterName }
}

/** Where we tried to connect, for messages: never includes a password. */
function describeTarget (opts) {
  if (opts.path) return opts.path
  if (opts.sentinels && !opts.remote) return `master "${opts.name}" via sentinel ${opts.sentinels.map(s => `${s.host}:${s.port}`).join(',')}`
  return `${opts.host}:${opts.port}${opts.db ? '/' + opts.db : ''}`
}

/**
 * A URL with its credentials replaced, safe to print: everything between "//" (or the
 * start) and the last "@" goes, whatever it holds, and so do password=… query values.
 */
function redactUrl (url) {
  if (!url) return url
  const s = String(url)
  const { scheme, userinfo, rest } = splitUrl(s)
  const shown = userinfo === null ? scheme + rest : `${scheme}***@${rest}`
  return shown.replace(/([?&](?:password|pass|sentinelPassword)=)[^&]*/gi, '$1***')
}

/** Strip anything that looks like a credential from an error text. */
function scrub (text, secrets) {
  let s = String(text)
  for (const secret of secrets) {
    if (!secret) continue
    for (const form of new Set([String(secret), encodeURIComponent(secret)])) s = s.split(form).join('***')
  }
  return s
}

module.exports = { checkPort, parseUrl, urlHasPassword, urlError, sentinelOptions, describeTarget, redactUrl, scrub }
