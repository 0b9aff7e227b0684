'use strict'

const v8 = require('node:v8')

// The CLI's young generation, capped once it has grown to 16 MB (what Node 20 lets it reach;
// parse workers cap theirs at 16 MB too, with resourceLimits, lib/threads/pool.js).
// Node 24's V8 lets the young generation grow to 64 MB semi-spaces where many objects survive
// a scavenge: a 3M-row load peaked ~90 MB higher there than on Node 20, every input format
// (docs/parquet.md "Memory"). `--max-semi-space-size` caps it only on Node's command line (set
// with v8.setFlagsFromString once running, it changed nothing: the heap is sized at start);
// V8 reads `--semi-space-growth-factor` each time it grows the young generation, so setting it
// to 1 once the new space has reached the cap keeps it there. Node documents flags changed
// after start as undefined behaviour: a flag that cannot be set leaves V8's defaults.
// Measured on the 2-core machine: no CPU cost on the flights dry run; set from the start
// instead (growth factor 1 at 1 MB), it cost 10-25% more CPU.

const CAP_BYTES = 16 * 1048576
const POLL_MS = 10

/** Starts watching the new space; returns the timer (unref'd: it never keeps the process alive). */
function capYoungGeneration (capBytes = CAP_BYTES) {
  const timer = setInterval(() => {
    const space = v8.getHeapSpaceStatistics().find(s => s.space_name === 'new_space')
    if (space !== undefined && space.space_size < capBytes) return
    clearInterval(timer)
    try {
      v8.setFlagsFromString('--semi-space-growth-factor=1')
    } catch {}
  }, POLL_MS)
  timer.unref()
  return timer
}

module.exports = { capYoungGeneration, CAP_BYTES }
