'use strict'

// An input that gives nothing for this long while records wait has what is whole sent now,
// not held until a full batch or chunk has come: a file's reads come far faster; a pipe's
// writer (or a download) that pauses this long is slower than the loader anyway. Used by the
// encoder (records encoded, batch not full) and the parallel cutter (bytes not yet a chunk).
const IDLE_MS = 20
const IDLE = Symbol('idle')

/** `promise`'s value, or IDLE when it has not settled within IDLE_MS (it goes on running). */
async function orIdle (promise) {
  let timer
  try {
    return await Promise.race([promise, new Promise(resolve => { timer = setTimeout(resolve, IDLE_MS, IDLE) })])
  } finally {
    clearTimeout(timer)
  }
}

module.exports = { IDLE, orIdle }
