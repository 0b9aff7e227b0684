'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// `npm run coverage` (c8 over vitest) counts the code tests run in-process, not only what
// the CLI processes they spawn run: vitest ends its test processes without letting Node
// write their coverage, so test/helpers/take-coverage.js (a setup file) writes it when a
// file's tests are done. Here: c8 over one in-process unit test file (cut.test.js, which
// spawns nothing), into a report of its own.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { scaledMs } = require('./helpers/wait')

const root = path.join(__dirname, '..')

describe('npm run coverage', () => {
  it('counts lines run only in-process: lib/read/cut.js from its unit test', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-coverage-'))
    // Not this run's own vitest or coverage settings: a run of its own.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(VITEST|NODE_V8_COVERAGE|NODE_OPTIONS)/.test(k)))
    const c8 = path.join(root, 'node_modules', 'c8', 'bin', 'c8.js')
    const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs')
    await promisify(execFile)(process.execPath, [c8, '--reporter', 'json-summary', '--reports-dir', dir, '--temp-directory', path.join(dir, 'tmp'),
      process.execPath, vitest, 'run', 'test/cut.test.js'], { cwd: root, env, timeout: 50_000 })
    const summary = JSON.parse(fs.readFileSync(path.join(dir, 'coverage-summary.json'), 'utf8'))
    const cut = summary[path.join(root, 'lib', 'read', 'cut.js')]
    expect(cut.lines.pct).toBeGreaterThan(90)
    fs.rmSync(dir, { recursive: true, force: true })
  }, scaledMs(60_000))
})
