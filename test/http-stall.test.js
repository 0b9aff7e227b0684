'use strict'
/* global describe, it, expect, beforeAll */

// An http(s) body that stalls after some records (issue 22 item 4): the whole records
// received go to the server while the download waits, not once a full batch has come, on
// this thread, in one parse worker and in two; and the stall ends the run after --timeout
// with an input error (exit 3) naming the URL (its password hidden) and the bytes received.
const crypto = require('node:crypto')
const { spawn } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { useHttpServer } = require('./helpers/http-server')
const { BIN, ROOT } = require('./helpers/run-cli')
const { waitFor, scaledMs } = require('./helpers/wait')
const { load } = require('..')

let server
let redis
useServer('pipeload-http-stall-', s => { server = s.srv; redis = s.redis })
const web = useHttpServer()
let host
beforeAll(() => { host = web.base.slice('http://'.length) })

const SECRET = 'St' + crypto.randomBytes(6).toString('hex')
const SENT = 2500 // with -b 1000: two full batches, then 500 records that wait for no third
const rows = Array.from({ length: SENT }, (_, i) => JSON.stringify({ id: i, pad: 'x'.repeat(40) }) + '\n').join('')
const partial = '{"id":2500,"pad":"' // a record cut by the stall: never loaded

/**
 * `p` sends its rows in pieces of 8 KiB (several reads), a part of one more record, then
 * nothing; resolves once all of it is written.
 */
function stalling (p) {
  return new Promise(resolve => {
    web.routes.set(p, async (req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' })
      for (let i = 0; i < rows.length; i += 8192) await new Promise(resolve => res.write(rows.slice(i, i + 8192), resolve))
      res.write(partial, resolve)
    })
  })
}

function spawnCli (args) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] })
  const err = []
  child.stderr.on('data', d => err.push(d))
  child.stdout.resume()
  child.exited = new Promise(resolve => child.on('close', code => resolve({ code, stderr: Buffer.concat(err).toString() })))
  child.running = true
  child.exited.then(() => { child.running = false })
  return child
}

describe('an http(s) body that stalls', () => {
  for (const workers of ['0', '1', '2']) {
    it(`--workers ${workers}: the records before the stall land before --timeout ends the run; exit 3 naming the URL`, async () => {
      const p = `/stall${workers}.ndjson`
      const stalled = stalling(p)
      const prefix = `st${workers}`
      // --timeout: 3 s on a quiet machine, scaled to this one (whole seconds), so that half of it
      // is time enough for the records to land however loaded the machine is.
      const timeoutS = Math.ceil(scaledMs(3000) / 1000)
      const child = spawnCli(['import', `http://u:${SECRET}/x@${host}${p}`, '-u', server.url, '-c', `SET ${prefix}:{id} {pad}`,
        '-b', '1000', '--workers', workers, '--timeout', `${timeoutS}s`])
      // All SENT records are in while the run still waits on the download: within half the
      // timeout of the stall (held back until the timeout, they land with the error).
      await stalled
      await waitFor('the records before the stall', async () => Number(await redis.exists(`${prefix}:${SENT - 1}`)) === 1, timeoutS * 1000 / 2)
      expect(child.running).toBe(true)
      const { code, stderr } = await child.exited
      expect(code, stderr).toBe(3)
      const bytes = Buffer.byteLength(rows) + partial.length
      expect(stderr).toContain(`pipeload: http://***@${host}${p}@${bytes}: the input stream failed: the server sent nothing for ${timeoutS}s after ${bytes.toLocaleString('en-US')} bytes (--timeout)\n`)
      expect(stderr).not.toContain(SECRET)
      const keys = Array.from({ length: SENT + 1 }, (_, i) => `${prefix}:${i}`)
      const values = await redis.mget(keys)
      expect(values.slice(0, SENT).every(v => v === 'x'.repeat(40))).toBe(true)
      expect(values[SENT]).toBe(null)
    })
  }

  it('library: PIPELOAD_INPUT_FAILED after `timeout`, the records before the stall loaded', async () => {
    stalling('/stall-lib.ndjson')
    const err = await load({ input: `${web.base}/stall-lib.ndjson`, url: server.url, command: 'SET stl:{id} 1', timeout: '500ms', batchSize: 1000 }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_INPUT_FAILED')
    expect(err.message).toContain('the server sent nothing for 500ms after') // timeout as given
    expect(err.summary).toMatchObject({ loaded: SENT })
    expect(await redis.exists(`stl:${SENT - 1}`)).toBe(1)
  })
})
