'use strict'

// Integration tests start their own redis-server per file (test/helpers/redis-server.js),
// so files run in separate processes (forks) and hooks get time to boot a server.
// globals: vitest refuses require('vitest') from CommonJS, so CommonJS test files use
// the injected describe/it/expect/beforeAll/... globals instead.
module.exports = {
  test: {
    globals: true,
    include: ['test/**/*.test.js'],
    pool: 'forks',
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
