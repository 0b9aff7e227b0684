'use strict'

// vitest globalSetup: the closing lines of a run say which server kinds the tests ran against
// (./servers.js), and with CI=true a kind whose binary is present, asked for by a test file of
// the run and never started fails the run (a typo'd `off`, a skip that should not be, a suite
// that stopped starting it; a kind left to another pass by PIPELOAD_SERVER_KINDS is not one).
// Test files write what they asked for and started to a log
// (PIPELOAD_SERVERS_LOG, set here before the test processes are forked): ./servers.js note().

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { serverKinds } = require('./servers')

/**
 * The closing lines for a run's log text and the kinds looked up.
 * @returns {{ text: string, failures: string[] }} failures: only with `ci`
 */
function report (logText, kinds, { ci = false } = {}) {
  const wanted = new Set()
  const ran = new Map() // id -> Set of test files
  for (const line of logText.split('\n')) {
    const [event, id, , file] = line.split('\t')
    if (event === 'want') wanted.add(id)
    if (event === 'ran') {
      if (!ran.has(id)) ran.set(id, new Set())
      ran.get(id).add(path.basename(file || '?').replace(/\.test\.js$/, ''))
    }
  }
  const failures = []
  const lines = kinds.map(k => {
    const files = [...(ran.get(k.id) || [])].sort()
    if (files.length) {
      return `  ${k.id.padEnd(8)} ${(k.label || k.id).padEnd(13)} ${files.length} test file${files.length === 1 ? '' : 's'}${files.length <= 10 ? `: ${files.join(', ')}` : ''}`
    }
    if (ci && k.present && !k.left && wanted.has(k.id)) {
      failures.push(`${k.id}: its binary is present but no test ran it${k.missing ? ` (${k.missing})` : ''}`)
    }
    const why = k.missing || (wanted.has(k.id) ? 'found, but no test started it' : 'no test file of this run asked for it')
    return `  ${k.id.padEnd(8)} not tested: ${why}`
  })
  return { text: [`servers tested (Node ${process.version}):`, ...lines].join('\n'), failures }
}

/** globalSetup (vitest takes a CommonJS module's exports as its default): returns the teardown. */
function setup () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-servers-'))
  process.env.PIPELOAD_SERVERS_LOG = path.join(dir, 'log')
  fs.writeFileSync(process.env.PIPELOAD_SERVERS_LOG, '')
  return () => teardown(dir)
}

function teardown (dir) {
  const log = path.join(dir, 'log')
  let text = ''
  try { text = fs.readFileSync(log, 'utf8') } catch { /* nothing noted */ }
  fs.rmSync(dir, { recursive: true, force: true })
  delete process.env.PIPELOAD_SERVERS_LOG
  let kinds
  try {
    kinds = serverKinds()
  } catch (err) {
    // A variable naming a broken binary: the files that ask for it fail with the message.
    console.log(`servers tested: not known (${err.message})`)
    return
  }
  const { text: closing, failures } = report(text, kinds, { ci: process.env.CI === 'true' })
  console.log(`\n${closing}`)
  if (failures.length) {
    // Not a throw: vitest reports an error in a teardown and still exits 0.
    console.error(`CI=true: a server binary that is present was not tested:\n  ${failures.join('\n  ')}`)
    process.exitCode = 1
  }
}

module.exports = setup
module.exports.report = report
