'use strict'

const { PipeloadError } = require('../errors')
const { encodeCommand } = require('../encode/resp')
const { bounded } = require('./connection')

// Which acknowledged writes a Sentinel failover can still take away, and which it took.
//
// Replication is asynchronous, and a promoted replica has only what it had received when it
// was promoted; the old master, until the sentinel demotes it, goes on acknowledging writes,
// which it drops when it resyncs from the new master. So with Sentinel an acknowledgement is
// not the end of a batch: each batch is followed by INFO replication on the same connection,
// whose master_repl_offset (the master's position in its replication stream right after the
// batch ran) becomes the batch's `tag`, and the batch is kept (its bytes too) until every
// replica the master has reported online has acknowledged that offset. Only then is it
// confirmed: counted, checkpointed. A replica that leaves the master (promoted, or down) stays
// counted at its last offset for `forgetMs`, so the old master's writes after a promotion are
// never confirmed by the replicas that remain.
//
// After a reconnect, the new master's INFO replication says what it shares with the old one:
// the same replication ID (no failover), or the old ID as master_replid2 with
// second_repl_offset (a promotion: the history up to that offset minus one is its own). Kept
// batches tagged at or below it are confirmed; the others are sent again, in order, before
// the batches that were awaiting replies. Tags are exact batch boundaries (INFO runs right
// after a batch's last command), so every batch re-sent is one the new master lacks, but for
// the one the promotion fell inside of: part of it may be there, and re-sending it may run
// that part twice (a possible duplicate, as for any re-send).

const INFO = encodeCommand(['INFO', 'replication'])
const EMPTY = Buffer.alloc(0)

/** INFO replication's text → { role, replid, replid2, offset, secondOffset, replicas: [{ id, state, offset }] }, or null. */
function parseReplication (text) {
  if (typeof text !== 'string' && !Buffer.isBuffer(text)) return null
  const fields = new Map()
  const replicas = []
  for (const line of String(text).split('\n')) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon)
    const value = line.slice(colon + 1).trim()
    if (/^slave\d+$/.test(name)) {
      const kv = Object.fromEntries(value.split(',').map(p => p.split('=')))
      const offset = Number(kv.offset)
      if (Number.isSafeInteger(offset)) replicas.push({ id: `${kv.ip}:${kv.port}`, state: kv.state, offset })
    } else fields.set(name, value)
  }
  const offset = Number(fields.get('master_repl_offset'))
  if (!fields.has('role') || !Number.isSafeInteger(offset)) return null
  return {
    role: fields.get('role'),
    replid: fields.get('master_replid') ?? null,
    replid2: fields.get('master_replid2') ?? null,
    offset,
    secondOffset: Number(fields.get('second_repl_offset') ?? -1),
    replicas
  }
}

/**
 * What a failover kept of the kept batches (`held`, oldest first, each with `from`: the offset
 * before it, and `tag`: after it) and what it lost: { same } (no failover: keep waiting), or
 * { confirm: how many of the first are on the new master, partial: whether the first lost one
 * may be there in part, lostConfirmed: whether batches already confirmed are gone too }.
 */
function failoverPlan (held, was, info) {
  if (info.replid === was.replid) return { same: true }
  if (was.replid !== null && info.replid2 === was.replid && info.secondOffset > 0) {
    const safe = info.secondOffset - 1
    let confirm = 0
    while (confirm < held.length && held[confirm].tag <= safe) confirm++
    const first = held[confirm]
    return { same: false, known: true, confirm, partial: first !== undefined && first.from < safe, lostConfirmed: was.confirmedTag > safe }
  }
  // Another history (two failovers in a row, a server that lost its data): nothing kept can
  // be shown to be there.
  return { same: false, known: false, confirm: 0, partial: held.length > 0, lostConfirmed: false }
}

/** The master's replication as the batches' replies report it, and what its replicas hold. */
class Replicas {
  /** @param {number} forgetMs how long a replica that left still counts */
  constructor (forgetMs) {
    this.forgetMs = forgetMs
    this.replid = null
    this.offset = 0 // the master's offset after the last batch (or probe) answered
    this.confirmedTag = -1 // the highest tag confirmed
    this.known = new Map() // replica → { offset, at }
    this.online = 0
    this.waitRefused = false
  }

  /** A new history (another master): its replicas are others. What was confirmed stays: a promoted replica goes on with its offsets. */
  reset (info) {
    this.replid = info.replid
    this.offset = info.offset
    this.known.clear()
    this.online = 0
  }

  /** An INFO replication of the master: the offset every replica that counts has. */
  update (info, now) {
    if (info.replid !== this.replid) this.reset(info)
    this.offset = info.offset
    let online = 0
    for (const r of info.replicas) {
      if (r.state !== 'online') continue
      online++
      this.known.set(r.id, { offset: r.offset, at: now })
    }
    this.online = online
    let min = info.offset
    for (const [id, r] of this.known) {
      if (r.at !== now && now - r.at > this.forgetMs) this.known.delete(id)
      else if (r.offset < min) min = r.offset
    }
    return min
  }

  /** What follows a batch: INFO, after a WAIT (`ms` > 0) that asks the replicas where they are. */
  probe (ms) {
    if (ms > 0 && this.online > 0 && !this.waitRefused) return { extra: 2, buf: Buffer.from(encodeCommand(['WAIT', String(this.online), String(ms)]) + INFO) }
    return { extra: 1, buf: Buffer.from(INFO) }
  }
}

/**
 * Ask a connection (before the Pipe takes it) for INFO replication, like a setup step:
 * within `ms` (the connect timeout, `said` as given), and an abort of `signal` ends it at once.
 */
function askReplication (conn, ms, signal, said) {
  const quiet = () => { conn.onReply = conn.onReplyError = conn.onClose = () => {} }
  return bounded(() => new Promise((resolve, reject) => {
    conn.onReply = text => {
      quiet()
      const info = parseReplication(text)
      if (info) resolve(info)
      else reject(infoRefused(conn.target, 'an answer that is not INFO replication'))
    }
    conn.onReplyError = err => { quiet(); reject(infoRefused(conn.target, err.message)) }
    conn.onClose = err => { quiet(); reject(err) }
    conn.write(INFO)
  }), { ms, said, signal, target: conn.target, stage: 'while asking INFO replication', cancel: quiet })
}

/** A reconnected data connection's INFO replication; a server that is not a master (yet) is another try. */
async function masterInfo (conn, ms, signal) {
  let info
  try {
    info = await askReplication(conn, ms, signal)
  } catch (err) {
    conn.close()
    throw err
  }
  if (info.role === 'master') return info
  conn.close()
  throw new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${conn.target} is not a master (INFO replication: role:${info.role})`, { target: conn.target })
}

/** Kept batches the replicas of `target` have confirmed none of for `ms`. */
function replicasStalled (target, batches, ms) {
  return new PipeloadError('PIPELOAD_TIMEOUT',
    `the replicas of Redis at ${target} confirmed none of the last ${batches === 1 ? 'batch' : `${batches} batches`} it answered for ${ms >= 10000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms)} ms`} (a replica connected but not catching up): they are not counted as loaded; with --checkpoint, --resume goes on from what the replicas hold`,
    { target })
}

function infoRefused (target, why) {
  return new PipeloadError('PIPELOAD_CONNECTION_FAILED', `Redis at ${target} answered INFO replication with ${why}: with Sentinel, pipeload needs it to tell which acknowledged writes a failover may lose (the user needs +info)`, { target, reply: why })
}

module.exports = { parseReplication, failoverPlan, Replicas, askReplication, masterInfo, infoRefused, replicasStalled, EMPTY }
