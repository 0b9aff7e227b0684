'use strict'
/* global describe, it, expect */

// Row groups as the unit of --shard and --resume (lib/read/parquet/row-groups.js), without a file:
// shares that partition the groups in order, balanced by rows; where a resumed read begins.
const { groupShare, startAfter } = require('../lib/read/parquet/row-groups')
const { prng } = require('./helpers/prng')

describe('groupShare: shard i/n of the row groups', () => {
  it('n shares are contiguous, in order, disjoint, and cover every group and row once', () => {
    const rand = prng(24)
    for (let t = 0; t < 500; t++) {
      const groups = Array.from({ length: rand.int(20) }, () => 1 + rand.int(rand.chance(0.3) ? 5000 : 100))
      const total = groups.reduce((a, b) => a + b, 0)
      const n = 1 + rand.int(12)
      const shares = Array.from({ length: n }, (_, i) => groupShare(groups, i, n))
      let at = 0
      let row = 0
      for (const s of shares) {
        expect(s.from).toBe(at)
        expect(s.to).toBeGreaterThanOrEqual(s.from)
        expect(s.firstRow).toBe(row)
        // Rows summed here from the groups, not taken from the share.
        let rows = 0
        for (let g = s.from; g < s.to; g++) rows += groups[g]
        expect(s.rows).toBe(rows)
        at = s.to
        row += rows
      }
      expect(at).toBe(groups.length)
      expect(row).toBe(total)
    }
  })

  it('each cut is at the group boundary nearest its even share of the rows', () => {
    const rand = prng(7)
    for (let t = 0; t < 300; t++) {
      const groups = Array.from({ length: 1 + rand.int(15) }, () => 1 + rand.int(1000))
      const total = groups.reduce((a, b) => a + b, 0)
      const bounds = [0]
      for (const g of groups) bounds.push(bounds[bounds.length - 1] + g)
      const n = 1 + rand.int(8)
      for (let i = 1; i < n; i++) {
        const cut = groupShare(groups, i, n).firstRow
        const best = Math.min(...bounds.map(b => Math.abs(b - i * total / n)))
        expect(Math.abs(cut - i * total / n)).toBe(best)
      }
    }
  })

  it('equal groups, as many shards: one each; more shards than groups: the others get none', () => {
    const groups = [100, 100, 100, 100]
    expect([0, 1, 2, 3].map(i => groupShare(groups, i, 4))).toEqual([0, 1, 2, 3].map(i => ({ from: i, to: i + 1, firstRow: 100 * i, rows: 100 })))
    const six = [0, 1, 2, 3, 4, 5].map(i => groupShare(groups, i, 6))
    expect(six.filter(s => s.rows > 0)).toHaveLength(4)
    expect(six.reduce((a, s) => a + s.rows, 0)).toBe(400)
  })
})

describe('startAfter: where a resumed read begins', () => {
  const groups = [10, 10, 10, 10, 5]
  it('the group holding the first row not skipped, and its rows to drop', () => {
    expect(startAfter(groups, 0)).toEqual({ group: 0, drop: 0 })
    expect(startAfter(groups, 9)).toEqual({ group: 0, drop: 9 })
    expect(startAfter(groups, 10)).toEqual({ group: 1, drop: 0 })
    expect(startAfter(groups, 23)).toEqual({ group: 2, drop: 3 })
    expect(startAfter(groups, 44)).toEqual({ group: 4, drop: 4 })
  })
  it('every row skipped: past the last group; more than there are: null', () => {
    expect(startAfter(groups, 45)).toEqual({ group: 5, drop: 0 })
    expect(startAfter(groups, 46)).toBeNull()
  })
  it('within a share of the groups', () => {
    expect(startAfter(groups, 12, 1, 3)).toEqual({ group: 2, drop: 2 })
    expect(startAfter(groups, 20, 1, 3)).toEqual({ group: 3, drop: 0 })
    expect(startAfter(groups, 21, 1, 3)).toBeNull()
  })
})
