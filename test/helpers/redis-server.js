'use strict'

// Starts a private redis-server (or valkey-server: the `server` option, a kind from
// ./servers.js) for integration tests: its own free port, its own tmpdir, no persistence.
// Tests never touch a shared server (e.g. the one on 6379), so FLUSHALL/FLUSHDB on a
// harness server is always safe.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const tls = require('node:tls')
const os = require('node:os')
const path = require('node:path')
const Redis = require('ioredis')
const { findRedis, serverKinds, describeEachServer, note } = require('./servers')

const HOST = '127.0.0.1'
const START_TIMEOUT_MS = 10_000
const STOP_GRACE_MS = 3_000
const PORT_ATTEMPTS = 5

// pids of every server this process started and has not seen exit; killed on exit
// so a crashed or interrupted test run leaves no stray servers behind.
const live = new Set()
function killAllLive () {
  for (const pid of live) {
    try { process.kill(pid, 'SIGKILL') } catch { /* already gone */ }
  }
  live.clear()
}
process.on('exit', killAllLive)
// 'exit' does not fire when the process dies of a signal (Ctrl-C, a runner killing its
// worker). Kill the servers, then let the signal take its default course unless
// someone else (the test runner) handles it.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, function onSignal () {
    killAllLive()
    if (process.listenerCount(sig) === 0) process.kill(process.pid, sig)
  })
}

function freePort () {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, HOST, () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

/**
 * A port where nothing listens, for as long as the test holds it: connecting gets
 * ECONNREFUSED, and no other process (a server another test starts) can bind it meanwhile.
 * freePort() cannot give that: the port it returns is free again at once, and the next
 * server any test file starts may take it. Here the port is the local end of a TCP
 * connection this process keeps open: bound, so bind() elsewhere fails with EADDRINUSE
 * (servers set SO_REUSEADDR, but the kernel lets two sockets share a port only when both
 * set it, and this one does not), and not listening, so a SYN to it is answered with RST.
 * @returns {Promise<{ port: number, close(): Promise<void> }>}
 */
async function deadPort () {
  const accepted = []
  const peer = net.createServer(s => accepted.push(s))
  await new Promise((resolve, reject) => { peer.once('error', reject); peer.listen(0, HOST, resolve) })
  const holder = net.connect(peer.address().port, HOST)
  await new Promise((resolve, reject) => { holder.once('error', reject); holder.once('connect', resolve) })
  holder.on('error', () => {})
  return {
    port: holder.localPort,
    async close () {
      holder.destroy()
      for (const s of accepted) s.destroy()
      await new Promise(resolve => peer.close(() => resolve()))
    }
  }
}

/** Run `fn(port)` with a deadPort() held, released after. */
async function withDeadPort (fn) {
  const dead = await deadPort()
  try {
    return await fn(dead.port)
  } finally {
    await dead.close()
  }
}

function isPortFree (port) {
  return new Promise((resolve) => {
    const srv = net.createServer()
    srv.unref()
    srv.once('error', () => resolve(false))
    srv.listen(port, HOST, () => srv.close(() => resolve(true)))
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// One raw PING over a fresh socket: no client library, so a half-started server
// or a wrong process on the port cannot fool the check. `auth` (a password, or
// [user, password]) is sent first for a server with requirepass; `tlsOpts` makes it a TLS
// socket (the certificate is not checked here: the tests check that).
function ping (port, timeoutMs = 500, { auth, tlsOpts } = {}) {
  return new Promise((resolve) => {
    const sock = tlsOpts
      ? tls.connect({ port, host: HOST, rejectUnauthorized: false, ...tlsOpts })
      : net.connect({ port, host: HOST })
    const commands = []
    if (auth) commands.push(['AUTH', ...[].concat(auth)])
    commands.push(['PING'])
    let buf = ''
    const done = (ok) => { sock.destroy(); resolve(ok) }
    sock.setTimeout(timeoutMs, () => done(false))
    sock.on('error', () => done(false))
    sock.on('data', (d) => {
      buf += d.toString('latin1')
      if (buf.split('\r\n').length > commands.length) done(buf.split('\r\n')[commands.length - 1].startsWith('+PONG'))
    })
    sock.on(tlsOpts ? 'secureConnect' : 'connect', () => sock.write(commands.map(encode).join('')))
  })
}

function encode (args) {
  return `*${args.length}\r\n` + args.map(a => `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`).join('')
}

function readLog (logFile) {
  try { return fs.readFileSync(logFile, 'utf8') } catch { return '' }
}

const REDIS = findRedis()

/**
 * Start a private redis-server (or valkey-server: `server`).
 * @param {{ args?: string[], dir?: string, password?: string, tls?: object, sentinel?: string, server?: object }} [opts]
 *   extra server args; dir to use instead of a fresh tmpdir (not removed on stop when
 *   given); password: requirepass (readiness pings authenticate); tls: { cert, key, ca,
 *   authClients } (paths; the port is then a TLS port and plain TCP is off); sentinel: the
 *   body of a sentinel.conf (e.g. "sentinel monitor m 127.0.0.1 6380 1"): run redis-sentinel;
 *   server: which binary, a kind from serverKinds() (default: redis-server on PATH).
 */
async function startRedis ({ args = [], dir, password, tls: tlsFiles, sentinel, server: kind = REDIS } = {}) {
  if (kind.missing) throw new Error(`cannot start ${kind.name}: ${kind.missing}`)
  const binName = path.basename(kind.bin)
  const ownDir = !dir
  const workDir = dir || fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-redis-'))
  const clients = new Set()
  const tlsClient = tlsFiles && { ca: fs.readFileSync(tlsFiles.ca), ...(tlsFiles.authClients === 'yes' ? clientCert(tlsFiles) : {}) }
  const pingOpts = { auth: password, tlsOpts: tlsFiles && (tlsFiles.authClients === 'yes' ? clientCert(tlsFiles) : {}) }
  let port = null
  let proc = null
  let stderr = ''
  let exited = null // { code, signal } once the current proc has exited
  let exitPromise = null

  function spawnServer (p) {
    const logFile = path.join(workDir, `redis-${p}.log`)
    let argv = [
      '--port', String(p), '--bind', HOST,
      '--save', '', '--appendonly', 'no',
      '--dir', workDir, '--logfile', logFile,
      ...args
    ]
    if (password) argv.push('--requirepass', password)
    if (tlsFiles) {
      argv.splice(0, 2, '--port', '0', '--tls-port', String(p))
      argv.push('--tls-cert-file', tlsFiles.cert, '--tls-key-file', tlsFiles.key,
        '--tls-ca-cert-file', tlsFiles.ca, '--tls-auth-clients', tlsFiles.authClients || 'no')
    }
    if (sentinel !== undefined) {
      // Sentinel rewrites its config file, so it gets its own, written fresh on each boot.
      const conf = path.join(workDir, `sentinel-${p}.conf`)
      fs.writeFileSync(conf, `port ${p}\nbind ${HOST}\ndir ${workDir}\nlogfile ${logFile}\n${sentinel}\n`)
      argv = [conf, '--sentinel', ...args]
    }
    stderr = ''
    exited = null
    const child = spawn(kind.bin, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
    live.add(child.pid)
    child.stdout.on('data', (d) => { stderr += d })
    child.stderr.on('data', (d) => { stderr += d })
    exitPromise = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        live.delete(child.pid)
        if (child === proc) exited = { code, signal }
        resolve({ code, signal })
      })
      child.on('error', (err) => {
        live.delete(child.pid)
        if (child === proc) exited = { code: null, signal: null, error: err }
        resolve({ code: null, signal: null, error: err })
      })
    })
    proc = child
    return logFile
  }

  // Resolves true once PING answers, false if the server exited early (port taken,
  // bad args); throws after the timeout.
  async function waitReady (p, logFile) {
    const deadline = Date.now() + START_TIMEOUT_MS
    while (Date.now() < deadline) {
      if (exited) return false
      if (await ping(p, 500, pingOpts)) return true
      await sleep(25)
    }
    const log = readLog(logFile)
    throw new Error(`${binName} on port ${p} did not answer PING within ${START_TIMEOUT_MS} ms\n` +
      `stderr/stdout:\n${stderr}\nlog:\n${log}`)
  }

  async function boot (fixedPort) {
    let lastFailure = ''
    const attempts = fixedPort ? 1 : PORT_ATTEMPTS
    for (let i = 0; i < attempts; i++) {
      const p = fixedPort || await freePort()
      const logFile = spawnServer(p)
      let ready
      try {
        ready = await waitReady(p, logFile)
      } catch (err) {
        await killProc('SIGKILL')
        throw err
      }
      if (ready) { port = p; return }
      const log = readLog(logFile)
      lastFailure = `exit ${JSON.stringify(exited)}\nstderr/stdout:\n${stderr}\nlog:\n${log}`
      // Another process grabbed the port between our probe and the spawn: try another.
      if (!fixedPort && /address already in use/i.test(log + stderr)) continue
      break
    }
    throw new Error(`${binName} failed to start${fixedPort ? ` on port ${fixedPort}` : ''}: ${lastFailure}`)
  }

  async function killProc (signal = 'SIGTERM') {
    if (!proc || exited) return
    const child = proc
    const wait = exitPromise
    try { child.kill(signal) } catch { /* already gone */ }
    if (signal === 'SIGKILL') { await wait; return }
    const timer = setTimeout(() => {
      try { child.kill('SIGKILL') } catch { /* already gone */ }
    }, STOP_GRACE_MS)
    await wait
    clearTimeout(timer)
  }

  async function closeClients () {
    const all = [...clients]
    clients.clear()
    await Promise.all(all.map(async (c) => {
      try {
        if (c.status === 'ready') await c.quit()
        else c.disconnect()
      } catch {
        c.disconnect()
      }
    }))
  }

  await boot()
  note('ran', kind) // for the run's closing lines (./servers-report.js)

  const server = {
    host: HOST,
    get port () { return port },
    get url () { return `${tlsFiles ? 'rediss' : 'redis'}://${HOST}:${port}` },
    get proc () { return proc },
    /** The server kind ({ id, name, label, bin, cli, version }) this server runs. */
    kind,
    /** A new ioredis client (RESP2), closed by stop(). */
    client (opts = {}) {
      const c = new Redis({
        host: HOST,
        port,
        protocol: 2,
        lazyConnect: false,
        maxRetriesPerRequest: 3,
        ...(password ? { password } : {}),
        ...(tlsClient ? { tls: tlsClient } : {}),
        ...opts
      })
      c.on('error', () => { /* reconnects are expected around restart() */ })
      clients.add(c)
      c.once('end', () => clients.delete(c))
      return c
    },
    /**
     * What the running server says it is (INFO server): { name: 'redis' | 'valkey', version },
     * so a suite can check that it runs against the kind it was given.
     */
    async identity () {
      const c = server.client()
      try {
        const info = await c.info('server')
        const field = (f) => (new RegExp(`^${f}:(.*)$`, 'm').exec(info) || [])[1]?.trim()
        // Where the servers differ: Valkey 8 and 9 say server_name:valkey and valkey_version;
        // their redis_version is the Redis version they are compatible with (7.2.4). Redis 7.0
        // and 8.0 have no server_name field.
        const name = field('server_name') || 'redis'
        return { name, version: field(`${name}_version`) || field('redis_version') }
      } finally {
        c.disconnect()
      }
    },
    /** Send a signal to the server and wait for it to exit (for crash tests). */
    async kill (signal = 'SIGKILL') {
      await killProc(signal)
    },
    /** Stop and start again on the same port (data is lost: no persistence). */
    async restart () {
      await killProc('SIGTERM')
      await boot(port)
    },
    /** Close tracked clients, stop the server, remove its tmpdir. Idempotent. */
    async stop () {
      await closeClients()
      await killProc('SIGTERM')
      if (ownDir) fs.rmSync(workDir, { recursive: true, force: true })
    },
    dir: workDir
  }
  return server
}

/** The client certificate and key of a tls: { clientCert, clientKey } option, read. */
function clientCert (t) {
  if (!t.clientCert) throw new Error('tls.authClients "yes" needs tls.clientCert and tls.clientKey for the readiness check')
  return { cert: fs.readFileSync(t.clientCert), key: fs.readFileSync(t.clientKey) }
}

/**
 * For a test file (or a describe): a private server, an ioredis client on it and a tmpdir,
 * made in beforeAll and removed in afterAll; `assign({ srv, redis, tmp })` hands them over.
 * `server`: the kind to start (default redis-server).
 */
function useServer (tmpPrefix, assign, { server } = {}) {
  const ctx = { srv: null, redis: null, tmp: null }
  beforeAll(async () => { // eslint-disable-line no-undef
    ctx.srv = await startRedis({ server })
    ctx.redis = ctx.srv.client()
    ctx.tmp = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix))
    // An input file in the test's tmpdir: write('in.csv', text) -> its path.
    ctx.write = (name, text) => {
      const file = path.join(ctx.tmp, name)
      fs.writeFileSync(file, text)
      return file
    }
    assign(ctx)
  })
  afterAll(async () => { // eslint-disable-line no-undef
    if (ctx.srv) await ctx.srv.stop()
    if (ctx.tmp) fs.rmSync(ctx.tmp, { recursive: true, force: true })
  })
}

module.exports = { startRedis, useServer, freePort, deadPort, withDeadPort, isPortFree, ping, REDIS, serverKinds, describeEachServer }
