'use strict'
/* global describe, it, expect */

// The reporter's text: pure functions from summaries and progress to lines.
const { formatSummary, formatProgress, formatFailure, timeLeftMs } = require('../lib/run/reporter')

const base = {
  input: 'users.csv', target: '127.0.0.1:6379', dryRun: null, resumedFrom: null, records: 1000, loaded: 998,
  commands: 1000, errors: 2, errorReplies: 2, durationMs: 1500, recordsPerSec: 667, batches: 1,
  rttMs: { p50: 1.5, p99: 12.25 }, reconnects: 0, resentBatches: 0
}

describe('reporter', () => {
  it('summarises a run in two lines', () => {
    expect(formatSummary(base)).toBe(
      'loaded 998 of 1,000 records (1,000 commands) from users.csv into 127.0.0.1:6379 in 1.5 s · 667 rows/s\n' +
      'errors: 2 (2 error replies) · batches: 1 · batch round trip p50 1.50 ms, p99 12.3 ms')
  })

  it('adds resumes, reconnects and cluster counters when there are any', () => {
    const text = formatSummary({
      ...base, resumedFrom: 400, reconnects: 2, resentBatches: 3,
      cluster: { masters: 3, moved: 5, asked: 1, retried: 0, rerouted: 2, refreshes: 4 }
    })
    expect(text).toMatch(/of 1,000 records \(resumed after record 400\)/)
    expect(text).toMatch(/· 2 reconnects, 3 batches re-sent/)
    expect(text.split('\n')[2]).toBe('cluster: 3 masters · 5 MOVED · 1 ASK · 0 retried · 2 re-routed · 4 slot map refreshes')
  })

  it('shows progress against the file size', () => {
    expect(formatProgress({ records: 5000, recordsPerSec: 2500, bytesRead: 512 * 1024, totalBytes: 1024 * 1024, errors: 0 }))
      .toBe('5,000 records · 2,500 rows/s · 512.0 KiB of 1.0 MiB (50.0%)')
  })

  it('adds the elapsed time, and the time left when the size is known (pv-style clock)', () => {
    // load() words the time left as timeLeftMs does, from the run's start (ms 0 here).
    const at = (p, from = { ms: 0, bytes: 0 }) => ({ ...p, etaMs: timeLeftMs(p.bytesRead, p.totalBytes, from, p.elapsedMs) })
    const p = { records: 5000, recordsPerSec: 2500, bytesRead: 256 * 1024, totalBytes: 1024 * 1024, errors: 0, elapsedMs: 2000 }
    expect(formatProgress(at(p))).toBe('5,000 records · 2,500 rows/s · 256.0 KiB of 1.0 MiB (25.0%) · 0:02 elapsed · ETA 0:06')
    expect(formatProgress(at({ ...p, elapsedMs: 3_725_000 }))).toMatch(/ · 1:02:05 elapsed · ETA 3:06:15$/)
    // stdin: no size, no ETA; nothing read yet: no estimate either.
    expect(formatProgress(at({ ...p, totalBytes: null }))).toBe('5,000 records · 2,500 rows/s · 256.0 KiB · 0:02 elapsed')
    expect(formatProgress(at({ ...p, bytesRead: 0 }))).toMatch(/\(0\.0%\) · 0:02 elapsed$/)
    // Issue 34 item 7: a resumed run's pace, from its first batch (at 1 s, 512 KiB read: the
    // records skipped): 256 KiB more in the next 2 s, 256 KiB left: 2 s, not 3 s × ¼ / ¾ = 1 s.
    const resumed = at({ ...p, bytesRead: 768 * 1024, elapsedMs: 3000 }, { ms: 1000, bytes: 512 * 1024 })
    expect(formatProgress(resumed)).toBe('5,000 records · 2,500 rows/s · 768.0 KiB of 1.0 MiB (75.0%) · 0:03 elapsed · ETA 0:02')
    expect(timeLeftMs(512 * 1024, 1024 * 1024, { ms: 1000, bytes: 512 * 1024 }, 1500)).toBe(null) // nothing measured yet
  })

  it('prefixes failures with file:line once', () => {
    expect(formatFailure({ file: 'a.csv', line: 3, message: 'WRONGTYPE Operation' })).toBe('a.csv:3: WRONGTYPE Operation')
    expect(formatFailure({ file: 'a.csv', line: 3, message: 'a.csv:3: bad row' })).toBe('a.csv:3: bad row')
  })
})
