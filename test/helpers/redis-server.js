'use strict'

// Starts a private redis-server for integration tests: its own free port, its own
// tmpdir, no persistence. Tests never touch a shared server (e.g. the one on 6379),
// so FLUSHALL/FLUSHDB on a harness server is always safe.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const Redis = require('ioredis')

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
// or a wrong process on the port cannot fool the check.
function ping (port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: HOST })
    let buf = ''
    const done = (ok) => { sock.destroy(); resolve(ok) }
    sock.setTimeout(timeoutMs, () => done(false))
    sock.on('error', () => done(false))
    sock.on('data', (d) => {
      buf += d.toString('latin1')
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'))
    })
    sock.on('connect', () => sock.write('*1\r\n$4\r\nPING\r\n'))
  })
}

function readLog (logFile) {
  try { return fs.readFileSync(logFile, 'utf8') } catch { return '' }
}

/**
 * Start a private redis-server.
 * @param {{ args?: string[], dir?: string }} [opts] extra server args; dir to use
 *   instead of a fresh tmpdir (not removed on stop when given).
 */
async function startRedis ({ args = [], dir } = {}) {
  const ownDir = !dir
  const workDir = dir || fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-redis-'))
  const clients = new Set()
  let port = null
  let proc = null
  let stderr = ''
  let exited = null // { code, signal } once the current proc has exited
  let exitPromise = null

  function spawnServer (p) {
    const logFile = path.join(workDir, `redis-${p}.log`)
    const argv = [
      '--port', String(p), '--bind', HOST,
      '--save', '', '--appendonly', 'no',
      '--dir', workDir, '--logfile', logFile,
      ...args
    ]
    stderr = ''
    exited = null
    const child = spawn('redis-server', argv, { stdio: ['ignore', 'pipe', 'pipe'] })
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
      if (await ping(p)) return true
      await sleep(25)
    }
    const log = readLog(logFile)
    throw new Error(`redis-server on port ${p} did not answer PING within ${START_TIMEOUT_MS} ms\n` +
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
    throw new Error(`redis-server failed to start${fixedPort ? ` on port ${fixedPort}` : ''}: ${lastFailure}`)
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

  const server = {
    host: HOST,
    get port () { return port },
    get url () { return `redis://${HOST}:${port}` },
    get proc () { return proc },
    /** A new ioredis client (RESP2), closed by stop(). */
    client (opts = {}) {
      const c = new Redis({
        host: HOST,
        port,
        protocol: 2,
        lazyConnect: false,
        maxRetriesPerRequest: 3,
        ...opts
      })
      c.on('error', () => { /* reconnects are expected around restart() */ })
      clients.add(c)
      c.once('end', () => clients.delete(c))
      return c
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

module.exports = { startRedis, freePort, isPortFree, ping }
