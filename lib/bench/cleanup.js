'use strict'

const { PipeloadError } = require('../errors')
const { WORKLOADS } = require('./workloads')
const { deletePrefixCluster } = require('../send/cluster')
const { slotOf } = require('../encode/slots')

// The benchmark's keys, all under its run prefix: deleted after each row and at the end
// (also after an error or Ctrl-C), with a safety TTL, and a redis-cli command to remove any
// left when that fails. A synthetic workload names the keys it wrote, and they are deleted
// by name: UNLINK in batches, pipelined (in a cluster one UNLINK per hash slot), never a
// SCAN of the whole keyspace (3M keys: 3,000 SCAN calls a row). A file's keys come from its
// records: its row prefix is swept with SCAN MATCH + UNLINK.

const SCAN_COUNT = 1000
// Keys per UNLINK, and UNLINKs in flight at once.
const UNLINK_KEYS = 1000
const UNLINKS_IN_FLIGHT = 16
// A cluster: keys grouped by slot this many at a time (one UNLINK per slot of a group).
const CLUSTER_GROUP = 100000

/** SCAN MATCH prefix* and UNLINK what it finds; resolves with the number of keys removed. */
async function deletePrefix (control, prefix) {
  let cursor = '0'
  let removed = 0
  do {
    const [next, keys] = await control.scan(cursor, 'MATCH', prefix + '*', 'COUNT', SCAN_COUNT)
    cursor = next
    if (keys.length) removed += await control.unlink(...keys)
  } while (cursor !== '0')
  return removed
}

/** UNLINK each batch of `keys` (an iterable), UNLINKS_IN_FLIGHT at a time; resolves with the number removed. */
async function unlinkBatches (client, batches) {
  let removed = 0
  let inFlight = []
  for (const batch of batches) {
    inFlight.push(client.unlink(...batch))
    if (inFlight.length < UNLINKS_IN_FLIGHT) continue
    for (const n of await Promise.all(inFlight)) removed += n
    inFlight = []
  }
  for (const n of await Promise.all(inFlight)) removed += n
  return removed
}

/** `keys` in arrays of at most `size`. */
function * chunks (keys, size) {
  let chunk = []
  for (const k of keys) {
    chunk.push(k)
    if (chunk.length === size) { yield chunk; chunk = [] }
  }
  if (chunk.length) yield chunk
}

/** In a cluster a multi-key UNLINK must stay in one slot: each group of keys split by slot. */
function * bySlot (keys) {
  for (const group of chunks(keys, CLUSTER_GROUP)) {
    const slots = new Map()
    for (const k of group) {
      const s = slotOf(k)
      if (!slots.has(s)) slots.set(s, [])
      slots.get(s).push(k)
    }
    for (const list of slots.values()) yield * chunks(list, UNLINK_KEYS)
  }
}

/**
 * Delete `keys` by name: UNLINK in batches (ioredis routes each by its slot in a cluster).
 * `client` is the control client, or with `cluster` true an ioredis Cluster. Resolves with
 * the number of keys removed.
 */
function deleteKeys (client, keys, cluster = false) {
  return unlinkBatches(client, cluster ? bySlot(keys) : chunks(keys, UNLINK_KEYS))
}

/**
 * The safety TTL of every key bench writes, so a bench killed mid-row leaves nothing for
 * ever: an hour, or ten times --max-row-time when longer; a day with no cap.
 */
function safetyTtlMs (o) {
  return o.maxRowTimeMs > 0 ? Math.max(3600000, 10 * o.maxRowTimeMs) : 86400000
}

/** The redis-cli command that removes the run's keys (the password from $REDISCLI_AUTH, never printed). */
function cleanupCommand (ctx) {
  const c = ctx.control.options || {}
  const cli = ['redis-cli']
  if (c.path) cli.push('-s', c.path)
  else cli.push('-h', c.host || '127.0.0.1', '-p', String(c.port || 6379))
  if (c.db) cli.push('-n', String(c.db))
  if (c.username) cli.push('--user', c.username)
  if (c.tls) cli.push('--tls')
  if (ctx.cluster) cli.push('-c')
  const base = cli.join(' ')
  return `${base} --scan --pattern '${ctx.prefix}*' | xargs -r ${base} unlink`
}

/** On any failure the message says whether the run's keys were deleted and how to remove them. */
function addCleanupHint (err, ctx) {
  const done = err.cleanupError ? `its keys could not be deleted (${err.cleanupError.cause})` : 'its keys were deleted'
  const expire = WORKLOADS[ctx.o.workload]?.expires ? ` (they expire within ${Math.round(ctx.ttlMs / 60000)} min)` : ''
  err.message += `\n${done}; to remove any left${expire}: ${cleanupCommand(ctx)}`
  err.cleanup = cleanupCommand(ctx)
}

/**
 * Delete what the row in progress may have written (ctx.pending: its workload, or the row
 * prefix of a file's row), once; resolves with the number of keys removed.
 */
async function deletePending (ctx) {
  const pending = ctx.pending
  if (!pending) return 0
  let removed
  if (pending.wl) removed = await deleteKeys(ctx.cluster || ctx.control, pending.wl.keys(), !!ctx.cluster)
  else if (ctx.cluster) removed = await deletePrefixCluster(ctx.cluster, pending.prefix, SCAN_COUNT)
  else removed = await deletePrefix(ctx.control, pending.prefix)
  ctx.pending = null
  return removed
}

/** At the end, also after an error or Ctrl-C: the keys of a row not yet deleted. */
async function cleanUp (ctx, failed) {
  try {
    await deletePending(ctx)
  } catch (err) {
    const e = new PipeloadError('PIPELOAD_CONNECTION_LOST',
      `could not delete the benchmark's keys (${err.message}); remove them with: ${cleanupCommand(ctx)}`, { prefix: ctx.prefix, cause: err.message })
    if (!failed) throw e
    failed.cleanupError = e
  }
}

module.exports = { SCAN_COUNT, deletePrefix, deleteKeys, deletePending, safetyTtlMs, cleanupCommand, addCleanupHint, cleanUp }
