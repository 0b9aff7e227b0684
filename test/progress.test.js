'use strict'
/* global describe, it, expect, beforeAll */

// Progress reporting (library callback and the CLI's TTY line) and aborting a load.
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { useServer } = require('./helpers/redis-server')
const { load } = require('..')

const BIN = path.join(__dirname, '..', 'bin', 'pipeload.js')
let server
let dir
let csv

useServer('pipeload-progress-', s => { server = s.srv; dir = s.tmp })

beforeAll(() => {
  csv = path.join(dir, 'rows.csv')
  const rows = ['id,v']
  for (let i = 0; i < 50_000; i++) rows.push(`${i},value-${i}`)
  fs.writeFileSync(csv, rows.join('\n') + '\n')
})

describe('progress', () => {
  it('calls onProgress with growing counts and the file size, ending at the totals', async () => {
    const seen = []
    const summary = await load({ url: server.url, input: csv, command: 'SET p:{id} {v}', onProgress: p => seen.push(p), progressInterval: 1, batchSize: 500 })
    expect(seen.length).toBeGreaterThan(2)
    for (let i = 1; i < seen.length; i++) expect(seen[i].records).toBeGreaterThanOrEqual(seen[i - 1].records)
    const last = seen.at(-1)
    expect(last).toMatchObject({ records: 50_000, commands: 50_000, errors: 0, totalBytes: fs.statSync(csv).size, bytesRead: fs.statSync(csv).size })
    expect(summary.records).toBe(50_000)
  })

  it('prints a progress line on stderr when it is a terminal', async () => {
    // script(1) gives the CLI a pseudo-terminal, so stderr.isTTY is true.
    const cmd = `"${process.execPath}" "${BIN}" import "${csv}" -c 'SET t:{id} {v}' -u ${server.url} --batch-size 100`
    const { stdout } = await promisify(execFile)('script', ['-qfec', cmd, '/dev/null'], { encoding: 'utf8' })
    expect(stdout).toMatch(/\r\x1b\[K[\d,]+ records · [\d,]+ rows\/s · [\d.]+ [KM]iB of [\d.]+ [KM]iB \([\d.]+%\) · \d+:\d\d elapsed · ETA \d+:\d\d/)
    expect(stdout).toMatch(/loaded 50,000 of 50,000 records/)
  })
})

describe('abort', () => {
  it('stops reading on abort, waits for what was sent, and reports it', async () => {
    const controller = new AbortController()
    async function * records () {
      for (let i = 0; ; i++) {
        if (i === 3000) controller.abort()
        yield { id: i }
      }
    }
    const err = await load({ url: server.url, input: records(), command: 'SET a:{id} 1', batchSize: 100, signal: controller.signal })
      .then(() => null, e => e)
    expect(err.code).toBe('PIPELOAD_ABORTED')
    const s = err.summary
    expect(s.records).toBeGreaterThan(1000) // records handed on before the abort was seen
    expect(s.records).toBeLessThan(4000)
    // Everything sent was acknowledged before load() gave up, and it is in Redis.
    expect(s.acknowledged).toBe(s.commands)
    const redis = server.client()
    const keys = await redis.keys('a:*')
    expect(keys.length).toBe(s.loaded)
    // The first record not sent: an iterable's records are numbered from 1.
    expect(s.stoppedAt).toEqual({ file: '<records>', line: s.records + 1, offset: null })
  })
})
