'use strict'

// Tests that check "every record ran exactly once" give each record an INCR on a counter
// of its own (`<prefix><record index>`); this reads them all back, 10,000 keys per MGET.

/** counts[i] = how many times record i's INCR ran (0 when its key is absent). */
async function recordCounts (redis, prefix, rows) {
  const out = []
  for (let i = 0; i < rows; i += 10_000) {
    const keys = Array.from({ length: Math.min(10_000, rows - i) }, (_, j) => `${prefix}${i + j}`)
    out.push(...(await redis.mget(keys)).map(v => Number(v ?? 0)))
  }
  return out
}

module.exports = { recordCounts }
