'use strict'

const { PipeloadError } = require('../errors')
const { WORKLOADS } = require('./workloads')
const { deletePrefixCluster } = require('../send/cluster')

// The benchmark's keys, all under its run prefix: deleted after each row and at the end
// (also after an error or Ctrl-C), with a safety TTL, and a redis-cli command to remove any
// left when that fails.

const SCAN_COUNT = 1000

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

async function cleanUp (ctx, failed) {
  try {
    if (ctx.cluster) await deletePrefixCluster(ctx.cluster, ctx.prefix, SCAN_COUNT)
    else await deletePrefix(ctx.control, ctx.prefix)
  } catch (err) {
    const e = new PipeloadError('PIPELOAD_CONNECTION_LOST',
      `could not delete the benchmark's keys (${err.message}); remove them with: ${cleanupCommand(ctx)}`, { prefix: ctx.prefix, cause: err.message })
    if (!failed) throw e
    failed.cleanupError = e
  }
}

module.exports = { SCAN_COUNT, deletePrefix, safetyTtlMs, cleanupCommand, addCleanupHint, cleanUp }
