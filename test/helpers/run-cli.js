'use strict'

// Spawn bin/pipeload.js with process.execPath, as a user runs it: stdin closed (or fed),
// REDIS_URL / REDISCLI_AUTH / REDIS_PASSWORD of the test's own environment removed so a
// run only ever reaches the server the test names.

const { spawn } = require('node:child_process')
const path = require('node:path')

const ROOT = path.resolve(__dirname, '..', '..')
const BIN = path.join(ROOT, 'bin', 'pipeload.js')
const CHILD_TIMEOUT_MS = 30_000

const BASE_ENV = { ...process.env }
delete BASE_ENV.REDIS_URL
delete BASE_ENV.REDISCLI_AUTH
delete BASE_ENV.REDIS_PASSWORD

/** Run the CLI; resolves with { code, signal, stdout, stderr } (stdout/stderr as Buffers too). */
function runCli (args, { input, env = {}, timeoutMs = CHILD_TIMEOUT_MS } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...BASE_ENV, ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
    const out = []
    const err = []
    child.stdout.on('data', d => out.push(d))
    child.stderr.on('data', d => err.push(d))
    child.stdin.on('error', () => {})
    child.stdin.end(input)
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`pipeload ${args.join(' ')} did not exit within ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('error', e => { clearTimeout(timer); reject(e) })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const stdoutBytes = Buffer.concat(out)
      const stderrBytes = Buffer.concat(err)
      resolve({ code, signal, stdout: stdoutBytes.toString('utf8'), stderr: stderrBytes.toString('utf8'), stdoutBytes, stderrBytes })
    })
  })
}

module.exports = { runCli, ROOT, BIN, BASE_ENV }
