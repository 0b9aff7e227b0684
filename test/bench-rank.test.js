'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Timing mode ranks only rows that measured a rate (issue 22, item 1): enough round trips,
// a margin of error for the pick, and rows that cannot finish under the cap skipped once a
// row has finished. Expected values are worked out by hand from the numbers in each test.

const { useServer } = require('./helpers/redis-server')
const { benchSpy } = require('./helpers/bench-spy')
const { bench } = require('../lib/bench')
const { sliceMargin, T95 } = require('../lib/bench/margin')
const { normalizeBenchOptions } = require('../lib/bench/options')
const { formatTable, formatMarkdown } = require('../lib/bench/format')

let srv
let redis
useServer('pipeload-bench-rank-', s => { ({ srv, redis } = s) })

describe('bench margin of error (pure)', () => {
  it('one run: t(95%, 4 df) x the standard error of five equal slices of commands, over the mean slice time', () => {
    // Slices of 100 commands each taking 10 ms: no spread, no margin.
    const even = [[0, 0], [10, 100], [20, 200], [30, 300], [40, 400], [50, 500]]
    expect(sliceMargin(even)).toBe(0)
    // Slice times 10, 12, 8, 10, 10 ms: mean 10, sample sd sqrt(8 / 4) = 1.41421;
    // margin 2.776 x 1.41421 / sqrt(5) / 10 = 0.175571. The points fall between slice
    // ends (every 50 commands): the slice ends are interpolated.
    const uneven = [[0, 0], [5, 50], [10, 100], [16, 150], [22, 200], [26, 250], [30, 300], [35, 350], [40, 400], [45, 450], [50, 500]]
    expect(T95).toBe(2.776)
    expect(sliceMargin(uneven)).toBeCloseTo(0.175571, 5)
    // Too few points to cut into five slices: unknown, never zero.
    expect(sliceMargin([[0, 0], [10, 500]])).toBe(null)
  })

  it('the default --count grows with the largest batch size and the window, from 100,000 up to 1,000,000', () => {
    expect(normalizeBenchOptions({}).count).toBe(1000000) // 10 x 4 x 100,000, at most 1M
    expect(normalizeBenchOptions({ batchSizes: [10, 5000] }).count).toBe(200000) // 10 x 4 x 5,000
    expect(normalizeBenchOptions({ batchSizes: [10, 1000], window: 2 }).count).toBe(100000) // 20,000: the least is 100,000
    expect(normalizeBenchOptions({ batchSizes: [10, 5000], count: 300 }).count).toBe(300) // given: kept
  })
})

describe('bench ranks only what it measured (real server, simulated RTT)', () => {
  it('a row of few round trips is marked ‡ and not ranked; a row that cannot finish under the cap is skipped §, not run; margins given', async () => {
    const before = await redis.dbsize()
    const spy = benchSpy(srv)
    // 800 INCRs, window 4, 20 ms round trips, rows stopped at 600 ms:
    // batch 2: 400 batches, at least 100 round trips = 2 s: cannot finish, so it waits, and
    //   is skipped once batch 20 has finished;
    // batch 20: 40 batches = 10 round trips (about 200 ms): ranked;
    // batch 100: 8 batches = 2 round trips: faster, but times two RTTs, not a rate.
    const res = await bench({ redis: spy.redis, rtt: '20ms', count: 800, batchSizes: [2, 20, 100], baseline: false, maxRowTime: '600ms' })
    expect(res.rows.map(r => [r.batchSize, r.batches, r.roundTrips, r.ranked, r.capped, r.ops])).toEqual([
      [20, 40, 10, true, false, 800], [100, 8, 2, false, false, 800]
    ])
    expect(res.skippedRows).toEqual([{ mode: 'pipeline', batchSize: 2, window: 4, reason: 'cannot-finish', minRoundTrips: 100, minDurationMs: expect.any(Number) }])
    expect(res.skippedRows[0].minDurationMs).toBeGreaterThan(600)
    expect(res.fastestBatchSize).toBe(20)
    // One ranked batched row has nothing to be compared with (issue 34, item 8).
    expect(res.recommendedBatchSize).toBe(null)
    expect(res.rows.map(r => r.fastest)).toEqual([true, false])
    // The margin of the ranked row comes from its own run.
    expect(res.rows[0].marginFrom).toBe('slices')
    expect(res.rows[0].marginOpsPerSec).toBeGreaterThanOrEqual(0)
    // Two rows ran (row prefixes 1 and 2), each leaving its 800 INCRs: batch 2 sent nothing.
    const { rows } = spy.rows()
    expect([...rows.keys()].sort()).toEqual([1, 2])
    for (const keys of rows.values()) expect(keys).toEqual({ counter: '800' })
    const text = formatTable(res)
    expect(text).toMatch(/^\s+2\s+—\s+—.*§ skipped: cannot finish in 600 ms$/m)
    expect(text).toMatch(/^\s+100\s.*‡ 2 round trips$/m)
    expect(text).toMatch(/^no batch size to recommend: only batch size 20 measured a rate, nothing to compare it with \(see ‡\); 20 ran at [\d,]+ ops\/s$/m)
    expect(text).toMatch(/^‡ fewer than 10 round trips: 100 \(2\) — .*left out of "fastest"; a larger --count \(10 × window × batch size: 4,000 for 100\) measures it$/m)
    expect(text).toMatch(/^§ skipped: 2 \(100 round trips, at least [\d.]+ s\) — cannot finish under --max-row-time 600 ms .*one that did \(20\), so it cannot be the pick$/m)
    expect(formatMarkdown(res)).toMatch(/^\| 2 § \| — \|/m)
    expect(JSON.parse(JSON.stringify(res)).skippedRows).toHaveLength(1)
    expect(await redis.dbsize()).toBe(before)
  })

  it('rows that cannot finish are still run when no row finishes: their rate is all there is', async () => {
    const spy = benchSpy(srv)
    // Batch 2 needs at least 100 round trips of 20 ms: over the 300 ms cap, and nothing else runs.
    const res = await bench({ redis: spy.redis, rtt: '20ms', count: 800, batchSizes: [2], baseline: false, maxRowTime: '300ms' })
    expect(res.skippedRows).toEqual([])
    expect(res.rows.map(r => [r.batchSize, r.capped])).toEqual([[2, true]])
    expect(res.rows[0].ops).toBeLessThan(800)
    expect(spy.rows().rows.get(1)).toEqual({ counter: String(res.rows[0].ops) })
  })
})
