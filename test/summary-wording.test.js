'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 22 item 4: the text summary and messages say "1 record", "1 command" (not "1
// commands"); a dry run says what it did (written), not "acknowledged"; the summary always
// says how many parse workers ran, 0 too, and why --map keeps the parse on one thread.
// Expected lines are written out here, not built with the reporter's own helpers.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { formatSummary, formatProgress } = require('../lib/run/reporter')

let srv
let redis
let write
let tmp
useServer('pipeload-wording-', s => { ({ srv, redis, write, tmp } = s) })

const base = {
  input: 'u.csv', target: 'h:1', dryRun: null, resumedFrom: null, records: 1, loaded: 1, commands: 1, errors: 0,
  errorReplies: 0, durationMs: 3, recordsPerSec: 333, batches: 1, workers: 0, rttMs: { p50: null }, reconnects: 0, resentBatches: 0
}

describe('the summary counts in words', () => {
  it('one of each: singular', () => {
    const text = formatSummary({ ...base, errors: 1, errorReplies: 1, reconnects: 1, resentBatches: 1, cluster: { masters: 1, moved: 0, asked: 0, retried: 0, rerouted: 0, refreshes: 0 } })
    expect(text).toBe(
      'loaded 1 of 1 record (1 command) from u.csv into h:1 in 3 ms · 333 rows/s\n' +
      'errors: 1 (1 error reply) · batches: 1 · parse workers: 0 · 1 reconnect, 1 batch re-sent\n' +
      'cluster: 1 master · 0 MOVED · 0 ASK · 0 retried · 0 re-routed · 0 slot map refreshes')
    expect(formatProgress({ records: 1, recordsPerSec: 1, bytesRead: 10, errors: 1 })).toBe('1 record · 1 rows/s · 10 B · 1 error')
  })

  it('none and several: plural', () => {
    expect(formatSummary({ ...base, records: 0, loaded: 0, commands: 0, recordsPerSec: 0 }).split('\n')[0]).toBe('loaded 0 of 0 records (0 commands) from u.csv into h:1 in 3 ms')
    const text = formatSummary({ ...base, records: 2, loaded: 2, commands: 4, errorReplies: 2, errors: 2, reconnects: 2, resentBatches: 3, workers: 4 })
    expect(text).toBe('loaded 2 of 2 records (4 commands) from u.csv into h:1 in 3 ms · 333 rows/s\n' +
      'errors: 2 (2 error replies) · batches: 1 · parse workers: 4 · 2 reconnects, 3 batches re-sent')
  })

  it('a summary without a workers count (not from load()) leaves it out; map says why it is 0', () => {
    expect(formatSummary({ ...base, workers: undefined })).not.toMatch(/parse workers/)
    expect(formatSummary({ ...base, workersReason: 'map' })).toMatch(/ · parse workers: 0 \(--map runs on the main thread\)$/m)
  })
})

describe('the CLI', () => {
  it('a one-record load: "loaded 1 of 1 record (1 command)", "parse workers: 0"', async () => {
    const file = write('one.csv', 'id,v\n1,a\n')
    const r = await runCli(['import', file, '-c', 'SET wd:{id} {v}', '-u', srv.url])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(new RegExp(`^loaded 1 of 1 record \\(1 command\\) from ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} into `, 'm'))
    expect(r.stderr).toMatch(/^errors: 0 · batches: 1 · parse workers: 0 · batch round trip/m)
    expect(await redis.get('wd:1')).toBe('a')
  })

  it('--map --workers 2: the summary says 0 workers and why', async () => {
    const file = write('map.csv', 'id,v\n1,a\n2,b\n')
    const map = path.join(tmp, 'map.cjs')
    fs.writeFileSync(map, 'module.exports = r => [["SET", "wdm:" + r.id, r.v]]\n')
    const r = await runCli(['import', file, '--map', map, '--workers', '2', '-u', srv.url])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/^errors: 0 · batches: 1 · parse workers: 0 \(--map runs on the main thread\) · /m)
    expect(await redis.get('wdm:2')).toBe('b')
  })

  it('a dry run that stops says what it wrote, not "acknowledged" or "sent"', async () => {
    // Enough rows for more than one read and batch before the bad row.
    let text = 'id,v\n'
    for (let i = 1; i <= 3000; i++) text += `${i},v${i}\n`
    text += 'bad\n'
    const file = write('dry.csv', text)
    const r = await runCli(['import', file, '-c', 'SET wdd:{id} {v}', '--dry-run', 'text', '-b', '1000'])
    expect(r.code).toBe(3)
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(3000)
    expect(r.stderr).toMatch(/^wrote text for 3,000 of 3,001 records \(3,000 commands\) from /m)
    expect(r.stderr).toContain('pipeload: stopped after 3,001 records: 3,000 written, 1 failed\n')
    expect(r.stderr).toContain(`pipeload: nothing from ${file}:3002 (byte `)
    expect(r.stderr).toMatch(/\) on was written\n/)
    expect(r.stderr).not.toMatch(/acknowledged|was sent/)
  })

  it('one failed record written to --rejects: singular', async () => {
    await redis.set('wdr:2', 'x')
    const file = write('rej.csv', 'id,v\n1,a\n2,b\n')
    const rejects = path.join(tmp, 'rej.ndjson')
    const r = await runCli(['import', file, '-c', 'HSET wdr:{id} v {v}', '-u', srv.url, '--on-error', 'skip', '--rejects', rejects])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`1 failed record written to ${rejects}\n`)
    expect(r.stderr).toMatch(/^errors: 1 \(1 error reply\) · /m)
  })
})
