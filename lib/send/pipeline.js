'use strict'

const { performance } = require('node:perf_hooks')
const { setTimeout: sleep } = require('node:timers/promises')
const { PipeloadError } = require('../errors')
const { Gate } = require('./gate')
const { Activity } = require('./activity')

// What a pipelined data connection does the same way for one server (Pipe, pipe.js) and
// for each master of a cluster (NodePipe, cluster-node.js): a window of batches awaiting
// replies, writes that wait for 'drain', a timeout when replies stop, the grace an abort
// leaves, the backoff between reconnects and the error when they bring nothing. What
// differs stays with each: how a reply is accounted (per record, or per command handed
// back to the cluster sink) and what a reconnect re-sends.

const BACKOFF_FIRST = 100
const BACKOFF_MAX = 2000

/** The wait after a reconnect attempt that waited `delay`. */
function nextBackoff (delay) {
  return Math.min(delay * 2, BACKOFF_MAX)
}

class Pipeline {
  /**
   * @param {object} o
   * @param {number} o.window batches awaiting replies at most
   * @param {number} [o.timeout] ms without a reply, while replies are due, before the connection counts as lost
   * @param {number} [o.retryTimeout] ms to keep trying to reconnect
   * @param {() => Error|null} o.failure the error that ended the run, if any
   */
  constructor ({ window, timeout = 0, retryTimeout = 0, failure }) {
    this.window = window
    this.timeout = timeout
    this.retryTimeout = retryTimeout
    this.inflight = []
    this.conn = null
    this.needDrain = false
    this.connecting = false
    this.closing = false
    this.gate = new Gate(failure)
    this.activity = new Activity() // replies: a stall is no reply for `timeout` ms
    // When the replies stopped: reconnects that lead to no reply do not restart the retry
    // time, or a server that takes connections but never answers would be retried forever.
    this.lostSince = null
    this.timer = null
    this.closed = new AbortController() // close() ends a backoff's wait
  }

  /** Room for one more batch: connected, not waiting for 'drain', the window not full. */
  hasRoom () {
    return !this.connecting && !this.needDrain && this.inflight.length < this.window
  }

  /** The reply timeout's check, `timeout / 4` apart (10 ms to 1 s); none without a timeout. */
  startTimer () {
    clearInterval(this.timer)
    if (this.timeout > 0) {
      this.timer = setInterval(() => this.checkTimeout(), Math.max(10, Math.min(1000, this.timeout / 4)))
      this.timer.unref()
    }
  }

  /** After an abort: what is in flight gets at most `ms` without a reply. */
  shortenTimeout (ms) {
    this.timeout = this.timeout > 0 ? Math.min(this.timeout, ms) : ms
    this.startTimer()
  }

  stopTimer () {
    clearInterval(this.timer)
  }

  /**
   * Connect (again, after `cause`) with backoff: 100 ms doubling to 2 s, a first connect
   * (no cause) at once, for up to retryTimeout from when the replies stopped (lostSince:
   * reconnects that bring no reply do not restart it). Resolves with what attempt() gave,
   * or with null once the run ended meanwhile (the subclass's giveUp() was called, or
   * stopped() or close() said so). The subclass says what an attempt is
   * (`attempt(left)`), which failures will not change by trying again
   * (`refusal(err, cause)`: the error to end the run with), what else to do after a failed
   * one (`afterFailure(err, cause, left)`: true to stop), and how to end the run (giveUp).
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
        if (cause && left() <= 0) return this.giveUp(gaveUp(cause, last, this.retryTimeout, this.target))
        // close() ends the wait: a pending backoff must not keep a finished process alive.
        try { await sleep(Math.min(delay, Math.max(0, left())), undefined, { signal: this.closed.signal }) } catch { return null }
        delay = nextBackoff(delay)
        if (this.stopped()) return null
        // Reconnects that brought no reply since the replies stopped: the retry time is up.
        if (cause && last === cause && left() <= 0) return this.giveUp(gaveUp(cause, last, this.retryTimeout, this.target))
      }
      try {
        return await this.attempt(left)
      } catch (err) {
        last = err
        const fatal = this.refusal(err, cause)
        if (fatal) return this.giveUp(fatal)
      }
      if (await this.afterFailure(last, cause, left)) return null
    }
  }

  /** The connection closed: reconnect, unless the run ended, is ending, or was aborted. */
  onClose (err) {
    if (this.stopped() || this.connecting) return
    if (this.closing && this.inflight.length === 0) return
    if (!this.canReconnect()) return this.giveUp(err)
    if (this.signal?.aborted) return this.giveUp(abortedError(this.target, err))
    this.recover(err)
  }

  canReconnect () {
    return true
  }

  /** After a failed attempt, before the next: true when the loop must stop. */
  async afterFailure () {
    return false
  }

  attach (conn) {
    this.conn = conn
    conn.onReply = this.onReply.bind(this)
    conn.onReplyError = this.onReplyError.bind(this)
    conn.onClose = this.onClose.bind(this)
  }

  /**
   * Write a batch (writeBytes: its bytes, `waitMs` for Pipe's Sentinel WAIT); a full socket
   * buffer holds the sender until 'drain'.
   */
  write (b, waitMs) {
    b.sentAt = performance.now()
    // One 'drain' listener per connection: a reconnect may write many batches at once.
    if (!this.writeBytes(b, waitMs) && !this.needDrain) {
      this.needDrain = true
      const conn = this.conn
      conn.socket.once('drain', () => { if (this.conn === conn) { this.needDrain = false; this.wake() } })
    }
  }

  writeBytes (b) {
    return this.conn.write(b.buf)
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
      `Redis at ${this.conn.target} sent no reply for ${this.timeout} ms`, { target: this.conn.target }))
  }
}

/** The end of the retry time: nothing reconnected (`last`: the last attempt's error), or reconnects that brought no reply. */
function gaveUp (cause, last, retryTimeout, target) {
  if (last === cause) {
    return new PipeloadError(cause.code === 'PIPELOAD_TIMEOUT' ? 'PIPELOAD_TIMEOUT' : 'PIPELOAD_CONNECTION_LOST',
      `${cause.message}; still no reply after reconnecting for ${retryTimeout} ms (retry timeout)`, { target, cause })
  }
  return new PipeloadError('PIPELOAD_CONNECTION_LOST',
    `${cause.message}; could not reconnect within ${retryTimeout} ms (last error: ${last.message})`, { target, cause })
}

function abortedError (target, cause) {
  return new PipeloadError('PIPELOAD_ABORTED', `the load was aborted${cause ? ` (${cause.message})` : ''}`, { target })
}

module.exports = { Pipeline, BACKOFF_FIRST, nextBackoff, gaveUp, abortedError }
