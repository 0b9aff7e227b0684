'use strict'

const v8 = require('node:v8')

// The old generation of `pipeload export --format csv|parquet`, let grow to twice what a
// full collection left alive (V8's own factor is up to 4 when collections are fast). Those
// exports hold rows until a key is whole and a row group is full: enough time for the rows,
// and the garbage of encoding them, to be promoted to the old generation, where they wait
// for the next full collection. With V8's factor the old generation grew to ~60 MB of
// garbage over ~15 MB alive: a Parquet export of 1M hashes of 5 fields peaked at 158-164 MB
// RSS; with 100% at 118-121 MB, for ~7% more CPU (50%: 100-107 MB, for ~25% more).
// V8 reads the flag each time it sets the next limit, so setting it once running works (the
// heap's sizes, --max-old-space-size and --max-semi-space-size, are fixed at start; a hard
// cap would also fail a big hash that --max-record-size allows). The CLI only: a library
// caller's process keeps its own settings. Node documents flags changed after start as
// undefined behaviour: a flag that cannot be set leaves V8's defaults.

const GROWING_PERCENT = 100

function limitHeapGrowth (percent = GROWING_PERCENT) {
  try {
    v8.setFlagsFromString(`--heap-growing-percent=${percent}`)
  } catch {}
}

module.exports = { limitHeapGrowth, GROWING_PERCENT }
