'use strict'

const os = require('node:os')

// Integration tests start their own redis-server per file (test/helpers/redis-server.js),
// so files run in separate processes (forks) and hooks get time to boot a server.
// globals: vitest refuses require('vitest') from CommonJS, so CommonJS test files use
// the injected describe/it/expect/beforeAll/... globals instead.
module.exports = {
  test: {
    globals: true,
    include: ['test/**/*.test.js'],
    pool: 'forks',
    // Two test files side by side at least. vitest's default is one fewer than the cores: one
    // at a time on 2 cores, while much of the suite waits (servers starting, a Sentinel failover,
    // timeouts, a frozen server): the whole suite with its four servers took 11 min one file at
    // a time, 6.7 min two at a time (every test passing), on a quiet 2-core machine.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // Under `npm run coverage`: the in-process tests' coverage is written (the file says why).
    setupFiles: ['test/helpers/take-coverage.js'],
    // The run's closing lines say which servers were tested; CI=true fails where one present
    // was not (the file says how).
    globalSetup: ['test/helpers/servers-report.js'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    teardownTimeout: 30_000
  }
}
