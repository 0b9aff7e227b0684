'use strict'
/* global describe, it, expect */

// Outputs that cannot be written: the checkpoint, the rejects file, stdout. A path that
// cannot be written is refused before anything is sent (exit 2); a write that fails later
// (a full disk) stops the run cleanly with PIPELOAD_OUTPUT_FAILED (exit 74) and the summary.
// Never a stack trace, never an error thrown from a socket handler.
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { runCli, BIN, ROOT, BASE_ENV } = require('./helpers/run-cli')
const { load } = require('..')

const STACK = /\n\s+at /
let srv
let tmp

useServer('pipeload-outputs-', s => { ({ srv, tmp } = s) })

function csvFile (name, rows, bad = () => false) {
  const file = path.join(tmp, name)
  let s = 'id,v\n'
  for (let i = 0; i < rows; i++) s += bad(i) ? `${i},x,extra\n` : `${i},v${i}\n`
  fs.writeFileSync(file, s)
  return file
}

/** The CLI with its stdout going to `stdoutPath` (a file such as /dev/full). */
function runToFile (args, stdoutPath) {
  const fd = fs.openSync(stdoutPath, 'w')
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: BASE_ENV, stdio: ['ignore', fd, 'pipe'] })
    fs.closeSync(fd)
    let stderr = ''
    child.stderr.on('data', d => { stderr += d })
    child.on('error', reject)
    child.on('close', code => resolve({ code, stderr }))
  })
}

async function keyCount (prefix) {
  return (await srv.client().keys(`${prefix}*`)).length
}

describe('a --checkpoint or --rejects path that cannot be written is refused before anything is sent', () => {
  const unwritable = () => {
    const file = csvFile('plain.csv', 3)
    const dirAsPath = fs.mkdtempSync(path.join(tmp, 'a-dir-'))
    return [
      ['in a directory that does not exist', path.join(tmp, 'no', 'such', 'dir', 'f'), /the directory .*no\/such\/dir does not exist/],
      ['under a regular file', path.join(file, 'f'), /a part of .*plain\.csv is a file, not a directory/],
      ['a directory', dirAsPath, /it is a directory/]
    ]
  }
  for (const flag of ['--checkpoint', '--rejects']) {
    it(`${flag}: a missing directory, a path under a file, a directory: exit 2, one line naming the path`, async () => {
      const input = csvFile('in.csv', 50)
      for (const [what, where, why] of unwritable()) {
        const prefix = `unw${flag}:${what.replace(/\W+/g, '-')}:`
        const res = await runCli(['import', input, '-u', srv.url, '--key', `${prefix}{id}`, flag, where])
        expect(res.code, what).toBe(2)
        expect(res.stderr, what).toMatch(new RegExp(`^pipeload: ${flag} ${where.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be written: `))
        expect(res.stderr, what).toMatch(why)
        expect(res.stderr, what).not.toMatch(STACK)
        expect(res.stderr.trim().split('\n'), what).toHaveLength(1)
        expect(await keyCount(prefix), what).toBe(0)
      }
    })

    // Permission bits do not stop root: only meaningful for another user.
    it.skipIf(process.getuid?.() === 0)(`${flag} in a directory without write permission: exit 2`, async () => {
      const input = csvFile('perm.csv', 5)
      const locked = fs.mkdtempSync(path.join(tmp, 'locked-'))
      fs.chmodSync(locked, 0o500)
      try {
        const res = await runCli(['import', input, '-u', srv.url, '--key', 'perm:{id}', flag, path.join(locked, 'f')])
        expect(res.code).toBe(2)
        expect(res.stderr).toMatch(/cannot be written: permission denied/)
      } finally {
        fs.chmodSync(locked, 0o700)
      }
    })
  }
})

describe('a write that fails during the run stops it cleanly', () => {
  it('--rejects /dev/full: exit 74, a coded message, the summary, no stack', async () => {
    const input = csvFile('bad-rows.csv', 2000, i => i % 100 === 7)
    const res = await runCli(['import', input, '-u', srv.url, '--key', 'full:{id}', '--on-error', 'skip', '--rejects', '/dev/full'])
    expect(res.code).toBe(74)
    expect(res.stderr).toMatch(/^pipeload: rejects \/dev\/full could not be written: no space left on the device\n/)
    expect(res.stderr).toMatch(/stopped after [\d,]+ records/)
    expect(res.stderr).not.toMatch(STACK)
  })

  it('--dry-run resp > /dev/full: exit 74, PIPELOAD_OUTPUT_FAILED, no stack', async () => {
    const input = csvFile('dry.csv', 20_000)
    const res = await runToFile(['import', input, '--key', 'dry:{id}', '--dry-run', 'resp'], '/dev/full')
    expect(res.code).toBe(74)
    expect(res.stderr).toMatch(/^pipeload: cannot write to stdout: no space left on the device\n/)
    expect(res.stderr).not.toMatch(STACK)
  })

  it('--json > /dev/full: exit 74, no stack, the data is loaded', async () => {
    const input = csvFile('json.csv', 30)
    const res = await runToFile(['import', input, '-u', srv.url, '--key', 'json-full:{id}', '--json'], '/dev/full')
    expect(res.code).toBe(74)
    expect(res.stderr).toBe('pipeload: cannot write to stdout: no space left on the device\n')
    expect(await keyCount('json-full:')).toBe(30)
  })

  it('library: a dry-run output stream that fails rejects with PIPELOAD_OUTPUT_FAILED', async () => {
    const { Writable } = require('node:stream')
    const output = new Writable({ write (chunk, enc, cb) { cb(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' })) } })
    const err = await load({ input: csvFile('lib-dry.csv', 100), key: 'k:{id}', dryRun: 'resp', output }).catch(e => e)
    expect(err).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_OUTPUT_FAILED', exitCode: 74, message: expect.stringMatching(/^cannot write to the dry-run output: EIO/) })
  })

  it('library: the checkpoint cannot be written any more mid-run (its directory removed): PIPELOAD_OUTPUT_FAILED with the summary', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'cp-gone-'))
    const cp = path.join(dir, 'run.checkpoint')
    let removed = false
    // Records until the run stops: the directory goes once the first checkpoint is there,
    // so the next checkpoint write (from a reply handler) fails.
    async function * records () {
      for (let i = 0; ; i++) {
        if (!removed && fs.existsSync(cp)) { fs.rmSync(dir, { recursive: true }); removed = true }
        yield { id: i }
        if (i % 500 === 0) await new Promise(resolve => setImmediate(resolve))
      }
    }
    const err = await load({ url: srv.url, input: records(), command: 'SET cpgone:{id} 1', batchSize: 100, checkpoint: cp }).catch(e => e)
    expect(removed).toBe(true)
    expect(err).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_OUTPUT_FAILED', exitCode: 74, output: 'checkpoint' })
    expect(err.message).toMatch(/^checkpoint .*run\.checkpoint could not be written: the directory .* does not exist$/)
    expect(err.summary.records).toBeGreaterThan(0)
    expect(err.summary.stoppedAt).not.toBe(null)
  })
})
