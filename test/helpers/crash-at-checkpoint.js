'use strict'

// Preloaded (node --require) into a pipeload process by test/checkpoint-crash.test.js: it
// SIGKILLs the process in the middle of its Nth checkpoint write, at a point chosen by the
// test, so "killed while the checkpoint is written" happens every time, without sleeps.
//
//   CRASH_CHECKPOINT  the --checkpoint path
//   CRASH_NTH         which write to the checkpoint (or a temporary file beside it) to crash in
//   CRASH_AT          'write': after half of that write's bytes; 'rename': just before the
//                     rename that follows it
//   CRASH_LOG         a file where every checkpoint body the process set out to write is
//                     saved (JSON array) before the kill, so the test knows the one before
//
// A write is a checkpoint write when it goes to the checkpoint path itself or to a file in
// its directory whose name starts with "." + its name (the temporary file), whichever the
// implementation uses: by path or by a descriptor opened on such a path.

const fs = require('node:fs')
const path = require('node:path')

const CP = path.resolve(process.env.CRASH_CHECKPOINT)
const NTH = Number(process.env.CRASH_NTH)
const AT = process.env.CRASH_AT
const LOG = process.env.CRASH_LOG

const orig = { openSync: fs.openSync, writeSync: fs.writeSync, writeFileSync: fs.writeFileSync, renameSync: fs.renameSync, closeSync: fs.closeSync }
const fds = new Map() // fd -> path, for descriptors opened on checkpoint paths
const bodies = []
let armed = false // the Nth write happened and AT is 'rename'
let inside = false // in writeFileSync, which may call fs.writeSync itself: one write, counted once

function related (p) {
  if (typeof p !== 'string' && !(p instanceof URL) && !Buffer.isBuffer(p)) return false
  const abs = path.resolve(String(p))
  return abs === CP || (path.dirname(abs) === path.dirname(CP) && path.basename(abs).startsWith('.' + path.basename(CP)))
}

function die () {
  orig.writeFileSync(LOG, JSON.stringify(bodies))
  process.kill(process.pid, 'SIGKILL')
  for (;;) {} // eslint-disable-line no-empty
}

/** A write of `data` to a checkpoint path: crash half-way through the Nth one. */
function checkpointWrite (data, writeHalf) {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(String(data))
  bodies.push(bytes.toString('utf8'))
  if (bodies.length !== NTH) return false
  if (AT === 'write') {
    writeHalf(bytes.subarray(0, bytes.length >> 1))
    die()
  }
  armed = true
  return false
}

fs.openSync = function (p, ...rest) {
  const fd = orig.openSync.call(fs, p, ...rest)
  if (related(p)) fds.set(fd, String(p))
  return fd
}
fs.closeSync = function (fd) {
  fds.delete(fd)
  return orig.closeSync.call(fs, fd)
}
fs.writeFileSync = function (target, data, ...rest) {
  if (inside) return orig.writeFileSync.call(fs, target, data, ...rest)
  inside = true
  try {
    if (typeof target === 'number' ? fds.has(target) : related(target)) {
      checkpointWrite(data, half => orig.writeFileSync.call(fs, target, half))
    }
    return orig.writeFileSync.call(fs, target, data, ...rest)
  } finally {
    inside = false
  }
}
fs.writeSync = function (fd, data, ...rest) {
  if (!inside && fds.has(fd) && (Buffer.isBuffer(data) || typeof data === 'string')) {
    checkpointWrite(data, half => orig.writeSync.call(fs, fd, half))
  }
  return orig.writeSync.call(fs, fd, data, ...rest)
}
fs.renameSync = function (from, to, ...rest) {
  if (armed && (related(from) || related(to))) die()
  return orig.renameSync.call(fs, from, to, ...rest)
}
