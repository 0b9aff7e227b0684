'use strict'

const os = require('node:os')
const { formatOf } = require('../read/formats')
const { openHere } = require('./here')
const { openWorkerBatches } = require('./whole')
const { openParallelBatches, parallelEligible } = require('./chunks')

// The execution modes of an input's chain (lib/encode/chain.js), and which one an input gets:
// on this thread (./here.js), read whole by one worker (./whole.js), cut into chunks for n
// workers (./chunks.js), or a Parquet file's row groups over n workers (./row-groups.js). Each
// opens as { batches, close, resumeShape, useSlots?, fallback? }: encoded batches in input order,
// the same bytes whatever the mode.

// Workers `auto` starts at most. One worker parses, encodes, hashes and groups ~0.9M rows/s
// of the 5-column CSV for a 3-master cluster on the development machine (1M rows: 1.13 to
// 1.15 CPU-s over two workers), while this thread, routing to the cluster, spends ~0.5
// CPU-s per million rows, start-up included: past 3 or 4 workers it, not the parsing, is
// the limit, and each worker costs ~35 to 45 MB of RSS (3M rows, 3 masters: peak 338 MB
// with 4 workers, 493 MB with 8, against the 400 MB). docs/workers-and-shards.md "Parallel parsing".
const MAX_AUTO = 4
// Files smaller than this `auto` reads on this thread: starting a worker takes ~60-80 ms
// before its first chunk is parsed, about what this thread takes for the whole of 8 MiB
// (120k rows of the 5-column CSV: 0.23 s for a dry run against 0.15 s for one row).
const MIN_AUTO_BYTES = 8 * 1024 * 1024

/**
 * `workers: 'auto'` (the default): none on 2 cores or fewer (the workers would share them
 * with this thread), nor for one server or a cluster of one master (the server, not the
 * loader, is the limit there, and each worker costs RSS), nor for a file smaller than
 * MIN_AUTO_BYTES; for a cluster of several masters or a dry run, one per core left after
 * this thread, at most MAX_AUTO. `masters`: the cluster's, when known (before connecting it
 * is not: a cluster is then assumed to pay). `bytes`: the input's size, when known.
 */
function autoWorkers ({ cores = os.availableParallelism(), cluster, masters, dryRun, bytes }) {
  if (cores <= 2) return 0
  if (bytes !== undefined && bytes < MIN_AUTO_BYTES) return 0
  if (!dryRun && (!cluster || masters === 1)) return 0
  return Math.min(cores - 1, MAX_AUTO)
}

/** Can this input be encoded in a worker? Files and byte streams with templates can. */
function workerEligible (desc, o) {
  return desc.kind === 'bytes' && formatOf(desc.format).stream && !o.map
}

/**
 * Where an input's chain runs, given `n` parse workers: on this thread ('thread': workers 0,
 * records, map()), in one worker thread ('worker': workers 1, JSON documents, which cannot be
 * cut, and a --shard share of stdin, gzip or a URL), in n worker threads on chunks of the
 * input ('chunks': n ≥ 2), or, for a Parquet file, its row groups read and encoded by n
 * workers side by side ('row-groups', 1 too; a URL's are read on this thread, through its one
 * Range reader). Decided by the plan where it can be (lib/run/plan.js), else when the input
 * is opened.
 * @returns {{ mode: 'thread'|'worker'|'chunks'|'row-groups', workers: number }}
 */
function modeOf (input, o, n) {
  if (formatOf(input.format).groups && input.path != null && n > 0 && !o.map) return { mode: 'row-groups', workers: n }
  if (n === 0 || !workerEligible(input, o)) return { mode: 'thread', workers: 0 }
  if (n === 1 || !parallelEligible(input, o)) return { mode: 'worker', workers: 1 }
  return { mode: 'chunks', workers: n }
}

/**
 * Open the input's chain in its `mode` (modeOf's). `at`: `skip` (its first records, dropped:
 * --resume), `before` (records of the run before its first: {$n}), `pool` (the run's parse
 * workers, kept from one input to the next), `cluster` (whether the sink is one, when known:
 * the workers hash the slots from the first batch).
 */
async function openMode (input, o, { mode, skip = 0, before = skip, cluster, pool = null }) {
  const n = mode.workers
  const slots = cluster ?? o.cluster === true
  if (mode.mode === 'row-groups') {
    const { openParquetParallel } = require('./row-groups') // a CSV run loads no Parquet code
    return openParquetParallel(input, o, { n, skip, before, slots, pool })
  }
  if (mode.mode === 'thread') return openHere(input, o, { skip, before })
  if (mode.mode === 'worker') return openWorkerBatches(input, o, { skip, before, pool })
  return openParallelBatches(input, o, { n, skip, before, slots, pool })
}

module.exports = { modeOf, openMode, autoWorkers, workerEligible }
