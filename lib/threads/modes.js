'use strict'

const os = require('node:os')
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
  return desc.kind === 'bytes' && desc.format !== 'parquet' && !o.map
}

/**
 * Open the input's chain where it runs: on this thread (workers 0, records, map()), in one
 * worker thread (workers 1, JSON documents, which cannot be cut, and a --shard share of stdin,
 * gzip or a URL), or in n worker threads on chunks of the input (n ≥ 2) or on a Parquet
 * file's row groups (n ≥ 1): the workers of the run's `pool`, kept from one input to the next.
 * `at`: `skip` (its first records, dropped: --resume), `before` (records of the run before its
 * first: {$n}), `pool`, and, when already known, `cluster` (whether the sink is one) and its
 * `masters` (workers 'auto'). Resolves with the mode's source and `workers` (0, 1 or n).
 */
async function openMode (input, o, { skip = 0, before = skip, cluster, masters, pool = null }) {
  const n = o.workers === 'auto' ? autoWorkers({ cluster, masters, dryRun: Boolean(o.dryRun), bytes: input.size }) : o.workers
  const slots = cluster ?? o.cluster === true
  // Parquet: n workers (1 too) read and encode a file's row groups side by side; a URL's are
  // read on this thread, through its one Range reader.
  if (input.format === 'parquet' && input.path != null && n > 0 && !o.map) {
    const { openParquetParallel } = require('./row-groups') // a CSV run loads no Parquet code
    return { ...await openParquetParallel(input, o, { n, skip, before, slots, pool }), workers: n }
  }
  if (n === 0 || !workerEligible(input, o)) return { ...await openHere(input, o, { skip, before }), workers: 0 }
  if (n === 1 || !parallelEligible(input, o)) return { ...await openWorkerBatches(input, o, { skip, before, pool }), workers: 1 }
  return { ...await openParallelBatches(input, o, { n, skip, before, slots, pool }), workers: n }
}

module.exports = { openMode, autoWorkers, workerEligible }
