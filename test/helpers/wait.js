'use strict'

// Tests wait for conditions, never for a length of time: a fixed sleep is either too short on
// a loaded machine (the test fails for no fault of the code) or longer than needed. waitFor
// polls a condition; the poll interval only sets how soon a met condition is seen, and the
// deadline only how long a condition that never comes is waited for (the test then fails
// saying what it waited for). The default deadline scales with the machine (scaledMs); one
// given is taken as is: pass scaledMs(ms) for one that bounds how soon something happens.

const os = require('node:os')
const { spawnSync } = require('node:child_process')

const POLL_MS = 20

// A bound on "did not hang" / "soon enough" is a length of time that a quiet machine needs a
// fraction of; on a loaded one (other test files beside, 2 busy processes) everything takes
// longer. slowness() says how much longer, and scaledMs(ms) is the bound to use: what `ms` is
// on a quiet machine, times that factor. A hang still fails, after a bound that scales.
// QUIET_START_MS: `node -e ''` on a quiet 2-core machine (80–90 ms measured); the factor is
// measured again once MEASURE_EVERY_MS have passed (the load changes within a run), and is at
// most MAX_SLOWNESS (a hang is not waited for without end).
const QUIET_START_MS = 100
const MEASURE_EVERY_MS = 10_000
const MAX_SLOWNESS = 10
let measured = { at: -Infinity, factor: 1 }

function nodeStartMs () {
  const t0 = process.hrtime.bigint()
  spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' })
  return Number(process.hrtime.bigint() - t0) / 1e6
}

/**
 * How many times slower than a quiet machine this one is now (≥ 1): the larger of what starting
 * a Node process takes over what it takes on a quiet machine, and the processes ready to run per
 * core (the 1-minute load average). It blocks for two process starts when it measures: take
 * bounds before the clock of what they bound starts.
 */
function slowness () {
  const now = Date.now()
  if (now - measured.at > MEASURE_EVERY_MS) {
    const startMs = Math.min(nodeStartMs(), nodeStartMs()) // the lesser of two: one can meet a passing spike
    const perCore = os.loadavg()[0] / os.availableParallelism()
    measured = { at: Date.now(), factor: Math.min(MAX_SLOWNESS, Math.max(1, startMs / QUIET_START_MS, perCore)) }
  }
  return measured.factor
}

/** `ms` (a bound that holds on a quiet machine) scaled to this machine now. */
function scaledMs (ms) {
  return Math.ceil(ms * slowness())
}

const pause = ms => new Promise(resolve => setTimeout(resolve, ms))

/**
 * Poll `check` (sync or async) until it returns a truthy value, and resolve with that value.
 * A check that throws counts as not yet; its last error is in the timeout's message.
 * pollMs: for checks that cost something (a connection to every node of a cluster).
 */
async function waitFor (what, check, timeoutMs = scaledMs(20_000), pollMs = POLL_MS) {
  const deadline = Date.now() + timeoutMs
  let last
  for (;;) {
    try {
      const ok = await check()
      if (ok) return ok
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ': ' + last.message : ''}`)
    await pause(pollMs)
  }
}

/** The signals a Linux process has pending (not yet delivered), from /proc: a Set of numbers. */
function pendingSignals (pid) {
  const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8')
  const pending = new Set()
  for (const field of ['SigPnd', 'ShdPnd']) {
    const mask = BigInt('0x' + new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)[1])
    for (let sig = 1n; sig <= 64n; sig++) if (mask & (1n << (sig - 1n))) pending.add(Number(sig))
  }
  return pending
}

/** A Linux process's state letter from /proc (R running, S sleeping, T stopped, …). */
function processState (pid) {
  return /^State:\s*(\S)/m.exec(require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8'))[1]
}

module.exports = { waitFor, slowness, scaledMs, pendingSignals, processState }
