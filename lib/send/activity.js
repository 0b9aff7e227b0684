'use strict'

const { performance } = require('node:perf_hooks')

// When a connection (or a cluster) last made progress, without reading the clock per
// reply: a reply only adds one to `count`; the clock is read when someone asks how long
// it has been quiet (the timeout check) or at a moment that is cheap to mark (a write
// into an idle connection, a reconnect). performance.now() costs ~50 ns, and a cluster
// load read it twice per command: ~0.1 CPU-s per million rows of the main thread, which
// is the one that limits a load with parse workers.

class Activity {
  constructor () {
    this.count = 0 // replies (or other progress) so far: the hot path does `count++`
    this.seen = 0 // count when `at` was last set
    this.at = performance.now()
  }

  /** Progress now (a write into an idle connection, a reconnect). */
  touch (now = performance.now()) {
    this.at = now
    this.seen = this.count
  }

  /**
   * Milliseconds without progress. Progress counted since the last look is dated to this
   * look, so a stall is noticed at most one look late: never early.
   */
  quietMs () {
    const now = performance.now()
    if (this.count !== this.seen) this.touch(now)
    return now - this.at
  }
}

module.exports = { Activity }
