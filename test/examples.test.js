'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Every script in examples/ (*.js, *.cjs, *.mjs, found at run time so a new example is
// covered without touching this file) runs against a private redis-server and must exit 0.
// The examples check their own results and exit 1 on a mismatch; here we also check that
// each prints one result line and leaves no keys behind.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startRedis, withDeadPort } = require('./helpers/redis-server')
const { scaledMs } = require('./helpers/wait')

const ROOT = path.resolve(__dirname, '..')
const EXAMPLES = path.join(ROOT, 'examples')
const CHILD_TIMEOUT_MS = scaledMs(30_000) // on a quiet machine, scaled to this one
const SCRIPTS = fs.readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((e) => e.isFile() && /\.(c|m)?js$/.test(e.name))
  .map((e) => e.name)
  .sort()

const ENV = { ...process.env }
delete ENV.REDIS_URL
delete ENV.REDISCLI_AUTH

let srv
let tmp

beforeAll(async () => {
  srv = await startRedis()
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-examples-'))
})

afterAll(async () => {
  if (srv) await srv.stop()
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
})

/** Run one example with REDIS_URL set, from an unrelated cwd (examples find their own data). */
function runExample (name, redisUrl) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(EXAMPLES, name)], {
      cwd: tmp,
      env: { ...ENV, REDIS_URL: redisUrl },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`examples/${name} did not exit within ${CHILD_TIMEOUT_MS} ms\n${stdout}${stderr}`))
    }, CHILD_TIMEOUT_MS)
    child.on('error', (err) => { clearTimeout(timer); reject(err) })
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }) })
  })
}

describe('examples/', () => {
  it('are found (the discovery itself works)', () => {
    expect(SCRIPTS).toEqual(expect.arrayContaining(['library.js', 'stream.js', 'esm.mjs']))
  })

  // Each example gets its own database: afterwards it must be empty (the example cleaned
  // up after itself and wrote nowhere else).
  SCRIPTS.forEach((name, i) => {
    const db = (i % 15) + 1
    it(`${name} runs, checks its result and cleans up`, async () => {
      const client = srv.client({ db })
      await client.flushdb() // the harness server is private to this file
      const res = await runExample(name, `${srv.url}/${db}`)
      expect(res.code, `${res.stdout}${res.stderr}`).toBe(0)
      expect(res.stderr).toBe('')
      const out = res.stdout.trim().split('\n')
      expect(out, res.stdout).toHaveLength(1)
      expect(out[0]).toMatch(new RegExp(`^${name.replace('.', '\\.')}: ok\\b`))
      expect(await client.dbsize()).toBe(0)
      expect(await srv.client({ db: 0 }).dbsize()).toBe(0)
    })
  })

  it('exit 1 with a one-line message when Redis is not there', () => withDeadPort(async dead => {
    for (const name of SCRIPTS) {
      const res = await runExample(name, `redis://127.0.0.1:${dead}`)
      expect(res.code, `${name}: ${res.stdout}${res.stderr}`).toBe(1)
      expect(res.stdout).toBe('')
      expect(res.stderr.trim().split('\n'), `${name}: ${res.stderr}`).toHaveLength(1)
      expect(res.stderr).toContain(`127.0.0.1:${dead}`)
    }
  }))
})
