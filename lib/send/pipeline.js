'use strict'

const { performance } = require('node:perf_hooks')
const { setTimeout: sleep } = require('node:timers/promises')
const { PipeloadError } = require('../errors')
const { Gate } = require('./gate')
const { Activity } = require('./activity')
const { notReady } = require('./not-ready')

// The one pipelined connection, for one server (its owner: the Pipe, pipe.js) and for each
// master of a cluster (its owner: that node's ClusterNode, cluster-node.js, under the
// cluster sink's router): a window of entries awaiting replies, writes that wait for
// 'drain', a timeout when replies stop, the grace an abort leaves, reconnects with backoff
// for up to the retry time, the re-send of what had no reply, and the reconnect counts.
//
// An entry is what one write sends: a batch of a Pipe (pipe.js) or a NodeBatch
// (cluster-node.js). It has `buf`, `replies` and `sentAt`, and says what it sends again
// after a reconnect (`again(tally)`: itself, a smaller entry, or null; it adds what it
// re-sends to the tally). The owner says what a reply means (`reply(conn, entry, r)`,
// `replyError(conn, entry, err)`: it calls conn.shift(), then conn.wake(), once an entry is answered), holds
// the run's failure (`fatal`, `fail(err)`) and its signal, and may add to the reconnect:
// `refusal(conn, err, cause)` (an error that ends the run, or null), `opened(dc, left)`,
// `reconnecting(conn, cause)` (false: stop), `afterFailure(conn, { last, cause, left })` (true:
// stop trying), `reconnected(conn, tally)`, `pending(conn)`, and `tail(conn, entry, waitMs)`
// (bytes written after an entry's, with the replies they add: Sentinel's INFO).

const BACKOFF_FIRST = 100
const BACKOFF_MAX = 2000

/** The wait after a reconnect attempt that waited `delay`. */
function nextBackoff (delay) {
  return Math.min(delay * 2, BACKOFF_MAX)
}

class Connection {
  /**
   * @param {object} o
   * @param {object} o.owner what the replies are for (see above)
   * @param {import('./connection').DataConnection} [o.conn] connected already; without it, connect() at once
   * @param {(ms: number) => Promise<import('./connection').DataConnection>} [o.connect] a new connection within `ms`; without it a lost connection is fatal
   * @param {string} [o.target] where it connects, for messages, until connected
   * @param {number} o.window entries awaiting replies at most
   * @param {number} [o.timeout] ms without a reply, while replies are due, before the connection counts as lost
   * @param {number} [o.retryTimeout] ms to keep trying to reconnect
   * @param {object} [o.said] timeout and retryTimeout as the user gave them ("2m"), for messages
   */
  constructor ({ owner, conn = null, connect, target, window, timeout = 0, retryTimeout = 0, said = {} }) {
    this.owner = owner
    this.connect = connect
    this.name = target
    this.window = window
    this.timeout = timeout
    this.retryTimeout = retryTimeout
    this.said = said
    this.inflight = []
    this.conn = null
    this.needDrain = false
    this.connecting = false
    this.closing = false
    this.retired = false // no longer used (a cluster node that serves no slot): what it had went elsewhere
    this.gate = new Gate(() => owner.fatal)
    this.activity = new Activity() // replies: a stall is no reply for `timeout` ms
    // When the replies stopped (or the server began refusing): reconnects that lead to no
    // accepted reply do not restart the retry time, or a server that takes connections but
    // never answers, or answers "not now" (LOADING) for ever, would be retried for ever.
    this.lostSince = null
    this.timer = null
    this.closed = new AbortController() // close() ends a backoff's wait
    this.startTimer()
    if (conn) this.attach(conn)
    else this.recover(null)
  }

  get target () {
    return this.conn ? this.conn.target : this.name
  }

  get signal () {
    return this.owner.signal
  }

  /** The retry time as messages say it: as it was given ("2m"), else in ms. */
  retryText () {
    return this.said.retryTimeout ?? `${this.retryTimeout} ms`
  }

  /** Room for one more entry: connected, not waiting for 'drain', the window not full. */
  hasRoom () {
    return !this.connecting && !this.needDrain && this.inflight.length < this.window
  }

  /** Send an entry once the window has room; resolves once written (or handed back, retired). */
  async send (entry) {
    await this.waitFor(() => this.retired || this.hasRoom())
    this.push(entry)
  }

  /** Send without waiting for room (re-routed commands, which a window already paid for). */
  push (entry) {
    if (this.retired) return this.owner.handBack(entry)
    if (this.inflight.length === 0) this.activity.touch()
    this.inflight.push(entry)
    if (this.conn && !this.connecting) this.write(entry)
  }

  /** The oldest entry is answered: off the window (the owner wakes the sender once it has counted it). */
  shift (rtt = true) {
    const e = this.inflight.shift()
    if (rtt) this.owner.rtt.add(performance.now() - e.sentAt)
    return e
  }

  /** The reply timeout's check, `timeout / 4` apart (10 ms to 1 s); none without a timeout. */
  startTimer () {
    clearInterval(this.timer)
    if (this.timeout > 0) {
      this.timer = setInterval(() => this.checkTimeout(), Math.max(10, Math.min(1000, this.timeout / 4)))
      this.timer.unref()
    }
  }

  /** After an abort: what is in flight gets at most `ms` without a reply, and a connect in progress ends the run. */
  abort (ms) {
    if (this.retired) return
    if (this.connecting) return this.owner.fail(this.owner.connectAborted(this))
    this.timeout = this.timeout > 0 ? Math.min(this.timeout, ms) : ms
    this.startTimer()
  }

  stopTimer () {
    clearInterval(this.timer)
  }

  /**
   * Connect (again, after `cause`) with backoff: 100 ms doubling to 2 s, a first connect
   * (no cause) at once, for up to retryTimeout from when the replies stopped (lostSince:
   * reconnects that bring no reply do not restart it). Resolves with the new connection,
   * or with null once the run ended meanwhile (giveUp() was called, or stopped() or close()
   * said so).
   */
  async reconnectLoop (cause) {
    if (cause) this.lostSince ??= performance.now()
    const started = this.lostSince ?? performance.now()
    const left = () => this.retryTimeout - (performance.now() - started)
    let delay = BACKOFF_FIRST
    let last = cause
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0 || cause) {
        if (this.stopped()) return null
        if (cause && left() <= 0) return this.giveUp(gaveUp(cause, last, this.retryText(), this.target))
        // close() ends the wait: a pending backoff must not keep a finished process alive.
        try { await sleep(Math.min(delay, Math.max(0, left())), undefined, { signal: this.closed.signal }) } catch { return null }
        delay = nextBackoff(delay)
        if (this.stopped()) return null
        // Reconnects that brought no reply since the replies stopped: the retry time is up.
        if (cause && last === cause && left() <= 0) return this.giveUp(gaveUp(cause, last, this.retryText(), this.target))
      }
      try {
        return await this.attempt(left)
      } catch (err) {
        // An attempt cut short by the end of the retry time tells nothing of the server: the
        // last error stays the one before it (a server answering LOADING is still reported so).
        if (!(err.code === 'PIPELOAD_TIMEOUT' && left() <= 0)) last = err
        const fatal = this.owner.refusal(this, err, cause)
        if (fatal) return this.giveUp(fatal)
      }
      if (await this.owner.afterFailure?.(this, { last, cause, left })) return null
    }
  }

  /** One connect, never longer than the retry time left (its own limit is the connect timeout). */
  async attempt (left) {
    const conn = await this.connect(Math.max(1, left()))
    if (this.stopped()) { conn.end(); return null }
    if (this.owner.opened) await this.owner.opened(conn, left)
    return conn
  }

  /**
   * (Re)connect with backoff (reconnectLoop), then re-send, in order, what each entry in
   * the window sends again (entry.again: the whole batch, or its commands without a reply).
   */
  async recover (cause) {
    this.connecting = true
    const conn = await this.reconnectLoop(cause)
    if (conn === null) return
    if (this.retired || (this.closing && !this.owner.pending(this))) { conn.end(); this.connecting = false; return }
    this.attach(conn)
    if (this.owner.reconnecting?.(this, cause) === false) return
    this.needDrain = false
    this.activity.touch()
    const tally = { cause, target: conn.target, batches: 0, commands: 0 }
    const again = []
    for (const e of this.inflight) {
      const next = e.again(tally)
      if (next === null) continue
      next.replies = 0
      again.push(next)
    }
    this.inflight = again
    for (const e of again) this.write(e)
    this.connecting = false
    if (cause) this.owner.reconnected(this, tally)
    // The new connection may have dropped while we were writing to it.
    if (conn.closed) return this.onClose(conn.closeReason || cause)
    this.wake()
  }

  /** The connection closed: reconnect, unless the run ended, is ending, or was aborted. */
  onClose (err) {
    if (this.stopped() || this.connecting) return
    if (this.closing && this.inflight.length === 0) return
    if (!this.connect) return this.giveUp(err)
    if (this.signal?.aborted) return this.giveUp(abortedError(this.target, err))
    this.recover(err)
  }

  stopped () {
    return this.retired || Boolean(this.owner.fatal)
  }

  giveUp (err) {
    this.owner.fail(err)
    return null
  }

  attach (conn) {
    this.conn = conn
    conn.onReply = this.onReply.bind(this)
    conn.onReplyError = this.onReplyError.bind(this)
    conn.onClose = this.onClose.bind(this)
  }

  onReply (r) {
    const e = this.inflight[0]
    if (!e) return this.protocolError()
    this.activity.count++
    this.lostSince = null
    this.owner.reply(this, e, r)
  }

  onReplyError (err) {
    const e = this.inflight[0]
    if (!e) return this.protocolError()
    this.activity.count++
    // "Not now" (LOADING, TRYAGAIN, …) is no sign the server is back: the retry time runs on.
    if (!notReady(err.message)) this.lostSince = null
    this.owner.replyError(this, e, err)
  }

  /**
   * Write an entry (`waitMs`: for the owner's tail, Sentinel's WAIT); a full socket buffer
   * holds the sender until 'drain'.
   */
  write (e, waitMs) {
    e.sentAt = performance.now()
    const tail = this.owner.tail?.(this, e, waitMs)
    let ok
    if (tail) {
      const socket = this.conn.socket
      socket?.cork()
      if (e.buf.length) this.conn.write(e.buf)
      ok = this.conn.write(tail)
      socket?.uncork()
    } else {
      ok = this.conn.write(e.buf)
    }
    // One 'drain' listener per connection: a reconnect may write many entries at once.
    if (!ok && !this.needDrain) {
      this.needDrain = true
      const conn = this.conn
      conn.socket.once('drain', () => { if (this.conn === conn) { this.needDrain = false; this.wake() } })
    }
  }

  waitFor (ready) {
    return this.gate.wait(ready)
  }

  wake () {
    this.gate.wake()
  }

  protocolError () {
    this.conn.close(new PipeloadError('PIPELOAD_CONNECTION_LOST', `${this.conn.target} sent a reply nobody asked for`))
  }

  checkTimeout () {
    if (this.connecting || !this.conn || this.inflight.length === 0) return
    if (this.activity.quietMs() < this.timeout) return
    this.conn.close(new PipeloadError('PIPELOAD_TIMEOUT',
      `Redis at ${this.conn.target} sent no reply for ${this.said.timeout ?? `${this.timeout} ms`}`, { target: this.conn.target }))
  }

  /** No reconnect from now on, and no wait: a backoff in progress ends. */
  close () {
    this.closing = true
    this.closed.abort()
    this.stopTimer()
  }

  /** Closed, and the socket ended once what was written is flushed. */
  end () {
    this.close()
    if (this.conn) this.conn.end()
  }

  /** No longer used: what is in the window is returned, for the owner to send elsewhere. */
  retire () {
    this.retired = true
    this.connecting = false
    this.stopTimer()
    const entries = this.inflight
    this.inflight = []
    this.wake()
    return entries
  }
}

/** The end of the retry time (`retryTimeout`: as messages say it): nothing reconnected (`last`: the last attempt's error), or reconnects that brought no reply. */
function gaveUp (cause, last, retryTimeout, target) {
  if (last === cause) {
    const refused = cause.reply !== undefined && notReady(cause.reply)
    return new PipeloadError(cause.code === 'PIPELOAD_TIMEOUT' ? 'PIPELOAD_TIMEOUT' : 'PIPELOAD_CONNECTION_LOST',
      `${cause.message}; ${refused ? 'still not ready' : 'still no reply'} after reconnecting for ${retryTimeout} (retry timeout)`, { target, cause })
  }
  return new PipeloadError('PIPELOAD_CONNECTION_LOST',
    `${cause.message}; could not reconnect within ${retryTimeout} (last error: ${last.message})`, { target, cause })
}

function abortedError (target, cause) {
  return new PipeloadError('PIPELOAD_ABORTED', `the load was aborted${cause ? ` (${cause.message})` : ''}`, { target })
}

module.exports = { Connection, BACKOFF_FIRST, nextBackoff, gaveUp, abortedError }
