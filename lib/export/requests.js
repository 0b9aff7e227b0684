'use strict'

const { PipeloadError } = require('../errors')
const { connectData } = require('../send/connection')
const { Activity } = require('../send/activity')

// Requests over one data connection (lib/send/connection.js DataConnection, its replies as
// Buffers): each request is a few pipelined commands, answered by as many replies, in
// order. An error reply is data (an Error in its place), a lost connection fails every
// request still waiting.

class Requests {
  /**
   * `timeout`: ms without a byte from the server while replies are due, after which the
   * connection counts as lost (a frozen server: --timeout); `said`: that as the user gave it.
   */
  constructor (conn, { timeout = null, said } = {}) {
    this.conn = conn
    this.waiting = []
    this.failed = null
    conn.onReply = r => this.take(r)
    conn.onReplyError = e => this.take(e)
    conn.onClose = err => this.fail(err)
    this.timeout = timeout
    this.said = said ?? `${timeout} ms`
    this.timer = null
    if (timeout !== null) {
      this.activity = new Activity()
      conn.socket.on('data', () => { this.activity.count++ })
    }
  }

  /** Send the bytes of `n` commands; resolves with their `n` replies. */
  send (bytes, n) {
    const replies = this.failed
      ? Promise.reject(this.failed)
      : new Promise((resolve, reject) => {
        if (this.waiting.length === 0) this.watch()
        this.waiting.push({ n, replies: [], resolve, reject })
        this.conn.write(bytes)
      })
    // Batches still in flight when the export stops for another reason (a writer's error: a
    // hash with a field not among the CSV columns) are never awaited; close() fails them, and
    // that must not be an unhandled rejection (a stack trace and exit 1 instead of the error's
    // own message and exit code). Whoever awaits the Promise still gets the rejection.
    replies.catch(() => {})
    return replies
  }

  take (reply) {
    const w = this.waiting[0]
    if (!w) return this.fail(new PipeloadError('PIPELOAD_CONNECTION_LOST', `an unexpected reply from ${this.conn.target}`, { target: this.conn.target }))
    w.replies.push(reply)
    if (w.replies.length === w.n) {
      this.waiting.shift()
      w.resolve(w.replies)
    }
  }

  /** While replies are due: no byte for `timeout` ms closes the connection, which fails them. */
  watch () {
    if (this.timeout === null) return
    this.activity.touch()
    if (this.timer !== null) return
    this.timer = setInterval(() => this.check(), Math.max(10, Math.min(1000, this.timeout / 4)))
    this.timer.unref()
  }

  check () {
    if (this.waiting.length === 0 || this.failed) {
      clearInterval(this.timer)
      this.timer = null
      return
    }
    if (this.activity.quietMs() < this.timeout) return
    const target = this.conn.target
    this.conn.close(new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${target} sent nothing for ${this.said} while replies were due (--timeout)`, { target }))
  }

  fail (err) {
    clearInterval(this.timer)
    this.timer = null
    if (this.failed) return
    this.failed = err || new PipeloadError('PIPELOAD_CONNECTION_LOST', `connection to ${this.conn.target} closed`, { target: this.conn.target })
    for (const w of this.waiting.splice(0)) w.reject(this.failed)
  }

  close () {
    this.fail(new PipeloadError('PIPELOAD_CONNECTION_LOST', `connection to ${this.conn.target} closed`, { target: this.conn.target }))
    this.conn.onClose = () => {}
    this.conn.close()
  }
}

/**
 * Every data connection of an export is opened here, to `ep` with `o`, the export's
 * connection options (connectTimeout, signal, said, timeout), within `ms`: its replies as
 * Buffers (keys and values are bytes), as Requests that give up on a frozen server.
 */
async function openRequests (ep, o, ms = o.connectTimeout ?? 10000) {
  const conn = await connectData(ep, ms, o.signal, { said: ms === o.connectTimeout ? o.said?.connectTimeout : undefined, buffers: true })
  return new Requests(conn, { timeout: o.timeout || null, said: o.said?.timeout })
}

module.exports = { Requests, openRequests }
