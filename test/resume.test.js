'use strict'
/* global describe, it, expect, beforeAll */

// Interrupted runs: the loader SIGKILLed or interrupted mid-load, then resumed from its
// checkpoint. Afterwards the data equals the input and the final counts add up.
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { startRedis, useServer } = require('./helpers/redis-server')

const BIN = path.join(__dirname, '..', 'bin', 'pipeload.js')
const ROWS = 500_000
let server
let dir
let csv

useServer('pipeload-resume-', s => { server = s.srv; dir = s.tmp })

beforeAll(() => {
  csv = path.join(dir, 'rows.csv')
  const fd = fs.openSync(csv, 'w')
  let s = 'id,name,score\n'
  for (let i = 0; i < ROWS; i++) {
    s += `${i},name-${i},${(i * 7919) % 10007}\n`
    if (s.length > 1 << 20) { fs.writeSync(fd, s); s = '' }
  }
  fs.writeSync(fd, s)
  fs.closeSync(fd)
})

function start (args) {
  const child = spawn(process.execPath, [BIN, 'import', csv, '-u', server.url, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.out = ''
  child.err = ''
  child.stdout.on('data', d => { child.out += d })
  child.stderr.on('data', d => { child.err += d })
  child.done = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal })))
  return child
}

async function waitFor (ready, ms = 30_000) {
  const end = Date.now() + ms
  while (!ready()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

function checkpointRecords (file) {
  try { return JSON.parse(fs.readFileSync(file, 'utf8')).records } catch { return 0 }
}

async function expectAllRows (prefix) {
  const redis = server.client()
  let n = 0
  for (let i = 0; i < ROWS; i += 25_000) {
    const p = redis.pipeline()
    for (let j = i; j < Math.min(ROWS, i + 25_000); j++) p.hgetall(`${prefix}${j}`)
    for (const [err, h] of await p.exec()) {
      const id = i + n % 25_000
      if (err || h.id !== String(id) || h.name !== `name-${id}`) expect.fail(`${prefix}${id} is ${JSON.stringify(err || h)}`)
      n++
    }
  }
  expect(n).toBe(ROWS)
}

describe('checkpoint and resume', () => {
  it('resumes after the loader is SIGKILLed; data and counts come out exact', async () => {
    const cp = path.join(dir, 'kill.checkpoint')
    const args = ['--key', 'k:{id}', '--checkpoint', cp, '--batch-size', '500', '--json']
    const first = start(args)
    await waitFor(() => checkpointRecords(cp) > 50_000)
    first.kill('SIGKILL')
    const { signal } = await first.done
    expect(signal).toBe('SIGKILL')
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved.records).toBeGreaterThan(50_000)
    expect(saved.records).toBeLessThan(ROWS)
    expect(saved.complete).toBe(false)

    const second = start([...args, '--resume'])
    const { code } = await second.done
    expect(second.err).toBe('')
    expect(code).toBe(0)
    const summary = JSON.parse(second.out)
    expect(summary).toMatchObject({ resumedFrom: saved.records, records: ROWS, loaded: ROWS, errors: 0 })
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ records: ROWS, loaded: ROWS, complete: true })
    await expectAllRows('k:')
  }, 120_000)

  for (const [signal, exitCode] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    it(`on ${signal} waits for in-flight replies, writes the checkpoint, prints the summary and exits ${exitCode}`, async () => {
      const cp = path.join(dir, `${signal}.checkpoint`)
      const prefix = `${signal}:`
      const args = ['--key', `${prefix}{id}`, '--checkpoint', cp, '--batch-size', '500']
      const first = start(args)
      await waitFor(() => checkpointRecords(cp) > 20_000)
      first.kill(signal)
      const { code } = await first.done
      expect(code).toBe(exitCode)
      expect(first.err).toMatch(/aborted/)
      expect(first.err).toMatch(/loaded [\d,]+ of [\d,]+ records/)
      expect(first.err).toMatch(/--resume/)
      expect(first.err).not.toMatch(/\n\s+at /)
      const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
      // Everything the checkpoint claims is in Redis: nothing is claimed that was not acknowledged.
      const redis = server.client()
      expect(await redis.exists(`${prefix}${saved.records - 1}`)).toBe(1)

      const second = start([...args, '--resume', '--json'])
      expect((await second.done).code).toBe(0)
      expect(JSON.parse(second.out)).toMatchObject({ resumedFrom: saved.records, records: ROWS, loaded: ROWS })
      await expectAllRows(prefix)
    }, 120_000)
  }

  it('a second Ctrl-C exits at once, even while replies are awaited', async () => {
    const frozen = await startRedis()
    try {
      const child = spawn(process.execPath, [BIN, 'import', csv, '-u', frozen.url, '--key', 'z:{id}'], { stdio: ['ignore', 'pipe', 'pipe'] })
      const done = new Promise(resolve => child.on('close', code => resolve(code)))
      await new Promise(resolve => setTimeout(resolve, 700))
      frozen.proc.kill('SIGSTOP') // replies stop: the first Ctrl-C waits for them
      child.kill('SIGINT')
      await new Promise(resolve => setTimeout(resolve, 300))
      expect(child.exitCode).toBe(null)
      const t = Date.now()
      child.kill('SIGINT')
      expect(await done).toBe(130)
      expect(Date.now() - t).toBeLessThan(1000)
    } finally {
      frozen.proc.kill('SIGCONT')
      await frozen.stop()
    }
  }, 30_000)

  it('refuses to resume over a different input', async () => {
    const cp = path.join(dir, 'other.checkpoint')
    fs.writeFileSync(cp, JSON.stringify({ version: 1, input: { path: '/elsewhere/other.csv', size: 10, mtimeMs: 1 }, records: 5 }))
    const child = start(['--key', 'x:{id}', '--checkpoint', cp, '--resume'])
    const { code } = await child.done
    expect(code).toBe(2)
    expect(child.err).toMatch(/checkpoint .*other\.checkpoint: it was written for \/elsewhere\/other\.csv/)
  })
})
