'use strict'
/* global afterAll */ // vitest globals (see vitest.config.js)

// A setup file (vitest.config.js): under `npm run coverage` (c8 sets NODE_V8_COVERAGE), each
// test file's worker process writes the coverage of the code it ran in-process once the
// file's tests are done. Node writes it only when a process exits on its own, and vitest
// ends its forks (the pool) without letting them: every in-process test counted for nothing.
const v8 = require('node:v8')
const { liveWorkers } = require('../../lib/threads/pool')

// A worker thread writes its coverage when it exits: parse workers still running (a run ends
// its own; a test's pool it left open) are ended first.
afterAll(async () => {
  if (!process.env.NODE_V8_COVERAGE) return
  await Promise.all([...liveWorkers()].map(w => w.terminate()))
  v8.takeCoverage()
})
