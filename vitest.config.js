'use strict'

const os = require('node:os')
const path = require('node:path')
const { BaseSequencer } = require('vitest/node')
const { scaledMs } = require('./test/helpers/wait')

// The slowest files, slowest first (measured: a whole run's file times). vitest orders files by
// the durations it cached in a previous run, and without them (a clean clone, CI) by size, so a
// 9-line file that runs for 20 s started last and ran alone at the end while the other worker
// sat idle. These go first, in this order; the rest as vitest would order them.
const SLOW_FIRST = [
  'parallel', 'cluster', 'connections-cluster', 'memory', 'faults', 'resume', 'fidelity-worker', 'fuzz',
  'resume-into', 'restore', 'multi-resume', 'readme', 'auto-workers-load', 'shard-cli', 'http-stall',
  'parallel-fallback', 'hangs', 'export-restore', 'connections', 'export-resume', 'ndjson-wide',
  'fidelity', 'parquet-resume', 'multi-input', 'relax-quotes', 'bad-input', 'types', 'sentinel',
  'sentinel-loss', 'tls'
].map(name => `${name}.test.js`)

class SlowFirst extends BaseSequencer {
  async sort (files) {
    const rank = f => {
      const i = SLOW_FIRST.indexOf(path.basename(f.moduleId))
      return i === -1 ? SLOW_FIRST.length : i
    }
    // Array sort is stable: files of the same rank keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

// Integration tests start their own redis-server per file (test/helpers/redis-server.js),
// so files run in child processes (forks) and hooks get time to boot a server.
// globals: vitest refuses require('vitest') from CommonJS, so CommonJS test files use
// the injected describe/it/expect/beforeAll/... globals instead.
module.exports = {
  test: {
    globals: true,
    include: ['test/**/*.test.js'],
    pool: 'forks',
    // Each of the (two) test processes runs one file after another, instead of a fresh process
    // per file: Node, vitest, ioredis and lib/ are loaded once per process, not 102 times.
    // Every file starts and stops its own servers and restores what it changes. Whole suite on
    // a 2-core machine: 419 s and 722 CPU-s with a process per file, 369 s and 623 CPU-s without.
    isolate: false,
    sequence: { sequencer: SlowFirst },
    // Three test files side by side at least. vitest's default is one fewer than the cores: one
    // at a time on 2 cores, while much of the suite waits (servers starting, a Sentinel failover,
    // timeouts, a frozen server): the whole suite with its four servers took 11 min one file at
    // a time, 6.7 min two at a time (every test passing), on a quiet 2-core machine. On 28
    // November, the same machine: 6.6 min two at a time, 6.0 three, 6.2 four (the suite is
    // CPU-bound from three on: 10.5-11.8 CPU-min whatever the count).
    maxWorkers: Math.max(3, os.availableParallelism() - 1),
    // Under `npm run coverage`: the in-process tests' coverage is written (the file says why).
    setupFiles: ['test/helpers/take-coverage.js'],
    // The run's closing lines say which servers were tested; CI=true fails where one present
    // was not (the file says how).
    globalSetup: ['test/helpers/servers-report.js'],
    // Bounds for a quiet machine, scaled to this one as the run starts (test/helpers/wait.js):
    // on a loaded one (other work beside, load average 18 on 2 cores) a test that passes quietly
    // in 20 s needed more than 60 s. A test that hangs still fails, after the scaled bound.
    testTimeout: scaledMs(60_000),
    hookTimeout: scaledMs(30_000),
    teardownTimeout: scaledMs(30_000)
  }
}
