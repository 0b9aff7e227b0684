'use strict'

const net = require('node:net')
const RedisParser = require('redis-parser')
const { PipeloadError } = require('../errors')
const { encodeCommand } = require('../encode/resp')
const { normalizeTls, tlsConnectOptions, describeTlsError } = require('./tls')
const { notReady } = require('./not-ready')
const { checkPort, parseUrl, urlHasPassword, urlError, sentinelOptions, describeTarget, redactUrl, scrub } = require('./redis-url')

// ioredis (with its ~45 modules) takes ~50 ms to load: loaded by the first run that
// connects, not by a dry run, --help, or a run that fails before connecting.
let redisModule = null
function ioredis () {
  return (redisModule ??= require('ioredis'))
}

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
    // openControl bounds the whole setup (connect, TLS, AUTH, SELECT, CLIENT SETNAME) by
    // connectTimeout and names the stage; ioredis's own timer, on the socket alone, is only
    // a backstop that must not win the race with a vaguer "connect ETIMEDOUT".
    connectTimeout: (o.connectTimeout ?? 10000) + 1000,
    // Any later command of ours (INFO, CLUSTER SLOTS, PING, SCAN) is bounded the same way.
    commandTimeout: o.connectTimeout ?? 10000,
    connectionName: 'pipeload',
    disconnectTimeout: 0,
    // Least privilege: an import needs no command on this connection beyond AUTH (and
    // SELECT). No INFO ready check (a server still LOADING is handled by the data plane,
    // which waits and re-sends), no CLIENT SETINFO; CLIENT SETNAME may be refused.
    enableReadyCheck: false,
    disableClientInfo: true
  }
  const url = o.url === undefined || o.url === null ? undefined : parseUrl(o.url)
  // redis://:pw@/0 or redis:// name no server: ioredis would take 127.0.0.1:6379, which may
  // be another server than meant. A host given on its own (-h) fills it.
  if (url?.rest && !url.host && !url.rest.startsWith('/') && o.host === undefined) {
    throw urlError(o.url, 'a URL with a host, such as redis://[user:password@]host:port[/db] (an empty host is not taken to mean 127.0.0.1)')
  }
  // Credentials in the URL are handed over as options, never inside a URL string: ioredis
  // would split a raw "@" or "/" in a password differently, and decodeURIComponent would
  // throw a URIError on a stray "%".
  const explicit = { ...url?.options }
  for (const k of ['host', 'port', 'username', 'password', 'db', 'sentinelUsername', 'sentinelPassword']) {
    if (o[k] !== undefined) explicit[k] = o[k]
  }
  if (o.port !== undefined) checkPort(o.port, 'port')
  if (o.sentinels !== undefined || o.masterName !== undefined) Object.assign(explicit, sentinelOptions(o.sentinels, o.masterName))
  let t = normalizeTls(o.tls)
  if (!t && url?.tls) t = {}
  if (explicit.sentinels) {
    // ioredis asks the sentinels which server is the master, then checks with INFO that it
    // is one: that ready check stays on (the user needs +info); sentinelRetryStrategy null
    // fails at once when no sentinel answers, as retryStrategy null does for a server.
    // sentinelCommandTimeout: a sentinel that takes the connection and never answers
    // SENTINEL get-master-addr-by-name would keep its client (and the process) alive.
    Object.assign(base, { enableReadyCheck: true, sentinelRetryStrategy: null, sentinelCommandTimeout: o.connectTimeout ?? 10000 })
    if (t) Object.assign(explicit, { tls: tlsConnectOptions(t), enableTLSForSentinelMode: true })
  } else {
    if (!url?.rest && !o.host) base.host = '127.0.0.1'
    if (t) explicit.tls = tlsConnectOptions(t, o.host ?? url?.host)
  }
  // ioredis fills options from its arguments in order, each only where still unset: the
  // explicit options go first so that they win over the URL's (-a over a URL's password).
  return url?.rest ? [{ ...base, ...explicit }, url.rest] : [{ ...base, ...explicit }]
}

/**
 * One step of setting up a connection, bounded: it must settle within `ms`, and an abort of
 * `signal` ends it at once. Either way `cancel()` tears down what the step opened, and the
 * error names the target and the stage (`stage` may be a function: the stage is often
 * known only when the time is up). An already-aborted signal starts nothing.
 */
function bounded (work, { ms, said, signal, target, stage, cancel = () => {}, hint = () => '' }) {
  const stageNow = () => typeof stage === 'function' ? stage() : stage
  if (signal?.aborted) return Promise.reject(abortError(target, stageNow()))
  return new Promise((resolve, reject) => {
    let settled = false
    const settle = (fn, value) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      fn(value)
    }
    const give = err => { const s = stageNow(); cancel(); settle(reject, err(s)) }
    const onAbort = () => give(s => abortError(target, s))
    const timer = setTimeout(() => give(s => new PipeloadError('PIPELOAD_TIMEOUT',
      `Redis at ${target} did not answer within ${said ?? formatMs(ms)} ${s} (connect timeout)${hint(s)}`, { target, stage: s })), ms)
    signal?.addEventListener('abort', onAbort, { once: true })
    Promise.resolve().then(work).then(v => settle(resolve, v), e => settle(reject, e))
  })
}

function abortError (target, stage) {
  return new PipeloadError('PIPELOAD_ABORTED', `aborted ${stage} (Redis at ${target})`, { target, stage })
}

function formatMs (ms) {
  return ms >= 1000 && ms % 100 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

const TLS_HINT = ': the server may not speak TLS on this port: drop --tls / use redis://'

/** What the control client is doing now, for a message about it taking too long. */
function controlStage (client) {
  const o = client.options
  if (client.status === 'connect') {
    // ioredis sends its whole handshake at once and waits for every reply: the oldest
    // command still awaiting one is what the server is silent about.
    const first = client.commandQueue?.peekFront?.()?.command
    if (first?.name) return `while sending ${[first.name, ...(first.name === 'client' ? first.args.slice(0, 1) : [])].join(' ').toUpperCase()}`
    const sent = []
    if (o.password) sent.push('AUTH')
    if (o.db) sent.push('SELECT')
    if (o.connectionName) sent.push('CLIENT SETNAME')
    if (o.sentinels && o.enableReadyCheck) sent.push('INFO (the check that it is a master)')
    return `while sending ${sent.join(', ') || 'the first command'}`
  }
  if (o.sentinels) return `while asking the sentinels where master "${o.name}" is and connecting to it`
  // A TLS socket whose TCP connection is up is waiting for the server's side of the handshake.
  if (o.tls && client.stream && !client.stream.connecting) return 'during the TLS handshake'
  return 'while connecting'
}

/** Connect the control client; a clear one-line error when the server is not there. */
async function openControl (o) {
  const Redis = ioredis()
  const client = new Redis(...ioredisOptions(o))
  // ioredis reports the socket's error on 'error' and rejects connect() with a generic
  // "Connection is closed"; keep the first so the message says what really happened.
  let cause = null
  client.on('error', err => { cause = cause || err })
  const target = describeTarget(client.options)
  const sentinels = trackSentinelClients(client)
  try {
    await bounded(() => client.connect(), {
      ms: o.connectTimeout ?? 10000,
      said: o.said?.connectTimeout,
      signal: o.signal,
      target,
      stage: () => controlStage(client),
      cancel: () => { client.disconnect(); for (const c of sentinels) c.disconnect() },
      hint: stage => stage === 'during the TLS handshake' ? TLS_HINT : ''
    })
  } catch (err) {
    client.disconnect()
    if (err.code === 'PIPELOAD_TIMEOUT' || err.code === 'PIPELOAD_ABORTED') throw err
    throw connectError(cause || err, target, client.options)
  }
  return client
}

/**
 * The clients ioredis opens to ask the sentinels, so that an abort can close them:
 * disconnect() does not reach one waiting for its answer, and it would keep the process
 * alive until its command times out. (An ioredis internal: without it, that wait stays.)
 */
function trackSentinelClients (client) {
  const live = new Set()
  const connector = client.connector
  if (!client.options.sentinels || typeof connector?.connectToSentinel !== 'function') return live
  const connectToSentinel = connector.connectToSentinel.bind(connector)
  connector.connectToSentinel = (...args) => {
    const c = connectToSentinel(...args)
    live.add(c)
    c.once('end', () => live.delete(c))
    return c
  }
  return live
}

/**
 * Ask the control client something during setup (INFO cluster, CLUSTER SLOTS, PING),
 * bounded by the connect timeout and the signal like the connection itself.
 */
function ask (client, stage, fn, { ms, said, signal } = {}) {
  const o = client.options?.redisOptions || client.options || {}
  const target = client.isCluster ? 'the cluster' : describeTarget({ ...o, host: client.stream?.remoteAddress || o.host, port: client.stream?.remotePort || o.port })
  return bounded(fn, { ms: ms ?? 10000, said, signal, target, stage })
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
  /** `buffers`: bulk and simple string replies as Buffers (export reads binary keys and values). */
  constructor (socket, target, { buffers = false } = {}) {
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
      returnBuffers: buffers,
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

/**
 * Open a data connection to an endpoint: AUTH and SELECT first, the whole setup within
 * `timeout` ms (`said`: that timeout as given, for the message); `signal` ends it at once (an
 * aborted one before anything is sent). `buffers`: replies as Buffers (DataConnection).
 */
async function connectData (ep, timeout = 10000, signal, { said, buffers = false } = {}) {
  if (signal?.aborted) throw abortError(ep.target, 'before connecting')
  const socket = await connectSocket(ep, timeout, signal)
  socket.setNoDelay(true)
  const hello = []
  if (ep.password) hello.push({ args: ep.username ? ['AUTH', ep.username, ep.password] : ['AUTH', ep.password], name: 'AUTH', required: true })
  if (ep.db) hello.push({ args: ['SELECT', String(ep.db)], name: 'SELECT', required: true })
  // The name lets CLIENT LIST find this connection; a user without CLIENT rights still loads.
  hello.push({ args: ['CLIENT', 'SETNAME', 'pipeload-data'], name: 'CLIENT SETNAME', required: false })
  const conn = new DataConnection(socket, ep.target, { buffers })
  conn.readonlyMeansMoved = Boolean(ep.sentinel)
  const step = { i: 0 }
  try {
    await bounded(() => handshake(conn, hello, ep, step), {
      ms: timeout,
      said,
      signal,
      target: ep.target,
      stage: () => `while sending ${hello[Math.min(step.i, hello.length - 1)].name}`,
      cancel: () => { conn.onClose = () => {}; conn.close() }
    })
  } catch (err) {
    conn.onClose = () => {}
    conn.close(err)
    throw err
  }
  return conn
}

/**
 * How the Pipe gets a new data connection after losing one: to the same endpoint, or, with
 * Sentinel, to wherever the sentinels now say the master is (a failover moves it): a fresh
 * control client (a duplicate of `control`) asks them, and is closed again at once.
 */
function dataReconnector (control, endpoint, timeout = 10000, signal) {
  // `ms`: what is left of the retry time; one attempt never outlasts it.
  if (!control.options.sentinels) return (ms = timeout) => connectData(endpoint, Math.min(ms, timeout), signal)
  return async (ms = timeout) => {
    const limit = Math.min(ms, timeout)
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
    const target = describeTarget(fresh.options)
    try {
      await bounded(() => fresh.connect(), { ms: limit, signal, target, stage: () => controlStage(fresh), cancel: () => fresh.disconnect() })
    } catch (err) {
      fresh.disconnect()
      if (err.code === 'PIPELOAD_TIMEOUT' || err.code === 'PIPELOAD_ABORTED') throw err
      throw connectError(cause || err, target, fresh.options)
    }
    try {
      return await connectData(dataEndpoint(fresh), limit, signal)
    } finally {
      fresh.disconnect()
    }
  }
}

/** Open a data connection to where `control` is connected. */
function openData (control, { timeout = 10000, signal, said } = {}) {
  return connectData(dataEndpoint(control), timeout, signal, { said })
}

function connectSocket (ep, timeout, signal) {
  if (signal?.aborted) return Promise.reject(abortError(ep.target, 'before connecting'))
  const opts = ep.path ? { path: ep.path } : { host: ep.host, port: ep.port }
  const socket = ep.tls ? require('node:tls').connect({ ...opts, ...ep.tls }) : net.connect(opts)
  const ready = ep.tls ? 'secureConnect' : 'connect'
  // Between 'connect' and 'secureConnect' the server has the ClientHello: a server that
  // does not speak TLS just waits for a line of text, so say what the silence likely means.
  let tcpUp = false
  if (ep.tls) socket.once('connect', () => { tcpUp = true })
  return bounded(() => new Promise((resolve, reject) => {
    socket.once(ready, () => { socket.removeAllListeners('error'); resolve(socket) })
    socket.once('error', err => reject(connectError(err, ep.target, ep)))
  }), {
    ms: timeout,
    signal,
    target: ep.target,
    stage: () => tcpUp ? 'during the TLS handshake' : 'while connecting',
    cancel: () => { socket.removeAllListeners('error'); socket.on('error', () => {}); socket.destroy() },
    hint: stage => stage === 'during the TLS handshake' ? TLS_HINT : ''
  })
}

/** A setup command (AUTH, SELECT) answered with an error: the error, with `command` and the server's `reply`. */
function setupRefused (err, command, target, o) {
  const e = connectError(command.name === 'SELECT' ? { message: `${command.args.join(' ')} was refused: ${err.message}` } : err, target, o)
  e.command = command.name
  e.reply = scrub(err.message, [o.password, o.sentinelPassword]) // a server may echo the password
  return e
}

/**
 * Will connecting again be refused the same way? A refused password, or a setup command the
 * server answered with an error other than "not now" (a SELECT a cluster node refuses).
 */
function refusedForGood (err) {
  return err.code === 'PIPELOAD_AUTH_FAILED' || (err.reply !== undefined && !notReady(err.reply))
}

/** Send the setup commands at once and wait for their replies; `step.i`: the one awaited. */
function handshake (conn, commands, o, step = { i: 0 }) {
  return new Promise((resolve, reject) => {
    const next = () => { if (++step.i === commands.length) resolve() }
    conn.onReply = next
    // ioredis, too, carries on when a password is given to a server that needs none. An
    // optional command may be refused (NOPERM), but NOAUTH means we may do nothing at all.
    conn.onReplyError = err => (commands[step.i].required || /^NOAUTH/.test(err.message)) && !/without any password configured/.test(err.message)
      ? reject(setupRefused(err, commands[step.i], conn.target, o))
      : next()
    conn.onClose = err => reject(err)
    conn.write(commands.map(c => encodeCommand(c.args)).join(''))
  })
}

// checkPort, redactUrl, describeTarget, scrub and urlHasPassword live in redis-url.js; exported here too.
module.exports = { openControl, openData, dataEndpoint, connectData, checkPort, refusedForGood, dataReconnector, DataConnection, redactUrl, describeTarget, scrub, ioredisOptions, urlHasPassword, bounded, ask, abortError, ioredis }
