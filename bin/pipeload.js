#!/usr/bin/env node
'use strict'

const { run } = require('../lib/cli')
const { EXIT } = require('../lib/errors')
const { capYoungGeneration } = require('../lib/cli/young-generation')

capYoungGeneration()

const controller = new AbortController()
let interrupted = 0
for (const [signal, code] of [['SIGINT', EXIT.SIGINT], ['SIGTERM', EXIT.SIGTERM]]) {
  process.on(signal, () => {
    // First signal: stop reading, let in-flight replies arrive, print the summary.
    // Second: leave now.
    if (++interrupted > 1) process.exit(code)
    controller.abort()
    process.exitCode = code
  })
}

// Writing to a closed pipe (`pipeload … --dry-run resp | head`) is not an error. Other
// write errors (a full disk) are reported by the write that failed, as
// PIPELOAD_OUTPUT_FAILED (exit 74); on stderr there is nowhere left to report them.
process.stdout.on('error', err => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.OK)
})
process.stderr.on('error', () => {})

const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: controller.signal }
run(process.argv.slice(2), io).then(code => {
  if (!interrupted) process.exitCode = code
})
