'use strict'

const { PipeloadError } = require('../errors')
const { copyBytes } = require('../read/copy')
const { refusedForGood } = require('./connection')
const { Connection } = require('./pipeline')

// One master of a cluster: the one pipelined Connection (pipeline.js: window, drain,
// timeout, reconnects, re-sends), owned by a ClusterNode that tells the cluster sink
// (cluster.js) what each reply means. Unlike one server's Pipe (pipe.js), replies are
// handled per command, not per record: each entry of a node batch points back at its
// command in the encoded batch it came from (a "parent", see cluster.js), which owns the
// bytes, the record accounting and the order of acknowledgements. So a MOVED, ASK or
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
    const into = { buf, pos: 0 }
    for (let k = 0; k < parents.length;) {
      const p = parents[k]
      if (p === null) {
        into.pos += ASKING.copy(buf, into.pos)
        k++
        continue
      }
      const j = this.runEnd(k)
      copyBytes(p.buf, p.starts[idx[k]], p.cmdEnd(idx[j - 1]), into)
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

  /**
   * After a reconnect (Connection#recover): the commands still without a reply, counted as
   * re-sent when they had been written; null when none is left.
   */
  again (tally) {
    tally.batches++
    tally.commands += this.unansweredSent()
    const nb = this.replies === 0 ? this : this.unanswered()
    return nb.cmds > 0 ? nb : null
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

/** A master of the cluster: its Connection, and what its replies and its reconnects mean to the sink. */
class ClusterNode {
  /**
   * @param {object} o
   * @param {import('./cluster').ClusterSink} o.sink
   * @param {object} o.endpoint data endpoint of this node (connection.js)
   * @param {(endpoint: object) => Promise<import('./connection').DataConnection>} o.connect
   */
  constructor ({ sink, key, endpoint, connect, window, timeout, retryTimeout, said }) {
    this.sink = sink
    this.endpoint = endpoint
    this.addr = `${endpoint.host}:${endpoint.port}`
    this.key = key ?? this.addr // with several connections per master: "host:port#i"
    this.target = endpoint.target
    this.link = new Connection({ owner: this, connect: () => connect(endpoint), target: endpoint.target, window, timeout, retryTimeout, said })
  }

  /** Unreachable and no longer serving slots: its commands went elsewhere. */
  get dead () {
    return this.link.retired
  }

  get fatal () {
    return this.sink.fatal
  }

  /** The run's signal: aborted, a lost connection is not reconnected (Connection#onClose). */
  get signal () {
    return this.sink.signal
  }

  get rtt () {
    return this.sink.rtt
  }

  /** Send a batch once the window has room; resolves once written (or handed on). */
  send (nb) {
    return this.link.send(nb)
  }

  /** Send without waiting: re-routed commands, which the window already paid for elsewhere. */
  push (nb) {
    this.link.push(nb)
  }

  reply (link, nb) {
    this.settle(link, nb, null)
  }

  replyError (link, nb, err) {
    this.settle(link, nb, err)
  }

  /** The next reply (err for an error reply) settles the next command awaiting one. */
  settle (link, nb, err) {
    const k = nb.replies++
    if (nb.live[k]) {
      nb.live[k] = 0
      const p = nb.parents[k]
      if (p !== null) {
        if (err) this.sink.replyError(this, p, nb.idx[k], err)
        else this.sink.replied(p, nb.idx[k], null)
      }
    }
    if (nb.replies === nb.cmds) {
      link.shift()
      nb.buf = null
      link.wake()
    }
  }

  /** A batch the node could not take (retired): its commands go to whoever owns their slots now. */
  handBack (nb) {
    this.sink.rerouteBatch(nb)
  }

  pending (link) {
    return link.inflight.length > 0
  }

  reconnected (link, tally) {
    this.sink.reconnected(this, tally)
  }

  /** A connect that ends the run: aborted, or refused as it will be again (a password, a SELECT the node refuses). */
  refusal (link, err) {
    if (err.code === 'PIPELOAD_ABORTED') return err
    if (refusedForGood(err)) return err.command === 'SELECT' ? selectRefused(err) : err
    return null
  }

  /** Between attempts: a new slot map; a node that serves no slot is retired. True: stop trying. */
  async afterFailure (link, { last, cause, left }) {
    await this.sink.refresh()
    if (this.dead) return true
    if (!this.sink.serves(this)) {
      this.retire()
      return true
    }
    if (left() > 0) return false
    this.sink.fail(new PipeloadError('PIPELOAD_CONNECTION_LOST',
      `${cause ? cause.message + '; ' : ''}could not connect to cluster node ${this.target} within ${link.retryText()} and no other node took over its slots (last error: ${last.message})`,
      { target: this.target, cause }))
    return true
  }

  fail (err) {
    this.sink.fail(err)
  }

  connectAborted () {
    return new PipeloadError('PIPELOAD_ABORTED', `the load was aborted while connecting to cluster node ${this.target}`, { target: this.target })
  }

  /** Commands in flight that were written and not answered: the ones re-sending may repeat. */
  resent () {
    let n = 0
    for (const nb of this.link.inflight) n += nb.unansweredSent()
    return n
  }

  /** The node is gone and serves no slot any more: hand every unanswered command back. */
  retire () {
    this.sink.forget(this)
    this.sink.stats.resentCommands += this.resent() // re-routed to the new owner of their slots
    for (const nb of this.link.retire()) this.sink.rerouteBatch(nb)
  }

  /** After an abort: what is in flight gets at most `ms` without a reply, and a node still connecting ends the run. */
  abort (ms) {
    this.link.abort(ms)
  }

  wake () {
    this.link.wake()
  }

  close () {
    this.link.end()
  }
}

module.exports = { ClusterNode, NodeBatch }
