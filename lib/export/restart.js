'use strict'

const { PipeloadError } = require('../errors')
const { notReady } = require('../send/not-ready')

// Where a master's read goes on after its connection was lost (lib/export/master.js).
// Each SCAN reply is a generation: its keys, and every read of them (a wrong guess read
// again, the pages of a big key), carry its number. The read goes on from the cursor that
// asked for the oldest generation with a key not yet written whole: every key of the
// generations before it is written; the keys from there are read again (those already
// written are written twice, harmless for a restore: a key's first line replaces it), and a
// big key in progress is read again from its first page (its new part 1 replaces it).

/** The oldest generation still being read (Infinity: every key SCAN gave is written). */
function oldestPending (reader, inflight) {
  let oldest = reader.keyGens.length ? reader.keyGens[0].gen : Infinity
  for (const list of [reader.again, reader.pages, ...inflight.map(b => b.items)]) {
    for (const item of list) if (item.gen < oldest) oldest = item.gen
  }
  return oldest
}

/**
 * Forget what was found and not written, and go on from the last SCAN cursor whose keys were
 * all written; `fromStart`: from cursor 0 (another server now: a failover's new master,
 * whose hash table is not the old one's).
 */
function rewind (reader, inflight, fromStart) {
  const oldest = fromStart ? Infinity : oldestPending(reader, inflight)
  if (fromStart) {
    reader.cursor = '0'
    reader.scanned = false
  } else if (oldest !== Infinity) {
    reader.cursor = reader.scanFrom.get(oldest)
    reader.scanned = false
  }
  for (const gen of reader.scanFrom.keys()) if (fromStart || gen < oldest) reader.scanFrom.delete(gen)
  reader.scanning = false
  reader.keys = []
  reader.keyAt = 0
  reader.keyGens = []
  reader.again = []
  reader.pages = []
}

/** Keys SCAN gave: their generation, counted down as they are taken into batches. */
function found (reader, sentCursor, count) {
  const gen = ++reader.gen
  reader.scanFrom.set(gen, sentCursor)
  if (count > 0) reader.keyGens.push({ gen, left: count })
  return gen
}

/** The generation of the next key taken from reader.keys. */
function taken (reader) {
  const head = reader.keyGens[0]
  if (--head.left === 0) reader.keyGens.shift()
  return head.gen
}

/**
 * A reply that says "not now" (LOADING, TRYAGAIN, CLUSTERDOWN, MASTERDOWN, BUSY: a server
 * restarted and loading, a cluster mid-failover) counts as a lost connection: connected
 * again after a pause, the read goes on from the last cursor written whole.
 */
function checkReady (replies, target) {
  for (const r of replies) {
    if (r instanceof Error && notReady(r.message)) {
      throw new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${target} answered ${r.message.split(' ')[0]} (${r.message})`, { target, reply: r.message })
    }
  }
}

module.exports = { rewind, found, taken, oldestPending, checkReady }
