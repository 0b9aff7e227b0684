'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError } = require('../errors')
const { copyBytes } = require('../read/copy')
const { refusedForGood } = require('./connection')
const { Pipeline } = require('./pipeline')

// One master of a cluster: its data connection, its window of batches awaiting replies,
// its drain, its reconnects (what is the same as for one server: pipeline.js). Like Pipe
// (pipe.js) for one server, but replies are
// handled per command, not per record: each entry of a node batch points back at its
// command in the encoded batch it came from (a "parent", see lib/cluster.js), which owns
// the bytes, the record accounting and the order of acknowledgements. So a MOVED, ASK or
// TRYAGAIN reply hands exactly that command back to the sink to re-route, and after a
// reconnect only the commands still without a reply are re-sent.

const ASKING = Buffer.from('*1\r\n$6\r\nASKING\r\n')

/** Commands for one node: (parent, command index) pairs, then sealed into one buffer. */
class NodeBatch {
  constructor () {
    this.parents = [] // null for an ASKING that precedes the next entry
    this.idx = []
    this.bytes = 0
    this.buf = null
    this.live = null // 1 while the entry awaits its reply on this node
    this.replies = 0
    this.sentAt = 0
  }

  get cmds () { return this.parents.length }

  add (parent, i) {
    this.parents.push(parent)
    this.idx.push(i)
    this.bytes += parent.cmdEnd(i) - parent.starts[i]
  }

  asking () {
    this.parents.push(null)
    this.idx.push(-1)
    this.bytes += ASKING.length
  }

  /**
   * The commands' bytes as one buffer. A run of one parent's commands that lie one after
   * another in its buffer is one copy (the parse workers put each master's commands of a
   * batch together); a batch that is one such run, as it then usually is, is sent from
   * the parent's buffer without a copy: the parent keeps its bytes until every command in
   * it has a final reply (ClusterSink#settle), so until these bytes are written.
   */
  seal () {
    const { parents, idx } = this
    this.live = new Uint8Array(parents.length).fill(1)
    const first = parents.length && parents[0] !== null ? this.runEnd(0) : -1
    if (first === parents.length) {
      const p = parents[0]
      this.buf = p.buf.subarray(p.starts[idx[0]], p.cmdEnd(idx[first - 1]))
      return this
    }
    const buf = Buffer.allocUnsafe(this.bytes)
    let pos = 0
    for (let k = 0; k < parents.length;) {
      const p = parents[k]
      if (p === null) {
        pos += ASKING.copy(buf, pos)
        k++
        continue
      }
      const j = this.runEnd(k)
      pos += copyBytes(p.buf, buf, pos, p.starts[idx[k]], p.cmdEnd(idx[j - 1]))
      k = j
    }
    this.buf = buf
    return this
  }

  /** The entry after the run that starts at entry k: one parent's commands, byte after byte. */
  runEnd (k) {
    const { parents, idx } = this
    const p = parents[k]
    let end = p.cmdEnd(idx[k])
    let j = k + 1
    while (j < parents.length && parents[j] === p && p.starts[idx[j]] === end) end = p.cmdEnd(idx[j++])
    return j
  }

  /**
   * Commands of this batch that were written and have no reply yet: sent again, they may
   * run twice (the server may have run them before the connection was lost). ASKING is no
   * data command; a batch never written (queued while reconnecting) repeats nothing.
   */
  unansweredSent () {
    if (this.sentAt === 0) return 0
    let n = 0
    for (let k = 0; k < this.parents.length; k++) if (this.parents[k] !== null && this.live[k]) n++
    return n
  }

  /** A new batch of the entries still awaiting a reply (and the ASKING before each). */
  unanswered () {
    const nb = new NodeBatch()
    for (let k = 0; k < this.parents.length; k++) {
      if (this.parents[k] === null) {
        if (k + 1 < this.parents.length && this.live[k + 1]) nb.asking()
      } else if (this.live[k]) nb.add(this.parents[k], this.idx[k])
    }
    return nb.seal()
  }
}

/** A cluster node refused SELECT: say what to change. */
function selectRefused (err) {
  err.message += ' (a cluster has database 0 only, unless Valkey 9 cluster-databases allows more: drop -n / the /db of the URL)'
  return err
}

class NodePipe extends Pipeline {
  /**
   * @param {object} o
   * @param {import('./cluster').ClusterSink} o.sink
   * @param {object} o.endpoint data endpoint of this node (connection.js)
   * @param {(endpoint: object) => Promise<import('./connection').DataConnection>} o.connect
   */
  constructor ({ sink, endpoint, connect, window, timeout, retryTimeout }) {
    super({ window, timeout, retryTimeout, failure: () => sink.fatal })
    this.sink = sink
    this.endpoint = endpoint
    this.addr = `${endpoint.host}:${endpoint.port}`
    this.target = endpoint.target
    this.connect = connect
    this.dead = false // unreachable and no longer serving slots: its commands went elsewhere
    this.startTimer()
    this.recover(null)
  }

  /** Send a batch once the window has room; resolves once written (or handed on). */
  async send (nb) {
    await this.waitFor(() => this.dead || this.hasRoom())
    this.push(nb)
  }

  /** Send without waiting: re-routed commands, which the window already paid for elsewhere. */
  push (nb) {
    if (this.dead) return this.sink.rerouteBatch(nb)
    if (this.inflight.length === 0) this.activity.touch()
    this.inflight.push(nb)
    if (this.conn && !this.connecting) this.write(nb)
  }

  onReply () {
    this.settle(null)
  }

  onReplyError (err) {
    this.settle(err)
  }

  /** The next reply (err for an error reply) settles the next command awaiting one. */
  settle (err) {
    const nb = this.inflight[0]
    if (!nb) return this.protocolError()
    this.activity.count++
    this.lostSince = null
    const k = nb.replies++
    if (nb.live[k]) {
      nb.live[k] = 0
      const p = nb.parents[k]
      if (p !== null) {
        if (err) this.sink.replyError(this, p, nb.idx[k], err)
        else this.sink.replied(p, nb.idx[k], null)
      }
    }
    if (nb.replies === nb.cmds) this.ack(nb)
  }

  ack (nb) {
    this.inflight.shift()
    this.sink.rtt.add(performance.now() - nb.sentAt)
    nb.buf = null
    this.wake()
  }

  /** The run's signal: aborted, a lost connection is not reconnected (Pipeline#onClose). */
  get signal () {
    return this.sink.signal
  }

  /**
   * (Re)connect with backoff (Pipeline#reconnectLoop). While the node cannot be reached,
   * refresh the slot map: once it serves no slot (a replica took over), retire it and
   * re-route its commands. Then re-send, in order, only the commands that have no reply yet.
   */
  async recover (cause) {
    this.connecting = true
    this.conn = null
    const conn = await this.reconnectLoop(cause)
    if (conn === null) return
    if (this.dead || (this.closing && this.inflight.length === 0)) { conn.end(); this.connecting = false; return }
    this.attach(conn)
    if (cause) this.sink.reconnected(this, cause, this.inflight.length, this.resent())
    this.needDrain = false
    this.activity.touch()
    this.inflight = this.inflight.map(nb => nb.replies === 0 ? nb : nb.unanswered()).filter(nb => nb.cmds > 0)
    for (const nb of this.inflight) {
      nb.replies = 0
      this.write(nb)
    }
    this.connecting = false
    if (conn.closed) return this.onClose(conn.closeReason || cause)
    this.wake()
  }

  attempt () {
    return this.connect(this.endpoint)
  }

  /** A connect that ends the run: aborted, or refused as it will be again (a password, a SELECT the node refuses). */
  refusal (err) {
    if (err.code === 'PIPELOAD_ABORTED') return err
    if (refusedForGood(err)) return err.command === 'SELECT' ? selectRefused(err) : err
    return null
  }

  /** Between attempts: a new slot map; a node that serves no slot is retired. True: stop trying. */
  async afterFailure (last, cause, left) {
    await this.sink.refresh()
    if (this.dead) return true
    if (!this.sink.serves(this)) {
      this.retire()
      return true
    }
    if (left() > 0) return false
    this.sink.fail(new PipeloadError('PIPELOAD_CONNECTION_LOST',
      `${cause ? cause.message + '; ' : ''}could not connect to cluster node ${this.target} within ${this.retryTimeout} ms and no other node took over its slots (last error: ${last.message})`,
      { target: this.target, cause }))
    return true
  }

  stopped () {
    return this.dead || Boolean(this.sink.fatal)
  }

  giveUp (err) {
    this.sink.fail(err)
    return null
  }

  /** Commands in flight that were written and not answered: the ones re-sending may repeat. */
  resent () {
    let n = 0
    for (const nb of this.inflight) n += nb.unansweredSent()
    return n
  }

  /** The node is gone and serves no slot any more: hand every unanswered command back. */
  retire () {
    this.dead = true
    this.connecting = false
    this.stopTimer()
    this.sink.forget(this)
    this.sink.stats.resentCommands += this.resent() // re-routed to the new owner of their slots
    const batches = this.inflight
    this.inflight = []
    for (const nb of batches) this.sink.rerouteBatch(nb)
    this.wake()
  }

  /**
   * After an abort: what is in flight gets at most `ms` without a reply (see Pipe), and a
   * node still connecting (or waiting to try again) ends the run at once.
   */
  shortenTimeout (ms) {
    if (this.dead) return
    if (this.connecting) return this.sink.fail(new PipeloadError('PIPELOAD_ABORTED', `the load was aborted while connecting to cluster node ${this.target}`, { target: this.target }))
    super.shortenTimeout(ms)
  }

  close () {
    this.closing = true
    this.closed.abort()
    this.stopTimer()
    if (this.conn) this.conn.end()
  }
}

module.exports = { NodePipe, NodeBatch }
