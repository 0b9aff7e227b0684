'use strict'
/* global describe, it, expect */

// lib/export/parquet-statistics.js: the column statistics a Parquet export keeps until its
// footer are copies, not views of the reply parser's socket chunks (which they would keep
// alive, a few dozen per row group, to the end of the export), and the file is byte for byte
// the one written without the copies: the footer is the same.

const statistics = require('../lib/export/parquet-statistics')
const { createWriter } = require('../lib/export/parquet')
const { collector } = require('./helpers/export-sink')
const { prng } = require('./helpers/prng')

/** Records whose Buffers are all views of 64 KiB chunks, as the reply parser hands them. */
function records (n, seed) {
  const r = prng(seed)
  let chunk = Buffer.alloc(65536)
  let at = 0
  const view = bytes => {
    if (at + bytes.length > chunk.length) { chunk = Buffer.alloc(65536); at = 0 }
    bytes.copy(chunk, at)
    at += bytes.length
    return chunk.subarray(at - bytes.length, at)
  }
  // Short values, values longer than the 16 bytes the footer keeps, and long ones that start
  // with 16 bytes of 0xff (a max with no shorter upper bound: kept whole).
  const value = () => {
    const k = r.int(4)
    if (k === 0) return Buffer.from(`v${r.int(1000)}`)
    if (k === 1) return Buffer.from(Array.from({ length: 17 + r.int(40) }, () => r.int(256)))
    if (k === 2) return Buffer.concat([Buffer.alloc(16, 0xff), Buffer.from(Array.from({ length: 1 + r.int(8) }, () => r.int(256)))])
    return Buffer.alloc(0)
  }
  const out = []
  for (let i = 0; i < n; i++) {
    const key = view(Buffer.concat([Buffer.from(`key:${i}:`), value()]))
    if (i % 3 === 0) out.push({ key, type: 'string', ttl: null, part: 1, value: view(value()) })
    else out.push({ key, type: 'hash', ttl: i % 5 ? null : 1000 + i, part: 1, value: [view(Buffer.from('a')), view(value()), view(Buffer.from('b')), view(value())] })
  }
  return out
}

async function write (recs, { detach = true } = {}) {
  const sink = collector()
  const w = createWriter(sink.out, { fields: ['a', 'b'], rowGroupSize: 100 })
  const original = statistics.detach
  if (!detach) statistics.detach = () => {}
  try {
    for (const rec of recs) {
      const p = w.write(rec)
      if (p) await p
    }
    await w.end()
  } finally {
    statistics.detach = original
  }
  return { bytes: sink.bytes(), rowGroups: w.sink.writer.row_groups }
}

describe('Parquet column statistics', () => {
  it('are copies of at most 17 bytes (or a whole max of 0xff…), and the file is the same as without', async () => {
    const recs = records(1500, 36)
    const detached = await write(recs)
    const kept = await write(recs, { detach: false })
    expect(detached.bytes.equals(kept.bytes)).toBe(true)
    expect(detached.rowGroups.length).toBe(15)
    const views = []
    for (const g of detached.rowGroups) {
      for (const c of g.columns) {
        const s = c.meta_data.statistics
        for (const v of [s.min_value, s.max_value]) {
          if (!(v instanceof Uint8Array)) continue
          if (v.buffer.byteLength !== v.length) views.push(c.meta_data.path_in_schema.join('.'))
        }
      }
    }
    expect(views).toEqual([])
    // Without the copies, statistics are views of the 64 KiB chunks.
    expect(kept.rowGroups.some(g => g.columns.some(c => c.meta_data.statistics.min_value?.buffer?.byteLength === 65536))).toBe(true)
  })
})
