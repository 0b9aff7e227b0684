'use strict'
/* global describe, it, expect */

// Issue 34 item 7: progress without a terminal. --progress <interval> prints a plain line per
// interval on stderr (a Kubernetes Job's log, nohup), also while the input stalls; without it
// a stderr that is no terminal gets a line every 30 s, so a short run prints what it printed
// before; --progress 0 and --no-progress print none.
const { spawn } = require('node:child_process')
const { PassThrough } = require('node:stream')
const { useServer } = require('./helpers/redis-server')
const { runCli, BIN, ROOT, BASE_ENV } = require('./helpers/run-cli')
const { waitFor, scaledMs } = require('./helpers/wait')
const { progressMode, LOG_INTERVAL_MS } = require('../lib/cli/progress')
const { load } = require('..')
const { formatProgress } = require('../lib/run/reporter')

let srv
let redis
let write
useServer('pipeload-progress-lines-', ctx => { srv = ctx.srv; redis = ctx.redis; write = ctx.write })

// A line of a stdin run: no size, so no share of it and no ETA.
const STDIN_LINE = /^progress: ([\d,]+) records? · [\d,]+ rows\/s · [\d.]+ (?:B|KiB|MiB) · \d+:\d\d elapsed$/
const recordsOf = line => Number(STDIN_LINE.exec(line)[1].replace(/,/g, ''))

/** The CLI with stdin and stderr as pipes; stdin is written by the test, part by part. */
function startCli (args) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] })
  const run = { child, stderr: '', stdout: '' }
  child.stdout.on('data', d => { run.stdout += d })
  child.stderr.on('data', d => { run.stderr += d })
  run.exited = new Promise(resolve => child.on('close', code => resolve(code)))
  run.progressLines = () => run.stderr.split('\n').filter(l => l.startsWith('progress:'))
  return run
}

const rows = (from, to) => Array.from({ length: to - from }, (_, i) => `${from + i},v${from + i}\n`).join('')

describe('--progress <interval> on a stderr that is no terminal', () => {
  it('prints a plain line per interval while stdin is fed in parts, counting what was fed', async () => {
    const run = startCli(['import', '-', '--format', 'csv', '-c', 'SET pl:{id} {v}', '-u', srv.url, '--progress', '50ms'])
    run.child.stdin.write('id,v\n' + rows(0, 100))
    // The input stalls here: the run reaches the 100 records and goes on printing lines.
    await waitFor('a progress line counting the first 100 records', () => run.progressLines().some(l => STDIN_LINE.test(l) && recordsOf(l) === 100))
    const before = run.progressLines().length
    await waitFor('another line while stdin still stalls', () => run.progressLines().length > before)
    run.child.stdin.write(rows(100, 250))
    await waitFor('a progress line counting all 250 records', () => run.progressLines().some(l => STDIN_LINE.test(l) && recordsOf(l) === 250))
    const seen = run.progressLines().length
    run.child.stdin.end()
    expect(await run.exited, run.stderr).toBe(0)
    const lines = run.progressLines()
    // Every line is whole and plain (no carriage return, no escape), and no count goes past
    // what had been fed when it was printed: 100 before the second part, 250 at most after it.
    for (const l of lines) expect(l).toMatch(STDIN_LINE)
    expect(run.stderr).not.toMatch(/[\r\x1b]/)
    const counts = lines.map(recordsOf)
    expect(Math.max(...counts.slice(0, before))).toBe(100)
    expect(Math.max(...counts)).toBe(250)
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1])
    expect(lines.length).toBeGreaterThanOrEqual(seen)
    // The summary follows the lines; stdout stays empty.
    expect(run.stderr).toMatch(/\nloaded 250 of 250 records \(250 commands\) from <stdin> into [^\n]+\nerrors: 0 · [^\n]+\n$/)
    expect(run.stdout).toBe('')
    expect((await redis.keys('pl:*')).length).toBe(250)
    expect(await redis.get('pl:0')).toBe('v0')
    expect(await redis.get('pl:249')).toBe('v249')
  })

  it('--json: the lines on stderr, stdout only the summary; --progress 0 and --no-progress: none', async () => {
    for (const [flags, lines] of [[['--progress', '50ms'], true], [['--progress', '0'], false], [['--no-progress'], false]]) {
      const run = startCli(['import', '-', '--format', 'csv', '-c', 'SET pj:{id} {v}', '-u', srv.url, '--json', ...flags])
      run.child.stdin.write('id,v\n' + rows(0, 10))
      // With lines: until one counts the 10 records. Without: until the 10 are in Redis, then
      // for several intervals more (a line is due every 50 ms at most).
      if (lines) await waitFor('a progress line', () => run.progressLines().some(l => STDIN_LINE.test(l) && recordsOf(l) === 10))
      else {
        await waitFor('the 10 records', async () => (await redis.exists('pj:9')) === 1)
        await new Promise(resolve => setTimeout(resolve, 300))
      }
      run.child.stdin.end()
      expect(await run.exited, run.stderr).toBe(0)
      expect(JSON.parse(run.stdout)).toMatchObject({ records: 10, loaded: 10, errors: 0 })
      expect(run.stdout.split('\n')).toHaveLength(2)
      expect(run.progressLines().length > 0, `${flags.join(' ')}: ${run.stderr}`).toBe(lines)
      if (!lines) expect(run.stderr, flags.join(' ')).toBe('')
      await redis.del(...Array.from({ length: 10 }, (_, i) => `pj:${i}`))
    }
  })

  it('two files, parse workers: lines against both sizes added up, with the time left', async () => {
    const a = write('two-a.csv', 'id,v\n' + rows(0, 20_000))
    const b = write('two-b.csv', 'id,v\n' + rows(20_000, 30_000))
    const total = require('node:fs').statSync(a).size + require('node:fs').statSync(b).size
    // 1 ms: the call load() makes as it ends prints a line too (the run lasts longer than that).
    const r = await runCli(['import', a, b, '-c', 'SET pw:{id} {v}', '-u', srv.url, '--workers', '2', '--chunk-size', '64KiB', '--progress', '1ms'], { spawn: true })
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stderr.split('\n').filter(l => l.startsWith('progress:'))
    expect(lines.length).toBeGreaterThan(0)
    const sized = /^progress: ([\d,]+) records? · [\d,]+ rows\/s · [\d.]+ (?:B|KiB|MiB) of ([\d.]+ KiB) \(\d+\.\d%\) · \d+:\d\d elapsed(?: · ETA \d+:\d\d)?$/
    for (const l of lines) {
      expect(l).toMatch(sized)
      expect(sized.exec(l)[2]).toBe(`${(total / 1024).toFixed(1)} KiB`)
      expect(Number(sized.exec(l)[1].replace(/,/g, ''))).toBeLessThanOrEqual(30_000)
    }
    expect(lines.some(l => / · ETA \d+:\d\d$/.test(l))).toBe(true)
    expect(r.stderr).toMatch(/\nloaded 30,000 of 30,000 records \(30,000 commands\) from [^\n]+\nerrors: 0 · batches: \d+ · parse workers: 2 · /)
    expect((await redis.keys('pw:*')).length).toBe(30_000)
  })

  it('a short run without --progress prints the summary alone, as before', async () => {
    const file = write('short.csv', 'id,v\n1,a\n2,b\n')
    const r = await runCli(['import', file, '-c', 'SET ps:{id} {v}', '-u', srv.url], { spawn: true })
    expect(r.code, r.stderr).toBe(0)
    const masked = r.stderr.replace(/ in [\d.]+ [mµn]?s · [\d,]+ rows\/s/, ' in T · R rows/s').replace(/p50 [\d.]+ ms, p99 [\d.]+ ms/, 'p50 P, p99 P')
    expect(masked).toBe(`loaded 2 of 2 records (2 commands) from ${file} into ${srv.url.replace('redis://', '')} in T · R rows/s\n` +
      'errors: 0 · batches: 1 · parse workers: 0 · batch round trip p50 P, p99 P\n')
  })

  it('a bad interval is a usage error naming the flag', async () => {
    const r = await runCli(['import', '-', '-c', 'SET x {id}', '-u', srv.url, '--progress', '10'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^pipeload: --progress 10: a duration needs a unit: 10s for seconds, 10ms for milliseconds/)
    const bad = await runCli(['import', '-', '-c', 'SET x {id}', '-u', srv.url, '--progress', 'soon'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe('pipeload: --progress must be a duration such as "250ms" or "1.5s", got "soon"\n')
  })
})

describe('which progress a run shows (progressMode)', () => {
  it('a stderr that is no terminal: a line every 30 s; --quiet, --json: none; --progress wins', () => {
    expect(LOG_INTERVAL_MS).toBe(30_000)
    expect(progressMode({}, false)).toEqual({ lines: true, ms: 30_000 })
    expect(progressMode({ json: true }, false)).toBe(null)
    expect(progressMode({ quiet: true }, false)).toBe(null)
    expect(progressMode({ quiet: true, progress: '10s' }, false)).toEqual({ lines: true, ms: 10_000 })
    expect(progressMode({ json: true, progress: '10s' }, false)).toEqual({ lines: true, ms: 10_000 })
    expect(progressMode({ progress: '0' }, false)).toBe(null)
    expect(progressMode({ progress: false }, false)).toBe(null)
  })

  it('a terminal: the line redrawn every 250 ms, none with --json; --progress: plain lines there too', () => {
    expect(progressMode({}, true)).toEqual({ lines: false, ms: 250 })
    expect(progressMode({ json: true }, true)).toBe(null)
    expect(progressMode({ progress: '2m' }, true)).toEqual({ lines: true, ms: 120_000 })
    expect(progressMode({ progress: false }, true)).toBe(null)
  })
})

describe('onProgress while the input stalls', () => {
  it('is called every progressInterval, not only as batches pass', async () => {
    // A stream the test writes: after 20 rows it gives nothing until the test ends it.
    const input = new PassThrough()
    input.write('id\n' + Array.from({ length: 20 }, (_, i) => `${i}\n`).join(''))
    const seen = []
    const done = load({ url: srv.url, input, format: 'csv', command: 'SET po:{id} 1', progressInterval: 20, onProgress: p => seen.push(p) })
    try {
      // The 20 records are sent (the encoder's idle flush), then calls go on during the stall.
      await waitFor('onProgress counting the 20 records', () => seen.some(p => p.records === 20), scaledMs(10_000))
      const n = seen.length
      await waitFor('two more calls during the stall', () => seen.length >= n + 2, scaledMs(10_000))
      expect(seen.slice(n).every(p => p.records === 20)).toBe(true)
    } finally {
      input.end('20\n')
    }
    const s = await done
    expect(s.records).toBe(21)
    expect(seen.at(-1).records).toBe(21)
  })
})

describe('progress of a resumed run', () => {
  it('counts this run from its first batch: records, rate, and the time left at its own pace', async () => {
    const file = write('resume.csv', 'id,v\n' + rows(0, 60_000))
    const checkpoint = write('resume.ckpt', '')
    require('node:fs').rmSync(checkpoint)
    const options = { url: srv.url, input: file, command: 'SET pr:{id} {v}', checkpoint, batchSize: 1000, progressInterval: 1 }
    const stop = new AbortController()
    const first = await load({ ...options, signal: stop.signal, onProgress: p => { if (p.records >= 30_000) stop.abort() } }).then(() => null, e => e)
    expect(first.code).toBe('PIPELOAD_ABORTED')
    const done = first.summary.loaded
    const seen = []
    const s = await load({ ...options, resume: true, onProgress: p => seen.push(p) })
    expect(s).toMatchObject({ records: 60_000, loaded: 60_000, resumedFrom: done })
    // Records are this run's; bytes are positions in the file (the skipped records are read again).
    expect(seen.at(-1)).toMatchObject({ records: 60_000 - done, bytesRead: require('node:fs').statSync(file).size })
    // Its first batch is where its pace starts: no time left before a second one (the old
    // estimate, from the share read since the run started, counted the fast skipping as loading).
    const firstBatch = seen.find(p => p.records > 0)
    expect(firstBatch.etaMs).toBe(null)
    expect(formatProgress(firstBatch)).not.toMatch(/ETA/)
    expect(seen.some(p => p.etaMs !== null && / · ETA \d+:\d\d$/.test(formatProgress(p)))).toBe(true)
    expect((await redis.keys('pr:*')).length).toBe(60_000)
  })
})
