'use strict'

// Tests wait for conditions, never for a length of time: a fixed sleep is either too short on
// a loaded machine (the test fails for no fault of the code) or longer than needed. waitFor
// polls a condition; the poll interval only sets how soon a met condition is seen, and the
// deadline only how long a condition that never comes is waited for (the test then fails
// saying what it waited for).

const POLL_MS = 20

const pause = ms => new Promise(resolve => setTimeout(resolve, ms))

/**
 * Poll `check` (sync or async) until it returns a truthy value, and resolve with that value.
 * A check that throws counts as not yet; its last error is in the timeout's message.
 * pollMs: for checks that cost something (a connection to every node of a cluster).
 */
async function waitFor (what, check, timeoutMs = 20_000, pollMs = POLL_MS) {
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

module.exports = { waitFor, pendingSignals, processState }
