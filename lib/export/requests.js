'use strict'

const { PipeloadError } = require('../errors')
const { connectData } = require('../send/connection')

// Requests over one data connection (lib/send/connection.js DataConnection, its replies as
// Buffers): each request is a few pipelined commands, answered by as many replies, in
// order. An error reply is data (an Error in its place), a lost connection fails every
// request still waiting.

class Requests {
  constructor (conn) {
    this.conn = conn
    this.waiting = []
    this.failed = null
    conn.onReply = r => this.take(r)
    conn.onReplyError = e => this.take(e)
    conn.onClose = err => this.fail(err)
  }

  /** Send the bytes of `n` commands; resolves with their `n` replies. */
  send (bytes, n) {
    const replies = this.failed
      ? Promise.reject(this.failed)
      : new Promise((resolve, reject) => {
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

  fail (err) {
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
 * Every data connection of an export is opened here: to `ep` within `ms` (`said`: that
 * timeout as the user gave it, for the message), its replies as Buffers (keys and values are
 * bytes), as Requests.
 */
async function openRequests (ep, ms, signal, said) {
  return new Requests(await connectData(ep, ms, signal, { said, buffers: true }))
}

module.exports = { Requests, openRequests }
