'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError } = require('./errors')
const { Reservoir } = require('./stats')

// The sender: writes each encoded batch with one socket write and keeps at most `window`
// batches awaiting replies. send() waits only when the window is full or the socket asked
// for `drain`. That is the backpressure that bounds both the loader's memory and the
// server's queued replies (window x batchSize replies).
//
// Each batch remembers, per record, the command count at its end and its source line, so
// an error reply is attributed to its record without a per-command object.

class Batch {
  constructor (cmds, ends, lines) {
    this.cmds = cmds
    this.ends = ends // cumulative command count after each record
    this.lines = lines // source position of each record
    this.replies = 0
    this.failedUpTo = -1 // index of the last record counted as failed
    this.sentAt = 0
  }

  /** Index of the record that command number `c` belongs to. */
  recordOf (c) {
    let lo = 0
    let hi = this.ends.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.ends[mid] > c) hi = mid
      else lo = mid + 1
    }
    return lo
  }
}

class Pipe {
  /**
   * @param {object} o
   * @param {import('./connection').DataConnection} o.conn
   * @param {number} o.window batches awaiting replies at most
   * @param {string} o.file input name for failures
   * @param {(failure: object) => void} o.onFailure called once per failed record
   */
  constructor ({ conn, window, file, onFailure }) {
    this.conn = conn
    this.window = window
    this.file = file
    this.onFailure = onFailure
    this.inflight = []
    this.needDrain = false
    this.waiter = null
    this.fatal = null
    this.stats = { batches: 0, commands: 0, acked: 0, ackedRecords: 0, errorReplies: 0, failedRecords: 0 }
    this.rtt = new Reservoir()
    conn.onReply = this.onReply.bind(this)
    conn.onReplyError = this.onReplyError.bind(this)
    conn.onClose = this.onClose.bind(this)
  }

  /** Send one encoded batch ({ buf, cmds, ends, lines }); resolves once written. */
  async send (encoded) {
    if (encoded.cmds === 0) return
    if (this.needDrain) await this.waitFor(() => !this.needDrain)
    if (this.inflight.length >= this.window) await this.waitFor(() => this.inflight.length < this.window)
    if (this.fatal) throw this.fatal
    const b = new Batch(encoded.cmds, encoded.ends, encoded.lines)
    b.sentAt = performance.now()
    this.inflight.push(b)
    this.stats.batches++
    this.stats.commands += b.cmds
    if (!this.conn.write(encoded.buf)) {
      this.needDrain = true
      this.conn.socket.once('drain', () => { this.needDrain = false; this.wake() })
    }
  }

  /** Wait for every reply. */
  finish () {
    return this.waitFor(() => this.inflight.length === 0)
  }

  waitFor (ready) {
    if (this.fatal) return Promise.reject(this.fatal)
    if (ready()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.waiter = { ready, resolve, reject }
    })
  }

  wake () {
    const w = this.waiter
    if (!w) return
    if (this.fatal) { this.waiter = null; w.reject(this.fatal) } else if (w.ready()) { this.waiter = null; w.resolve() }
  }

  onReply () {
    const b = this.inflight[0]
    if (!b) return this.protocolError()
    if (++b.replies === b.cmds) this.ack(b)
  }

  onReplyError (err) {
    const b = this.inflight[0]
    if (!b) return this.protocolError()
    this.stats.errorReplies++
    const rec = b.recordOf(b.replies)
    if (rec > b.failedUpTo) {
      b.failedUpTo = rec
      this.stats.failedRecords++
      const message = String(err.message)
      this.onFailure({ file: this.file, line: b.lines[rec], code: message.split(' ')[0], message, source: 'reply' })
    }
    if (++b.replies === b.cmds) this.ack(b)
  }

  ack (b) {
    this.inflight.shift()
    this.rtt.add(performance.now() - b.sentAt)
    this.stats.acked += b.cmds
    this.stats.ackedRecords += b.ends.length
    this.wake()
  }

  protocolError () {
    this.onClose(new PipeloadError('PIPELOAD_CONNECTION_LOST', 'the server sent a reply nobody asked for'))
  }

  onClose (err) {
    if (this.fatal) return
    this.fatal = err
    this.wake()
  }
}

module.exports = { Pipe, Batch }
