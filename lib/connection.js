'use strict'

const net = require('node:net')
const tls = require('node:tls')
const Redis = require('ioredis')
const RedisParser = require('redis-parser')
const { PipeloadError } = require('./errors')
const { encodeCommand } = require('./resp')

// Two planes. ioredis is the control plane: it resolves the URL and options, does AUTH,
// SELECT and TLS, and answers the one-off commands (PING, INFO, CLIENT LIST). The data
// plane is a plain socket to the same server that carries pre-encoded RESP batches;
// ioredis would cost a Command object and a Promise per command (~65k cmds/s measured).

/** ioredis options from pipeload's connection options (url, host, port, …). */
function ioredisOptions (o) {
  const base = {
    lazyConnect: true,
    protocol: 2,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: null,
    connectTimeout: o.connectTimeout,
    connectionName: 'pipeload',
    disconnectTimeout: 0
  }
  if (!o.url && !o.host) base.host = '127.0.0.1'
  const explicit = {}
  for (const k of ['host', 'port', 'username', 'password', 'db', 'tls']) {
    if (o[k] !== undefined) explicit[k] = o[k]
  }
  return o.url ? [o.url, { ...base, ...explicit }] : [{ ...base, ...explicit }]
}

/** Where we tried to connect, for messages: never includes a password. */
function describeTarget (opts) {
  if (opts.path) return opts.path
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
  const reason = scrub(err.message || err.code, [opts.password])
  if (/WRONGPASS|NOAUTH|NOPERM|invalid password|AUTH/i.test(reason)) {
    return new PipeloadError('PIPELOAD_AUTH_FAILED', `authentication to Redis at ${target} failed: ${reason}`, { target })
  }
  return new PipeloadError('PIPELOAD_CONNECTION_FAILED', `cannot connect to Redis at ${target}: ${reason}`, { target })
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
    this.parser = new RedisParser({
      returnReply: r => this.onReply(r),
      returnError: e => this.onReplyError(e),
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
  return Object.freeze({
    host, port, path: o.path, tls: o.tls, servername: o.tls?.servername || o.host,
    username: o.username, password: o.password, db: o.db,
    target: describeTarget({ ...o, host, port })
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
  const timer = setTimeout(() => conn.close(new PipeloadError('PIPELOAD_CONNECTION_FAILED',
    `Redis at ${ep.target} accepted the connection but did not answer within ${timeout} ms`, { target: ep.target })), timeout)
  try {
    await handshake(conn, hello, ep)
  } finally {
    clearTimeout(timer)
  }
  return conn
}

/** Open a data connection to where `control` is connected. */
function openData (control) {
  return connectData(dataEndpoint(control))
}

function connectSocket (ep, timeout) {
  return new Promise((resolve, reject) => {
    const opts = ep.path ? { path: ep.path } : { host: ep.host, port: ep.port }
    const socket = ep.tls ? tls.connect({ ...opts, ...ep.tls, servername: ep.servername }) : net.connect(opts)
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
    // ioredis, too, carries on when a password is given to a server that needs none.
    conn.onReplyError = err => commands[i].required && !/without any password configured/.test(err.message)
      ? reject(connectError(err, conn.target, o))
      : next()
    conn.onClose = err => reject(err)
    conn.write(commands.map(c => encodeCommand(c.args)).join(''))
  })
}

module.exports = { openControl, openData, dataEndpoint, connectData, DataConnection, redactUrl, describeTarget, scrub, ioredisOptions }
