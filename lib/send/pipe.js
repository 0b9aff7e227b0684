'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError } = require('../errors')
const { Reservoir, sendStats, countReconnect } = require('./stats')
const { SentBatch } = require('./sent-batch')
const { positionAt } = require('../read/row')
const { refusedForGood } = require('./connection')
const { notReady } = require('./not-ready')
const { Connection, abortedError } = require('./pipeline')
const { Replicas, parseReplication, failoverPlan, masterInfo, infoRefused, replicasStalled, EMPTY } = require('./replication')

// The sink for one server: each encoded batch goes with one socket write through the one
// pipelined Connection (pipeline.js), which keeps at most `window` batches awaiting
// replies. send() waits only when the window is full, the socket asked for `drain`, or the
// connection is being re-established. That is the backpressure that bounds both the
// loader's memory and the server's queued replies (window x batchSize).
//
// Each batch remembers, per record, the command count at its end and its source line, so
// an error reply is attributed to its record without a per-command object; and it keeps
// its bytes until acknowledged: when the connection drops, the server stops answering
// (`timeout`) or answers "not now" (LOADING: not-ready.js), the Connection reconnects with
// backoff (for up to `retryTimeout`) and re-sends every batch not fully acknowledged, in
// order (Batch#again). Delivery is therefore at-least-once.
//
// With Sentinel (`replicated`), an answered batch is kept until its writes are on every
// replica, so that a failover cannot take away what was counted: see ./replication.js.

// After an abort (Ctrl-C) the batches in flight get this long without a reply, at most,
// and no reconnect: the first Ctrl-C must end a run on a server that went silent promptly.
const ABORT_GRACE = 1000
// With Sentinel: at most HELD_PER_WINDOW x window answered batches kept awaiting their
// replicas (then send() waits); once a window of them is kept, a batch's INFO comes after a
// WAIT of WAIT_MS, which makes the master ask its replicas where they are at once, not at
// their next report a second later. With nothing in flight, a probe (WAIT for PROBE_WAIT_MS,
// INFO) goes while any is kept, PROBE_MS apart while they confirm nothing.
const HELD_PER_WINDOW = 4
const WAIT_MS = 1
const PROBE_WAIT_MS = 100
const PROBE_MS = 50
const FORGET_MIN_MS = 60000

class Batch extends SentBatch {
  constructor (encoded) {
    super(encoded)
    this.replies = 0
    this.seen = 0 // replies seen before a re-send: their errors are already counted
    this.failedUpTo = -1 // index of the last record counted as failed
    this.failed = 0 // records of this batch failed by an error reply
    this.sentAt = 0
    this.due = this.cmds // replies awaited: with Sentinel, INFO's (and WAIT's) too
    this.from = 0 // with Sentinel: the master's replication offset before the batch ran,
    this.tag = 0 // and after it
    this.probe = false // no commands of ours: a WAIT and INFO alone
    this.absent = false // sent again after a failover, known to be missing on the new master
  }

  /**
   * After a reconnect (Connection#recover): the whole batch again, since the server may have
   * run any of it, answered or not; counted as re-sent unless it is a probe or one the new
   * master is known to lack whole (as a cluster's MOVED, it ran nothing there).
   */
  again (tally) {
    if (!this.probe && !this.absent) {
      tally.commands += this.cmds
      tally.batches++
    }
    this.absent = false
    this.seen = Math.max(this.seen, this.replies)
    return this
  }

  /** Records of a batch without commands, acknowledged with this one (Pipe#sendEmpty). */
  merge (encoded) {
    this.records += encoded.records
    this.skipped += encoded.skipped || 0
    for (let i = 0; i < encoded.ends.length; i++) { // no commands: each ends where this one ends
      this.ends.push(this.cmds)
      this.lines.push(encoded.lines[i])
      this.offsets?.push(encoded.offsets?.[i] ?? null)
      if (this.marks || encoded.marks) (this.marks ??= new Array(this.lines.length - 1).fill(null)).push(encoded.marks?.[i] ?? null)
      this.raws?.push(encoded.raws?.[i])
    }
  }
}

class Pipe {
  /**
   * @param {object} o
   * @param {import('./connection').DataConnection} o.conn
   * @param {(ms: number) => Promise<import('./connection').DataConnection>} [o.reconnect] a new connection; without it a lost connection is fatal
   * @param {number} o.window batches awaiting replies at most
   * @param {number} [o.timeout] ms without a reply, while replies are due, before the connection counts as lost
   * @param {number} [o.retryTimeout] ms to keep trying to reconnect
   * @param {string} o.file input name for failures
   * @param {(failure: object, batch: Batch, record: number) => void} o.onFailure called once per failed record, with its batch and its index there
   * @param {(batch: Batch) => void} [o.onAck] called for each fully acknowledged batch, in order
   * @param {(event: object) => void} [o.onReconnect] called when a lost connection is back
   * @param {AbortSignal} [o.signal] once aborted: no reconnect, replies awaited ABORT_GRACE ms at most
   * @param {object} [o.replicated] with Sentinel: the master's INFO replication when connected (./replication.js)
   * @param {number} [o.connectTimeout] with Sentinel: how long a reconnected master may take to answer INFO replication
   * @param {number} [o.forgetMs] with Sentinel: how long a replica that left still counts (twice that: how long replicas may confirm nothing)
   */
  constructor ({ conn, reconnect, window, timeout = 0, retryTimeout = 0, said, file, onFailure, onAck, onReconnect, signal, replicated = null, connectTimeout = 10000, forgetMs = Math.max(retryTimeout, FORGET_MIN_MS), written = null }) {
    this.file = file
    this.written = written // an error reply that means the command's data is there already (a restore's: lib/encode/restore.js)
    this.window = window
    this.onFailure = onFailure
    this.onAck = onAck || (() => {})
    this.onReconnect = onReconnect || (() => {})
    this.fatal = null
    this.stats = sendStats()
    this.rtt = new Reservoir()
    // Answered, awaiting their replicas (Sentinel only). A replica that left the master counts
    // at its last offset for the retry time, and a minute at least: until a sentinel demotes
    // it, an old master takes writes its promoted replica will never have.
    this.replicas = replicated ? new Replicas(forgetMs) : null
    this.connectTimeout = connectTimeout
    if (replicated) this.replicas.update(replicated, performance.now()) // its replicas count from the start
    this.held = []
    this.heldSince = 0 // when the replicas last confirmed a kept batch (or one was first kept)
    this.heldMax = window * HELD_PER_WINDOW
    this.probeTimer = null
    this.info = null // with Sentinel: the INFO replication of the master a reconnect reached
    this.lost = 0 // with Sentinel: batches a reconnect found the new master lacks
    this.signal = signal
    this.link = new Connection({ owner: this, conn, connect: reconnect, window, timeout, retryTimeout, said })
    if (signal) {
      this.onAbort = () => this.aborted()
      if (signal.aborted) this.aborted()
      else signal.addEventListener('abort', this.onAbort, { once: true })
    }
  }

  /** The data connection now (after a reconnect, not the first one). */
  get conn () {
    return this.link.conn
  }

  get inflight () {
    return this.link.inflight
  }

  get target () {
    return this.link.target
  }

  /** The run was aborted: what is in flight gets a short grace, a reconnect in progress ends now. */
  aborted () {
    this.link.abort(ABORT_GRACE)
    this.link.wake() // finish() waits for kept batches no longer
  }

  connectAborted (link) {
    return abortedError(link.target)
  }

  /**
   * Resolves once a batch can be sent without waiting (the window has room): the run looks at
   * its error policy after this, so an error reply that comes meanwhile stops it before the
   * next batch goes (--on-error abort), not after.
   */
  room () {
    // Kept batches hold the sender back, but not an aborted run: it stops at this batch.
    return this.link.waitFor(() => this.link.hasRoom() && (this.held.length < this.heldMax || Boolean(this.signal?.aborted)))
  }

  /** Send one encoded batch ({ buf, cmds, ends, lines, records }); resolves once written. */
  async send (encoded) {
    if (encoded.cmds === 0) return this.sendEmpty(encoded)
    await this.room()
    const b = this.batchOf(encoded)
    this.stats.batches++
    this.stats.commands += b.cmds
    this.link.push(b)
  }

  /** What the window keeps of an encoded batch (lanes.js adds the batch it is a part of). */
  batchOf (encoded) {
    return new Batch(encoded)
  }

  /**
   * A batch without commands: records that failed to map, or that mapped to none (map()
   * returned []), which count as loaded. Acknowledged in turn, after what was sent before:
   * as part of the last batch in flight, or, when that one is of another input (a batch
   * never spans two), once nothing is in flight.
   */
  async sendEmpty (encoded) {
    let last = this.inflight.at(-1)
    if (!last || last.probe) last = this.held.at(-1) // a probe goes only when nothing else is in flight
    if (last && last.fileIndex !== encoded.fileIndex && encoded.records) {
      await this.link.waitFor(() => this.inflight.length === 0 && this.held.length === 0 && !this.link.connecting)
      last = undefined
    }
    if (last) {
      last.merge(encoded)
    } else if (encoded.records) {
      this.stats.ackedRecords += encoded.ends.length
      this.onAck(new Batch(encoded))
    }
  }

  /** With Sentinel: INFO replication (after a WAIT of `waitMs`) written after the batch. */
  tail (link, b, waitMs = this.held.length >= this.window ? WAIT_MS : 0) {
    if (!this.replicas) return null
    const probe = this.replicas.probe(waitMs)
    b.due = b.cmds + probe.extra
    return probe.buf
  }

  /** Wait for every reply (with Sentinel: and every replica), then stop watching the connection. */
  async finish () {
    try {
      await this.link.waitFor(() => this.inflight.length === 0 && !this.link.connecting && (this.held.length === 0 || Boolean(this.signal?.aborted)))
    } finally {
      this.close()
    }
  }

  close () {
    this.link.close()
    clearTimeout(this.probeTimer)
    this.signal?.removeEventListener('abort', this.onAbort)
  }

  reply (link, b, r) {
    if (++b.replies === b.due) this.ack(b, r)
  }

  replyError (link, b, err) {
    // The server is not ready (loading its data after a restart, busy with a script, a
    // replica without its master): not the record's fault. Reconnect and re-send later.
    if (notReady(err.message) && link.connect) {
      return link.conn.close(new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${link.target} is not ready: ${err.message}`, { target: link.target, reply: err.message }))
    }
    if (b.replies >= b.cmds) return this.probeRefused(b, err)
    if (this.written !== null && this.written.test(err.message)) return this.reply(link, b)
    if (b.replies >= b.seen) {
      this.stats.errorReplies++
      const rec = b.recordOf(b.replies)
      if (rec > b.failedUpTo) {
        b.failedUpTo = rec
        b.failed++
        this.stats.failedRecords++
        const message = String(err.message)
        this.onFailure({ ...positionAt(b, rec, b.file ?? this.file), code: message.split(' ')[0], message, source: 'reply', raw: b.raws?.[rec] }, b, rec)
      }
    }
    if (++b.replies === b.due) this.ack(b)
  }

  /** WAIT refused (an ACL without +wait): INFO alone from now on. INFO refused: we cannot go on. */
  probeRefused (b, err) {
    if (b.due - b.replies === 2) {
      this.replicas.waitRefused = true
      b.replies++
      return
    }
    this.fail(infoRefused(this.target, err.message))
  }

  ack (b, reply) {
    if (this.replicas) return this.answered(b, reply)
    this.link.shift()
    this.done(b)
    this.link.wake()
  }

  /** A batch counts as acknowledged: loaded, checkpointed. */
  done (b) {
    this.stats.acked += b.cmds
    this.stats.ackedRecords += b.ends.length
    if (b.release) b.release()
    b.buf = null
    this.onAck(b)
  }

  /**
   * With Sentinel: a batch and its INFO replication answered. Kept until its replicas have
   * it; a master demoted under us (a server that keeps its connections) is left, as for READONLY.
   */
  answered (b, reply) {
    const target = this.target
    const info = parseReplication(reply)
    if (!info) return this.fail(infoRefused(target, 'an answer that is not INFO replication'))
    if (info.role !== 'master') {
      return this.conn.close(new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${target} is a replica now (INFO replication: role:${info.role}): asking Sentinel for the master`, { target }))
    }
    this.link.shift(!b.probe)
    b.from = this.replicas.offset
    b.tag = info.offset
    const fresh = this.held.length === 0
    if (!b.probe) this.held.push(b)
    const before = this.held.length
    const now = performance.now()
    this.confirmUpTo(this.replicas.update(info, now))
    // Replicas that stay connected and never catch up would keep the load waiting for ever.
    if (fresh || this.held.length < before) this.heldSince = now
    else if (this.held.length && now - this.heldSince > 2 * this.replicas.forgetMs) return this.fail(replicasStalled(target, this.held.length, now - this.heldSince))
    this.link.wake()
    this.scheduleProbe(b.probe && this.held.length === before ? PROBE_MS : 0)
  }

  confirmUpTo (offset) {
    while (this.held.length && this.held[0].tag <= offset) {
      const b = this.held.shift()
      this.replicas.confirmedTag = b.tag
      this.done(b)
    }
  }

  /** Nothing in flight, batches kept: ask (WAIT, INFO) where the replicas are, after `delay` ms. */
  scheduleProbe (delay) {
    if (this.probeTimer || !this.idleWithHeld()) return
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null
      if (!this.idleWithHeld() || this.conn.closed) return
      const b = new Batch({ buf: EMPTY, cmds: 0, ends: [], lines: [], records: 0 })
      b.probe = true
      this.inflight.push(b)
      this.link.activity.touch()
      this.link.write(b, PROBE_WAIT_MS)
    }, delay)
  }

  idleWithHeld () {
    return this.held.length > 0 && this.inflight.length === 0 && !this.link.connecting && !this.fatal && !this.link.closing
  }

  fail (err) {
    this.fatal = err
    this.close()
    this.link.wake()
  }

  /** Something still to answer or confirm: a reconnect is worth finishing. */
  pending () {
    return this.inflight.length > 0 || this.held.length > 0
  }

  /** With Sentinel, a reconnect reached a master: what it shares with the one we wrote to. */
  async opened (conn, left) {
    this.info = this.replicas ? await masterInfo(conn, Math.max(1, Math.min(left(), this.connectTimeout)), this.signal) : null
  }

  /** With Sentinel, reconnected: the kept batches the new master lacks go back in the window (afterFailover). */
  reconnecting (link, cause) {
    this.lost = this.info ? this.afterFailover(this.info, cause) : 0
    return this.lost >= 0
  }

  reconnected (link, tally) {
    const event = countReconnect(this.stats, tally)
    this.onReconnect(this.info ? { ...event, lostBatches: this.lost } : event)
  }

  /** A reconnect that ends the run: aborted, or refused as it will be again. */
  refusal (link, err, cause) {
    if (err.code === 'PIPELOAD_ABORTED') return abortedError(link.target, cause)
    // A refused password (changed on restart, ACL user deleted) will be refused again, and
    // so will a SELECT the server answers with an error (fewer databases after a restart).
    if (refusedForGood(err)) return new PipeloadError(err.code, `${cause.message}; reconnecting: ${err.message}`, { target: err.target ?? link.target, cause })
    return null
  }

  /**
   * With Sentinel, reconnected: the batches kept for their replicas that the master reached
   * has are confirmed, the others go back in front of those in flight, to be sent again
   * (their error replies are counted already). Returns how many went back, or -1 when the
   * new master lacks batches already confirmed: then nothing can be made whole, and the run fails.
   */
  afterFailover (info, cause) {
    const plan = failoverPlan(this.held, this.replicas, info)
    if (plan.same) {
      this.replicas.offset = info.offset
      return 0
    }
    if (plan.lostConfirmed) {
      this.fail(new PipeloadError('PIPELOAD_CONNECTION_LOST',
        `${cause.message}; the master is now ${this.target}, which lacks writes the replicas had confirmed before (the replica promoted had left the old master longer than pipeload waits for one: --retry-timeout, a minute at least): records counted as loaded may be lost; load again from the start`,
        { target: this.target, cause }))
      return -1
    }
    for (const b of this.held.splice(0, plan.confirm)) {
      this.replicas.confirmedTag = b.tag
      this.done(b)
    }
    const lost = this.held.splice(0)
    for (const [i, b] of lost.entries()) {
      b.seen = b.cmds
      b.replies = 0
      // Wholly past what the new master has: sending it again cannot run anything twice.
      b.absent = plan.known && !(i === 0 && plan.partial)
    }
    this.inflight.unshift(...lost)
    this.replicas.reset(info)
    // Offsets of another history cannot be compared with the new master's.
    if (!plan.known) this.replicas.confirmedTag = -1
    return lost.filter(b => b.absent).length
  }
}

module.exports = { Pipe, Batch }
