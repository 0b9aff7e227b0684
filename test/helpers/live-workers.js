'use strict'

// A setup file (vitest.config.js): every worker thread started in a test file's process is
// counted while it runs and is referenced (worker.unref() lets a process exit without it), so
// that an in-process CLI run (./run-cli.js) can tell it left one running, as a spawned run
// would by never exiting. Node's lists of what keeps a process alive do not show workers.
// Set before the test file loads lib/, which takes `Worker` from node:worker_threads once.
const threads = require('node:worker_threads')

// `running`: every worker that has not exited, referenced or not (parse workers a run left
// idle for the next one are unref()'d: lib/encode/parallel.js).
const KEY = Symbol.for('pipeload.test.liveWorkers')
const RUNNING = Symbol.for('pipeload.test.runningWorkers')

if (!globalThis[KEY]) {
  const live = new Set()
  const running = new Set()
  globalThis[KEY] = live
  globalThis[RUNNING] = running
  const Base = threads.Worker
  threads.Worker = class Worker extends Base {
    constructor (...args) {
      super(...args)
      live.add(this)
      running.add(this)
      this.once('exit', () => { this.exited = true; live.delete(this); running.delete(this) })
    }

    // terminate() refs the worker it ends: one that has exited is not running.
    ref () { if (!this.exited) live.add(this); return super.ref() }

    unref () { live.delete(this); return super.unref() }
  }
}

/**
 * The worker threads of this process: `referenced` (what would keep it from exiting) and
 * `running` (every one not exited), live Sets. Read through globalThis, so every copy of this
 * module sees the same ones (a setup file and a test file's require may be two); throws where
 * this file was not loaded as a setup file first, rather than report no workers.
 */
function workerThreads () {
  if (!globalThis[KEY]) throw new Error('test/helpers/live-workers.js is not a setup file of this run (vitest.config.js)')
  return { referenced: globalThis[KEY], running: globalThis[RUNNING] }
}

module.exports = { workerThreads }
