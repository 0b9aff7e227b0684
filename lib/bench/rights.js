'use strict'

const { PipeloadError } = require('../errors')
const { openData, bounded } = require('../send/connection')
const { dryRun } = require('../send/acl-dryrun')
const { encodeCommand } = require('../encode/resp')

// Before bench writes anything: may this user run every command the run needs, on a key
// under the run's prefix? Asked with ACL DRYRUN (Redis 7+, Valkey) when this user may run
// it; else by a probe that cannot change anything: MULTI, the commands, DISCARD on a data
// connection (a command refused by ACL is refused when it is queued, and nothing queued
// runs). CLIENT is not asked for: without it the memory columns are n/a.

/** The commands a run needs, each with an example key under `prefix`. */
function neededCommands (o, prefix, ttlMs) {
  const k = prefix + 'rights-check'
  const ttl = String(ttlMs)
  const byWorkload = {
    incr: [['SET', k, '0', 'PX', ttl], ['INCR', k], ['GET', k]],
    set: [['SET', k, 'v', 'PX', ttl], ['GET', k]],
    hset: [['HSET', k, 'f', 'v'], ['HGET', k, 'f']],
    ping: [['PING']],
    // A file's templates are the import's: a refused one fails its records, which the row reports.
    file: []
  }
  // A synthetic row's keys are deleted by name; a file's row prefix is swept with SCAN.
  const scan = o.workload === 'file' ? [['SCAN', '0', 'MATCH', prefix + '*', 'COUNT', '1']] : []
  return [...byWorkload[o.workload], ...scan, ['UNLINK', k]]
}

/** The replies to `commands` written at once on `conn`, errors as { error }. */
function replies (conn, commands, bound) {
  return bounded(() => new Promise(resolve => {
    const out = []
    const add = r => { out.push(r); if (out.length === commands.length) resolve(out) }
    conn.onReply = r => add({ reply: r })
    conn.onReplyError = e => add({ error: String(e.message) })
    conn.onClose = () => resolve(out)
    conn.write(Buffer.concat(commands.map(c => Buffer.from(encodeCommand(c)))))
  }), { ...bound, target: conn.target, stage: 'while checking the ACL rights (MULTI … DISCARD)', cancel: () => conn.close() })
}

/** The refused commands by MULTI … DISCARD on a fresh data connection; null when MULTI itself is refused. */
async function probe (via, commands, bound) {
  const conn = await openData(via, { timeout: bound.ms, signal: bound.signal, said: bound.said })
  try {
    // MULTI alone first: were it refused, the commands after it would run for real.
    const [multi] = await replies(conn, [['MULTI']], bound)
    if (!multi || multi.error) return null
    const queued = await replies(conn, [...commands, ['DISCARD']], bound)
    return commands.map((args, i) => ({ args, r: queued[i] }))
      .filter(c => c.r && c.r.error && /NOPERM|unknown command/i.test(c.r.error))
      .map(c => ({ command: c.args[0], reason: c.r.error }))
  } finally {
    conn.end()
  }
}

/**
 * Throws PIPELOAD_PERMISSION_DENIED naming every command refused; resolves with how it
 * checked: 'acl-dryrun', 'multi-probe', or 'not-checked' (neither was permitted).
 */
async function checkRights (ctx, ttlMs, bound) {
  const commands = neededCommands(ctx.o, ctx.prefix, ttlMs)
  let how = 'acl-dryrun'
  let refused = await dryRun(ctx.control, commands, bound)
  // A cluster node would redirect keys of other slots: the probe is for one server.
  if (refused === null && !ctx.cluster) { how = 'multi-probe'; refused = await probe(ctx.via, commands, bound) }
  if (refused === null) return 'not-checked'
  if (refused.length) {
    const names = [...new Set(refused.map(r => r.command.toUpperCase()))]
    const user = ctx.control.options?.username || 'default'
    throw new PipeloadError('PIPELOAD_PERMISSION_DENIED',
      `the ACL user "${user}" may not run ${names.join(', ')} on ${ctx.prefix}* (${refused[0].reason}); ` +
      `bench needs ${[...new Set(commands.map(c => c[0]))].join(', ')} on keys matching pipeload:bench:*; nothing was written`,
      { commands: names, user, checkedWith: how })
  }
  return how
}

module.exports = { checkRights, neededCommands }
