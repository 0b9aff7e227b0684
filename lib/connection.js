'use strict'

const net = require('node:net')
const tls = require('node:tls')
const Redis = require('ioredis')
const RedisParser = require('redis-parser')
const { PipeloadError } = require('./errors')
const { encodeCommand } = require('./resp')
const { normalizeTls, tlsConnectOptions, describeTlsError } = require('./tls')

// Two planes. ioredis is the control plane: it resolves the URL and options, does AUTH,
// SELECT and TLS, and answers the one-off commands (PING, INFO, CLIENT LIST). The data
// plane is a plain socket to the same server that carries pre-encoded RESP batches;
// ioredis would cost a Command object and a Promise per command (~65k cmds/s measured).

/** ioredis options from pipeload's connection options (url, host, port, …, tls, sentinels). */
function ioredisOptions (o) {
  const base = {
    lazyConnect: true,
    protocol: 2,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: null,
    connectTimeout: o.connectTimeout,
    connectionName: 'pipeload',
    disconnectTimeout: 0,
    // Least privilege: an import needs no command on this connection beyond AUTH (and
    // SELECT). No INFO ready check (a server still LOADING is handled by the data plane,
    // which waits and re-sends), no CLIENT SETINFO; CLIENT SETNAME may be refused.
    enableReadyCheck: false,
    disableClientInfo: true
  }
  const url = o.url === undefined || o.url === null ? undefined : checkUrl(o.url)
  const fromSentinelUrl = url && SENTINEL_URL.test(url) ? parseSentinelUrl(url) : null
  const explicit = { ...fromSentinelUrl }
  for (const k of ['host', 'port', 'username', 'password', 'db', 'sentinelUsername', 'sentinelPassword']) {
    if (o[k] !== undefined) explicit[k] = o[k]
  }
  if (o.sentinels !== undefined || o.masterName !== undefined) Object.assign(explicit, sentinelOptions(o.sentinels, o.masterName))
  let t = normalizeTls(o.tls)
  if (!t && url && /^rediss:/i.test(url)) t = {}
  if (explicit.sentinels) {
    // ioredis asks the sentinels which server is the master, then checks with INFO that it
    // is one: that ready check stays on (the user needs +info); sentinelRetryStrategy null
    // fails at once when no sentinel answers, as retryStrategy null does for a server.
    Object.assign(base, { enableReadyCheck: true, sentinelRetryStrategy: null })
    if (t) Object.assign(explicit, { tls: tlsConnectOptions(t), enableTLSForSentinelMode: true })
  } else {
    if (!url && !o.host) base.host = '127.0.0.1'
    if (t) explicit.tls = tlsConnectOptions(t, o.host ?? urlHost(url))
  }
  // ioredis fills options from its arguments in order, each only where still unset: the
  // explicit options go first so that they win over the URL's (-a over a URL's password).
  return url && !fromSentinelUrl ? [{ ...base, ...explicit }, url] : [{ ...base, ...explicit }]
}

const SENTINEL_URL = /^redis-sentinel:\/\//i

/** A URL ioredis can take, or a PIPELOAD_OPTION_INVALID that does not show its password. */
function checkUrl (url) {
  if (typeof url !== 'string' || !url) throw urlError(url, 'a URL such as redis://[user:password@]host:port[/db]')
  if (SENTINEL_URL.test(url) || !/^rediss?:\/\//i.test(url)) return url
  try {
    const u = new URL(url)
    if (u.port && !(Number(u.port) > 0)) throw new Error('bad port')
  } catch {
    throw urlError(url, 'a URL such as redis://[user:password@]host:port[/db] (characters such as @ / : # in a password must be %-encoded)')
  }
  return url
}

function urlError (url, expected) {
  const shown = typeof url === 'string' ? JSON.stringify(redactUrl(url)) : typeof url
  return new PipeloadError('PIPELOAD_OPTION_INVALID', `url must be ${expected}, got ${shown}`, { option: 'url' })
}

function urlHost (url) {
  try {
    return url ? new URL(url).hostname.replace(/^\[|\]$/g, '') || undefined : undefined
  } catch {
    return undefined
  }
}

/**
 * redis-sentinel://[[user]:password@]host:port[,host:port…]/master-name[/db]: the
 * sentinels to ask, the master's name, and the credentials and database for the master.
 */
function parseSentinelUrl (url) {
  const m = /^redis-sentinel:\/\/(?:([^/]*)@)?([^/@]+)\/([^/?#]+)(?:\/(\d+))?\/?$/i.exec(url)
  if (!m) throw urlError(url, 'redis-sentinel://[[user]:password@]host:port[,host:port…]/master-name[/db]')
  const out = {}
  try {
    if (m[1] !== undefined) {
      const colon = m[1].indexOf(':')
      const user = colon < 0 ? m[1] : m[1].slice(0, colon)
      if (user) out.username = decodeURIComponent(user)
      if (colon >= 0) out.password = decodeURIComponent(m[1].slice(colon + 1))
    }
    out.name = decodeURIComponent(m[3])
  } catch {
    throw urlError(url, 'a redis-sentinel:// URL with %-encoding that decodes')
  }
  out.sentinels = m[2].split(',').map(hp => parseHostPort(hp, () => urlError(url, 'redis-sentinel://host:port[,host:port…]/master-name')))
  if (m[4] !== undefined) out.db = Number(m[4])
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

/** A URL with its password (and any query secrets) replaced, safe to print. */
function redactUrl (url) {
  if (!url) return url
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return String(url).replace(/\/\/[^@/]*@/, '//***@')
  }
}

/** Strip anything that looks like a credential from an error text. */
function scrub (text, secrets) {
  let s = String(text)
  for (const secret of secrets) if (secret) s = s.split(secret).join('***')
  return s
}

/** Connect the control client; a clear one-line error when the server is not there. */
async function openControl (o) {
  const client = new Redis(...ioredisOptions(o))
  // ioredis reports the socket's error on 'error' and rejects connect() with a generic
  // "Connection is closed"; keep the first so the message says what really happened.
  let cause = null
  client.on('error', err => { cause = cause || err })
  const target = describeTarget(client.options)
  try {
    await client.connect()
  } catch (err) {
    client.disconnect()
    throw connectError(cause || err, target, client.options)
  }
  return client
}

function connectError (err, target, opts) {
  const tlsReason = describeTlsError(err)
  if (tlsReason) {
    return new PipeloadError('PIPELOAD_TLS_FAILED', `cannot connect to Redis at ${target}: ${scrub(tlsReason, [opts.password, opts.sentinelPassword])}`, { target })
  }
  const reason = scrub(err.message || err.code, [opts.password, opts.sentinelPassword])
  if (/WRONGPASS|NOAUTH|NOPERM|invalid password|AUTH/i.test(err.message || err.code)) {
    return new PipeloadError('PIPELOAD_AUTH_FAILED', `authentication to Redis at ${target} failed: ${reason}`, { target })
  }
  // A TLS-only port drops a plain connection without a word.
  const hint = !opts.tls && /ECONNRESET|Connection is closed/.test(reason) ? ' (if the server wants TLS: rediss:// or --tls)' : ''
  return new PipeloadError('PIPELOAD_CONNECTION_FAILED', `cannot connect to Redis at ${target}: ${reason}${hint}`, { target })
}

/**
 * The data connection: a socket to the server the control client reached, with the same
 * credentials and database. Replies are parsed by redis-parser and handed to onReply /
 * onReplyError in order; onClose fires once with the reason the socket ended.
 */
class DataConnection {
  constructor (socket, target) {
    this.socket = socket
    this.target = target
    this.onReply = () => {}
    this.onReplyError = () => {}
    this.onClose = () => {}
    this.closed = false
    // With Sentinel, the master we write to can be demoted to a replica under us (a
    // failover): READONLY then means "the master moved", so the connection is dropped and
    // the Pipe reconnects (asking the sentinels again) and re-sends, as for a lost link.
    this.readonlyMeansMoved = false
    this.dropped = false
    // Replies parsed from the same chunk after close() belong to no one any more.
    this.parser = new RedisParser({
      returnReply: r => { if (!this.dropped) this.onReply(r) },
      returnError: e => {
        if (this.dropped) return
        if (this.readonlyMeansMoved && /^READONLY /.test(e.message)) {
          return this.close(new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${target} is a replica now (${e.message.split('.')[0]}): asking Sentinel for the master`, { target }))
        }
        this.onReplyError(e)
      },
      returnFatalError: e => this.close(new PipeloadError('PIPELOAD_CONNECTION_LOST', `bad reply from ${target}: ${e.message}`))
    })
    socket.on('data', d => this.parser.execute(d))
    socket.on('error', e => this.close(new PipeloadError('PIPELOAD_CONNECTION_LOST', `connection to Redis at ${target} failed: ${e.message}`, { target })))
    socket.on('close', () => this.close(new PipeloadError('PIPELOAD_CONNECTION_LOST', `connection to Redis at ${target} closed by the server`, { target })))
  }

  write (text) {
    return this.socket.write(text)
  }

  close (reason) {
    if (this.closed) return
    this.closed = true
    this.dropped = true
    this.closeReason = reason
    this.socket.destroy()
    this.onClose(reason || new PipeloadError('PIPELOAD_CONNECTION_LOST', `connection to ${this.target} closed`))
  }

  /** Close after every written byte has been flushed. */
  end () {
    this.closed = true
    this.socket.end()
  }
}

/**
 * Where and how the data plane connects, read once from the control client (its resolved
 * options, and the address it actually reached), so reconnecting needs no control client.
 */
function dataEndpoint (control) {
  const o = control.options
  const remote = control.stream
  const host = remote?.remoteAddress || o.host
  const port = remote?.remotePort || o.port
  // The certificate is checked against the name the user gave (SNI too), not the address
  // it resolved to; with Sentinel the master's address is all there is.
  const tls = o.tls ? tlsConnectOptions(o.tls === true ? {} : o.tls, o.sentinels ? undefined : o.host) : undefined
  return Object.freeze({
    host, port, path: o.path, tls, sentinel: Boolean(o.sentinels),
    username: o.username, password: o.password, db: o.db,
    target: describeTarget({ ...o, host, port, remote: Boolean(remote?.remoteAddress) })
  })
}

/** Open a data connection to an endpoint: AUTH and SELECT first, all within `timeout` ms. */
async function connectData (ep, timeout = 10000) {
  const socket = await connectSocket(ep, timeout)
  socket.setNoDelay(true)
  const hello = []
  if (ep.password) hello.push({ args: ep.username ? ['AUTH', ep.username, ep.password] : ['AUTH', ep.password], required: true })
  if (ep.db) hello.push({ args: ['SELECT', String(ep.db)], required: true })
  // The name lets CLIENT LIST find this connection; a user without CLIENT rights still loads.
  hello.push({ args: ['CLIENT', 'SETNAME', 'pipeload-data'], required: false })
  const conn = new DataConnection(socket, ep.target)
  conn.readonlyMeansMoved = Boolean(ep.sentinel)
  const timer = setTimeout(() => conn.close(new PipeloadError('PIPELOAD_CONNECTION_FAILED',
    `Redis at ${ep.target} accepted the connection but did not answer within ${timeout} ms`, { target: ep.target })), timeout)
  try {
    await handshake(conn, hello, ep)
  } catch (err) {
    conn.onClose = () => {}
    conn.close(err)
    throw err
  } finally {
    clearTimeout(timer)
  }
  return conn
}

/**
 * How the Pipe gets a new data connection after losing one: to the same endpoint, or, with
 * Sentinel, to wherever the sentinels now say the master is (a failover moves it): a fresh
 * control client (a duplicate of `control`) asks them, and is closed again at once.
 */
function dataReconnector (control, endpoint, timeout) {
  if (!control.options.sentinels) return () => connectData(endpoint, timeout)
  return async () => {
    const fresh = control.duplicate({
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: null,
      sentinelRetryStrategy: null,
      disconnectTimeout: 0
    })
    let cause = null
    fresh.on('error', err => { cause = cause || err })
    try {
      await fresh.connect()
    } catch (err) {
      fresh.disconnect()
      throw connectError(cause || err, describeTarget(fresh.options), fresh.options)
    }
    try {
      return await connectData(dataEndpoint(fresh), timeout)
    } finally {
      fresh.disconnect()
    }
  }
}

/** Open a data connection to where `control` is connected. */
function openData (control) {
  return connectData(dataEndpoint(control))
}

function connectSocket (ep, timeout) {
  return new Promise((resolve, reject) => {
    const opts = ep.path ? { path: ep.path } : { host: ep.host, port: ep.port }
    const socket = ep.tls ? tls.connect({ ...opts, ...ep.tls }) : net.connect(opts)
    const ready = ep.tls ? 'secureConnect' : 'connect'
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error(`timed out after ${timeout} ms`), { code: 'ETIMEDOUT' })), timeout)
    socket.once(ready, () => { clearTimeout(timer); socket.removeAllListeners('error'); resolve(socket) })
    socket.once('error', err => { clearTimeout(timer); reject(connectError(err, ep.target, ep)) })
  })
}

function handshake (conn, commands, o) {
  return new Promise((resolve, reject) => {
    let i = 0
    const next = () => { if (++i === commands.length) resolve() }
    conn.onReply = next
    // ioredis, too, carries on when a password is given to a server that needs none. An
    // optional command may be refused (NOPERM), but NOAUTH means we may do nothing at all.
    conn.onReplyError = err => (commands[i].required || /^NOAUTH/.test(err.message)) && !/without any password configured/.test(err.message)
      ? reject(connectError(err, conn.target, o))
      : next()
    conn.onClose = err => reject(err)
    conn.write(commands.map(c => encodeCommand(c.args)).join(''))
  })
}

module.exports = { openControl, openData, dataEndpoint, connectData, dataReconnector, DataConnection, redactUrl, describeTarget, scrub, ioredisOptions }
