'use strict'

// Run the CLI as a user does, with REDIS_URL / REDISCLI_AUTH / REDIS_PASSWORD of the test's
// own environment removed so a run only ever reaches the server the test names.
//
// Two ways, the same results ({ code, signal, stdout, stderr, stdoutBytes, stderrBytes }):
// - spawned: bin/pipeload.js in a process of its own (process.execPath), stdin closed or fed.
//   Every run fed stdin (`input`), every run given a variable Node reads as it starts
//   (NODE_OPTIONS, NODE_EXTRA_CA_CERTS) and every run that asks for it (`{ spawn: true }`,
//   runCliSpawned: a signal to the process, a suite about exits and hangs, tests side by side)
//   is spawned.
// - in-process: the same lib/cli run(argv, io) that bin/pipeload.js calls, with stdout a file
//   (a stream that, like a pipe, is done with a buffer once written: lib/send/dry-run.js) and
//   stderr collected. A Node process costs ~0.3 s of CPU to start and load the CLI, which for
//   ~700 runs was a fifth of the suite. What only a process shows is still checked: the run
//   must leave nothing behind that would keep a process from exiting (a socket, a timer, a
//   worker), or the call fails as a spawned one that never exits would.
// PIPELOAD_TEST_SPAWN=1 spawns every run (CI's second pass does: docs/testing.md).

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Writable } = require('node:stream')
const { liveWorkers } = require('../../lib/threads/pool')
const { scaledMs } = require('./wait')

const ROOT = path.resolve(__dirname, '..', '..')
const BIN = path.join(ROOT, 'bin', 'pipeload.js')
// Bounds on a quiet machine; each run scales them to this one (helpers/wait.js).
const CHILD_TIMEOUT_MS = 30_000
// How long what a run opened may take to close once it has returned (a socket's close event).
const SETTLE_MS = 2_000

const BASE_ENV = { ...process.env }
delete BASE_ENV.REDIS_URL
delete BASE_ENV.REDISCLI_AUTH
delete BASE_ENV.REDIS_PASSWORD

const SPAWN_ALL = process.env.PIPELOAD_TEST_SPAWN === '1'

/** Run the CLI; resolves with { code, signal, stdout, stderr } (stdout/stderr as Buffers too). */
function runCli (args, { input, env = {}, timeoutMs = scaledMs(CHILD_TIMEOUT_MS), spawn: spawned = false } = {}) {
  if (spawned || SPAWN_ALL || input !== undefined || Object.keys(env).some(startsNode)) return spawnCli(args, { input, env, timeoutMs })
  return inProcess(args, { env, timeoutMs })
}

/** A variable Node reads as it starts (NODE_OPTIONS, NODE_EXTRA_CA_CERTS, UV_THREADPOOL_SIZE): a process of its own. */
function startsNode (name) {
  return /^(NODE|UV)_/.test(name)
}

/** runCli, spawned: for suites whose tests run side by side, or that are about the process (its exit, its signals). */
function runCliSpawned (args, opts = {}) {
  return runCli(args, { ...opts, spawn: true })
}

function spawnCli (args, { input, env, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...BASE_ENV, ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
    const out = []
    const err = []
    child.stdout.on('data', d => out.push(d))
    child.stderr.on('data', d => err.push(d))
    child.stdin.on('error', () => {})
    child.stdin.end(input)
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`pipeload ${args.join(' ')} did not exit within ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('error', e => { clearTimeout(timer); reject(e) })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve(result(code, signal, Buffer.concat(out), Buffer.concat(err)))
    })
  })
}

function result (code, signal, stdoutBytes, stderrBytes) {
  return { code, signal, stdout: stdoutBytes.toString('utf8'), stderr: stderrBytes.toString('utf8'), stdoutBytes, stderrBytes }
}

let inFlight = 0 // in-process runs going on
let started = 0 // in-process runs started
let outputs = 0
const OUT_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-cli-'))
process.on('exit', () => fs.rmSync(OUT_DIR, { recursive: true, force: true }))

async function inProcess (args, { env, timeoutMs }) {
  const { run } = require('../../lib/cli')
  if (process.cwd() !== ROOT) throw new Error(`in-process runs need the working directory ${ROOT}, as a spawned run has: it is ${process.cwd()}`)
  // Checked only when no other in-process run overlaps it (Promise.all of runs): none was
  // going on when it started, and none started after it. What is left open is then this
  // run's. A test that runs a load() of its own beside a CLI run, or whose describes run side
  // by side, spawns its runs instead (runCliSpawned).
  const alone = inFlight++ === 0
  const id = ++started
  // A client the test made just before (ioredis connects on a later tick) is not the run's.
  if (alone) await new Promise(resolve => setImmediate(resolve))
  const before = alone ? handles() : null
  const outFile = path.join(OUT_DIR, `stdout-${++outputs}`)
  const stdout = fs.createWriteStream(outFile)
  const err = []
  const stderr = new Writable({ write (chunk, enc, cb) { err.push(Buffer.from(chunk, enc)); cb() } })
  const controller = new AbortController()
  let timer
  try {
    const code = await Promise.race([
      run(args, { stdout, stderr, env: { ...BASE_ENV, ...env }, signal: controller.signal }),
      new Promise((resolve, reject) => {
        timer = setTimeout(() => {
          controller.abort()
          reject(new Error(`pipeload ${args.join(' ')} did not finish within ${timeoutMs} ms`))
        }, timeoutMs)
      })
    ])
    clearTimeout(timer)
    await new Promise((resolve, reject) => stdout.end(e => e ? reject(e) : resolve()))
    if (before !== null && started === id) await settled(before, args)
    const stdoutBytes = fs.readFileSync(outFile)
    return result(code, null, stdoutBytes, Buffer.concat(err))
  } finally {
    clearTimeout(timer)
    inFlight--
    stdout.destroy()
    fs.rmSync(outFile, { force: true })
  }
}

/**
 * What keeps this process alive: its handles (sockets, servers, pipes, child processes), its
 * timers, by number, and its parse worker threads not yet exited (lib/threads/pool.js).
 */
function handles () {
  return {
    handles: new Set(process._getActiveHandles()),
    timers: process.getActiveResourcesInfo().filter(kind => kind === 'Timeout').length,
    workers: liveWorkers()
  }
}

/**
 * What is open now and was not `before`: a socket a server of the test accepted is the
 * test's own (an HTTP server keeps a keep-alive connection open after the run).
 */
function leftOpen (before) {
  const now = handles()
  const left = []
  for (const h of now.handles) {
    if (before.handles.has(h) || h.server) continue
    left.push(h.constructor.name + (h.remotePort ? ` ${h.localPort} -> ${h.remotePort} (${h.readyState})` : ''))
  }
  if (now.timers > before.timers) left.push(`${now.timers - before.timers} timer(s)`)
  for (const w of now.workers) if (!before.workers.has(w)) left.push('a worker thread')
  return left
}

/** Wait (SETTLE_MS at most, scaled) for what the run opened to close; a spawned run would not exit otherwise. */
async function settled (before, args) {
  const deadline = Date.now() + scaledMs(SETTLE_MS)
  for (;;) {
    await new Promise(resolve => setImmediate(resolve))
    const left = leftOpen(before)
    if (left.length === 0) return
    if (Date.now() > deadline) throw new Error(`pipeload ${args.join(' ')} returned but left ${left.join(', ')} open: a process would not exit`)
    await new Promise(resolve => setTimeout(resolve, 10).unref())
  }
}

// Preloaded (node --require) to SIGKILL a run right after a checkpoint past a given count.
const KILL_HOOK = path.join(__dirname, 'kill-after-checkpoint.js')

/**
 * bin/pipeload.js spawned with `args`, stdin closed; `kill` ({ KILL_CHECKPOINT,
 * KILL_AFTER_RECORDS }): with ./kill-after-checkpoint.js preloaded, SIGKILLed right after
 * such a checkpoint. Resolves with { code, signal, out, err } once it exits.
 */
function spawnKillable (args, kill = null) {
  const argv = [...(kill ? ['--require', KILL_HOOK] : []), BIN, ...args]
  const child = spawn(process.execPath, argv, { env: { ...BASE_ENV, ...kill }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', d => { out += d })
  child.stderr.on('data', d => { err += d })
  return new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal, out, err })))
}

module.exports = { runCli, runCliSpawned, spawnKillable, KILL_HOOK, ROOT, BIN, BASE_ENV }
