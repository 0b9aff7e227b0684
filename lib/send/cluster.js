'use strict'

const { PipeloadError, where } = require('../errors')
const { Gate } = require('./gate')
const { Reservoir, sendStats, countReconnect } = require('./stats')
const { Activity } = require('./activity')
const { SentBatch } = require('./sent-batch')
const { positionAt } = require('../read/row')
const { connectData, dataEndpoint, scrub } = require('./connection')
const { Topology, clusterReady, isCluster, openClusterClient, deletePrefixCluster, endpointTemplate } = require('./cluster-topology')
const { SlotScanner, commandSlots, SLOTS, NO_KEY, CROSS_SLOT } = require('../encode/slots')
const { ClusterNode, NodeBatch } = require('./cluster-node')
const { OTHER } = require('../encode/group')
const { notReady } = require('./not-ready')
const { isRedirect, redirectOf } = require('./redirect')
const { Parking } = require('./cluster-parking')

// Redis Cluster: the sink that Run.pump sends encoded batches to when the server is a
// cluster, a router over one pipelined Connection per master (pipeline.js, each owned by
// its ClusterNode: cluster-node.js). Each encoded batch (a "parent") is scanned once for
// its commands' byte ranges and hash slots (encode/slots.js), split into one batch per
// master by the current slot map, and each master's batch goes through that master's
// Connection (window, drain, reconnect). The parent keeps its bytes and per-command state
// until every command has a final reply, so any command can be re-sent alone:
//   MOVED  -> the slot now lives elsewhere: update that slot, refresh the whole map
//             (CLUSTER SLOTS) soon, re-send the command to the new owner;
//   ASK    -> the key is being migrated: send ASKING + the command to the target, map unchanged;
//   (MOVED and ASK: at most MAX_REDIRECTIONS per command, then the run fails: a redirect
//   loop; a redirect's slot and address are checked first: redirect.js)
//   not ready (TRYAGAIN, CLUSTERDOWN, LOADING, BUSY, MASTERDOWN: not-ready.js) -> re-send it
//             after a pause and a refresh, within the retry time (cluster-parking.js);
//   a master that cannot be reached -> its ClusterNode refreshes the map until a replica owns
//             its slots, then every command it had not answered is re-routed.
// Parents are acknowledged (onAck) in input order once all their commands are, so
// checkpoints and record counts mean the same as with one server.
// --connections n: n ClusterNodes per master ("lanes", keyed "host:port#i"), lane i owning
// the master's slots s with s % n = i: a key's commands keep one connection, and their order.

// A hash tag is written with braces, which a template reads as a field unless doubled.
const HASH_TAG_HINT = 'give them a common hash tag (the part of a key between { and }); in a template a literal brace is written twice: user:{{{id}}}:name and user:{{{id}}}:tags both hash by the id'
const ABORT_GRACE = 1000
// Redirections (MOVED, ASK) one command may follow before the run fails, as ioredis's
// maxRedirections: a node that redirects to itself, or two that redirect to each other,
// would otherwise keep a load busy forever (every MOVED is a reply, so no timeout fires).
const MAX_REDIRECTIONS = 16

/** One encoded batch and the state of each of its commands. */
class Parent extends SentBatch {
  constructor (encoded) {
    super(encoded)
    this.starts = null // byte offset of each command, and the end
    this.stops = null // end of each command, when the commands are not in input order (grouped by master)
    this.slots = null
    this.redirects = null // MOVED and ASK replies per command, once there is one
    this.done = new Uint8Array(this.cmds)
    this.left = this.cmds // commands without a final reply
    this.recFailed = new Uint8Array(this.ends.length)
    this.failed = 0 // records failed (error reply or cross-slot), each counted once
  }

  /** Where command k's bytes end. */
  cmdEnd (k) {
    return this.stops === null ? this.starts[k + 1] : this.stops[k]
  }
}

class ClusterSink {
  /**
   * @param {object} o
   * @param {Topology} o.topology where CLUSTER SLOTS comes from
   * @param {object} o.endpoint data endpoint template (credentials, TLS); host/port per node
   */
  constructor ({ topology, endpoint, connect = connectData, connectTimeout, signal, window, connections = 1, timeout = 0, retryTimeout = 0, said = {}, file, onFailure, onAck, onReconnect, written = null }) {
    this.written = written // an error reply that means the command's data is there already (a restore's: lib/encode/restore.js)
    this.topology = topology
    this.endpoint = endpoint
    this.signal = signal
    this.connectNode = ep => connect(ep, Math.min(connectTimeout || 10000, 2000), signal)
    this.window = window
    this.connections = connections // per master: the lanes of each (see above)
    this.timeout = timeout
    this.retryTimeout = retryTimeout
    this.said = said // timeout and retryTimeout as given, for messages
    this.file = file
    this.onFailure = onFailure
    this.onAck = onAck || (() => {})
    this.onReconnect = onReconnect || (() => {})
    this.nodes = new Map() // "host:port" (with several connections: "host:port#i") -> ClusterNode
    this.slotNode = new Array(SLOTS).fill(null)
    this.numbers = new Map() // ClusterNode -> its number in owners()
    this.onSlotMap = null // called after each refresh of the slot map
    this.parents = [] // awaiting acknowledgement, in input order
    this.scanner = new SlotScanner()
    this.fatal = null
    this.gate = new Gate(() => this.fatal)
    this.refreshing = null
    this.refreshTimer = null
    this.parking = new Parking(this) // commands refused for now, or without a slot owner
    this.progress = new Activity() // final replies that are not errors
    this.stats = { ...sendStats(), moved: 0, asked: 0, retried: 0, rerouted: 0, refreshes: 0 }
    this.rtt = new Reservoir()
    if (signal) {
      // Ctrl-C: replies in flight get a short grace, and a lost node is not reconnected.
      this.onAbort = () => {
        for (const node of this.nodes.values()) node.abort(ABORT_GRACE)
        this.abortWatch(this.stats.acked)
      }
      signal.addEventListener('abort', this.onAbort, { once: true })
    }
  }

  /** Read the slot map; the cluster must answer. */
  async start () {
    const { control, connectTimeout } = this.topology
    if (control.isCluster) await clusterReady(control, connectTimeout)
    const ok = await this.refresh()
    if (!ok) throw this.lastRefreshError instanceof PipeloadError ? this.lastRefreshError : new PipeloadError('PIPELOAD_CONNECTION_FAILED', `the cluster did not answer CLUSTER SLOTS: ${scrub(this.lastRefreshError.message, [this.endpoint.password])}`)
    if (!this.masters().length) {
      throw new PipeloadError('PIPELOAD_CONNECTION_FAILED', 'the cluster has no slots assigned (CLUSTER SLOTS is empty)')
    }
  }

  /**
   * Each slot's master as a number (OTHER: none), for the parse workers to group a batch's
   * commands by master (lib/encode/group.js). A master keeps its number across refreshes.
   */
  owners () {
    const owners = new Uint16Array(SLOTS).fill(OTHER)
    for (let s = 0; s < SLOTS; s++) {
      const node = this.slotNode[s]
      if (node === null) continue
      let k = this.numbers.get(node)
      if (k === undefined) this.numbers.set(node, (k = this.numbers.size))
      owners[s] = k
    }
    return owners
  }

  /** One ClusterNode per master serving slots (its first lane found, with several connections). */
  masters () {
    return [...new Map(this.slotNode.filter(Boolean).map(n => [n.addr, n])).values()]
  }

  /** The ClusterNode (lane) that sends slot `slot` to the master at "host:port". */
  nodeFor (addr, slot) {
    return this.nodeAt(this.connections === 1 ? addr : `${addr}#${slot % this.connections}`)
  }

  /** The ClusterNode for "host:port" (or "host:port#i", a lane), connecting it on first use. */
  nodeAt (key) {
    let node = this.nodes.get(key)
    if (!node) {
      const [addr] = key.split('#')
      const i = addr.lastIndexOf(':')
      const host = addr.slice(0, i)
      const port = Number(addr.slice(i + 1))
      const endpoint = Object.freeze({ ...this.endpoint, host, port, target: `${host}:${port}` })
      node = new ClusterNode({ sink: this, key, endpoint, connect: this.connectNode, window: this.window, timeout: this.timeout, retryTimeout: this.retryTimeout, said: this.said })
      this.nodes.set(key, node)
    }
    return node
  }

  /** Fetch CLUSTER SLOTS (one refresh at a time); resolves false when no node answered. */
  refresh () {
    if (!this.refreshing) {
      this.refreshing = this.topology.slots().then(ranges => {
        this.stats.refreshes++
        for (const [start, end, master] of ranges) {
          const addr = `${master[0]}:${master[1]}`
          const lanes = new Array(this.connections).fill(null) // created for the slots they get
          for (let s = start; s <= end; s++) this.slotNode[s] = lanes[s % this.connections] ??= this.nodeFor(addr, s)
        }
        if (this.onSlotMap) this.onSlotMap()
        return true
      }, err => {
        this.lastRefreshError = err
        return false
      }).finally(() => { this.refreshing = null })
    }
    return this.refreshing
  }

  /** A refresh shortly: many MOVED replies in a burst cost one CLUSTER SLOTS. */
  refreshSoon () {
    if (this.refreshTimer) return
    this.refreshTimer = setTimeout(() => { this.refreshTimer = null; this.refresh() }, 10)
  }

  serves (node) {
    return this.slotNode.includes(node)
  }

  forget (node) {
    if (this.nodes.get(node.key) === node) this.nodes.delete(node.key)
  }

  /** Route one encoded batch; resolves once every master's part is written. */
  async send (encoded) {
    if (this.fatal) throw this.fatal
    const parent = new Parent(encoded)
    this.parents.push(parent)
    if (parent.cmds === 0) return this.settle()
    this.stats.batches++
    const byNode = this.route(parent, encoded)
    for (const [node, nb] of byNode) await node.send(nb.seal())
  }

  /** Each command's start (parent.starts) and hash slot. */
  scan (parent) {
    const { starts, slots } = commandSlots(this.scanner, parent.buf, parent.cmds)
    parent.starts = starts
    return slots
  }

  /** Slots of the parent's commands, and its commands grouped by the master owning them. */
  route (parent, encoded) {
    const { cmds, ends } = parent
    // Batches of the parallel parse come with their slots, hashed in the worker threads.
    const slots = parent.slots = encoded.slots || this.scan(parent)
    if (encoded.starts) parent.starts = encoded.starts
    if (encoded.stops) parent.stops = encoded.stops
    const byNode = new Map()
    let c = 0
    for (let r = 0; r < ends.length; r++) {
      const end = ends[r]
      let cross = -1
      for (let k = c; k < end; k++) if (slots[k] === CROSS_SLOT) { cross = k; break }
      if (cross !== -1) {
        this.crossSlot(parent, r, cross)
      } else {
        this.stats.commands += end - c
        for (let k = c; k < end; k++) {
          const node = this.ownerOf(slots[k])
          if (node === null) { this.parking.park(parent, k); continue }
          let nb = byNode.get(node)
          if (!nb) byNode.set(node, (nb = new NodeBatch()))
          nb.add(parent, k)
        }
      }
      c = end
    }
    return byNode
  }

  ownerOf (slot) {
    if (slot === NO_KEY) return this.slotNode.find(n => n !== null && !n.dead) || null
    const node = this.slotNode[slot]
    return node && !node.dead ? node : null
  }

  /**
   * Record r, whose command k has keys that hash to different slots: failed, nothing of it sent.
   */
  crossSlot (parent, r, k) {
    const from = r === 0 ? 0 : parent.ends[r - 1]
    const to = parent.ends[r]
    const name = parent.buf.toString('utf8', parent.starts[k], Math.min(parent.cmdEnd(k), parent.starts[k] + 200))
      .split('\r\n').filter((_, i) => i % 2 === 0 && i > 0).slice(0, 1)[0]
    for (let i = from; i < to; i++) parent.done[i] = 1
    parent.left -= to - from
    this.failRecord(parent, r, {
      code: 'PIPELOAD_CROSSSLOT',
      message: `command ${k - from + 1} of the record (${name}) has keys in different hash slots; a cluster needs them in one slot: ${HASH_TAG_HINT}`,
      source: 'input'
    })
    if (parent.left === 0) this.settle()
  }

  /** Record r of parent failed (counted once): its code, message and source ('input' or 'reply'). */
  failRecord (parent, r, { code, message, source }) {
    if (parent.recFailed[r]) return
    parent.recFailed[r] = 1
    parent.failed++
    this.stats.failedRecords++
    this.onFailure({ ...positionAt(parent, r, parent.file ?? this.file), code, message, source, raw: parent.raws?.[r] }, parent)
  }

  /** A final reply for command i of parent (err: an error reply that fails its record). */
  replied (parent, i, err) {
    if (parent.done[i]) return // a command re-sent after its reply was lost and then found
    parent.done[i] = 1
    this.stats.acked++
    if (err && this.written !== null && this.written.test(String(err.message))) err = null
    if (err) {
      this.stats.errorReplies++
      const message = String(err.message)
      this.failRecord(parent, parent.recordOf(i), { code: message.split(' ')[0], message, source: 'reply' })
    } else {
      this.progress.count++
    }
    if (--parent.left === 0 && parent === this.parents[0]) this.settle()
  }

  replyError (node, parent, i, err) {
    const m = String(err.message)
    if (isRedirect(m)) {
      if (this.fatal) return
      try {
        this.redirect(node, parent, i, m)
      } catch (e) {
        if (!(e instanceof PipeloadError)) throw e
        this.fail(e)
      }
      return
    }
    if (notReady(m)) {
      this.stats.retried++
      return this.parking.refused(node, parent, i, m)
    }
    this.replied(parent, i, err)
  }

  /** Follow a MOVED or ASK reply to command i of parent, at most MAX_REDIRECTIONS times. */
  redirect (node, parent, i, m) {
    const { slot, addr } = redirectOf(m, node)
    this.parking.lastError = `${m} from ${node.target}`
    parent.redirects ??= new Uint8Array(parent.cmds)
    if (++parent.redirects[i] > MAX_REDIRECTIONS) throw this.redirectLoop(node, parent, i, m)
    if (m.startsWith('MOVED ')) {
      this.stats.moved++
      this.slotNode[slot] = this.nodeFor(addr, slot)
      this.refreshSoon()
      return this.reroute(parent, i)
    }
    this.stats.asked++
    const nb = new NodeBatch()
    nb.asking()
    nb.add(parent, i)
    this.nodeFor(addr, slot).push(nb.seal())
  }

  /** The error of a command redirected more than MAX_REDIRECTIONS times: where, and by whom. */
  redirectLoop (node, parent, i, m) {
    const r = parent.recordOf(i)
    const at = where(parent.file ?? this.file, parent.lines[r], parent.offsets?.[r])
    return new PipeloadError('PIPELOAD_CLUSTER_REDIRECT',
      `a command of ${at} was redirected ${MAX_REDIRECTIONS} times and cluster node ${node.target} redirected it again (${m.slice(0, 200)}): ` +
      'the nodes do not agree which one owns its slot (a redirect loop)', { target: node.target, reply: m, file: parent.file ?? this.file, line: parent.lines[r] })
  }

  /** Send command i of parent to whoever owns its slot now. */
  reroute (parent, i) {
    if (parent.done[i] || this.fatal) return
    this.stats.rerouted++
    const node = this.ownerOf(parent.slots[i])
    if (node === null) return this.parking.park(parent, i)
    let nb = this.pending?.get(node)
    if (!nb) {
      if (!this.pending) {
        this.pending = new Map()
        queueMicrotask(() => this.flushPending()) // re-routes of one socket read go out together
      }
      this.pending.set(node, (nb = new NodeBatch()))
    }
    nb.add(parent, i)
  }

  flushPending () {
    const pending = this.pending
    this.pending = null
    for (const [node, nb] of pending) node.push(nb.seal())
  }

  /** The unanswered commands of a batch a node could not take. */
  rerouteBatch (nb) {
    for (let k = 0; k < nb.parents.length; k++) {
      const p = nb.parents[k]
      if (p !== null && nb.live[k]) this.reroute(p, nb.idx[k])
    }
  }

  /** Acknowledge, in input order, the parents whose commands all have a final reply. */
  settle () {
    const parents = this.parents
    while (parents.length && parents[0].left === 0) {
      const p = parents.shift()
      this.stats.ackedRecords += p.ends.length
      p.release?.()
      p.buf = null
      this.onAck(p)
    }
    this.wake()
  }

  reconnected (node, tally) {
    this.onReconnect(countReconnect(this.stats, tally))
  }

  /**
   * After an abort, the run ends once a grace passes without a final reply for any command:
   * replies that only redirect or refuse (MOVED, ASK, TRYAGAIN) keep each node's connection
   * busy, so its own timeout would never fire.
   */
  abortWatch (acked) {
    this.abortTimer = setTimeout(() => {
      if (this.fatal || this.parents.length === 0) return
      if (this.stats.acked !== acked) return this.abortWatch(this.stats.acked)
      this.fail(new PipeloadError('PIPELOAD_ABORTED', `the load was aborted (the cluster gave no command a final reply for ${ABORT_GRACE} ms${this.parking.lastError ? `; last reply: ${this.parking.lastError}` : ''})`))
    }, ABORT_GRACE)
  }

  fail (err) {
    if (this.fatal) return
    this.fatal = err
    for (const node of this.nodes.values()) node.wake()
    this.wake()
  }

  waitFor (ready) {
    return this.gate.wait(ready)
  }

  wake () {
    this.gate.wake()
  }

  /** Wait for every reply. */
  async finish () {
    try {
      await this.waitFor(() => this.parents.length === 0)
    } finally {
      this.close()
    }
  }

  close () {
    this.signal?.removeEventListener('abort', this.onAbort)
    clearTimeout(this.refreshTimer)
    this.parking.close()
    clearTimeout(this.abortTimer)
    for (const node of this.nodes.values()) node.close()
  }

  /** Counters for the summary (load's summary.cluster). */
  cluster () {
    const s = this.stats
    return { masters: this.masters().filter(n => !n.dead).length, moved: s.moved, asked: s.asked, retried: s.retried, rerouted: s.rerouted, refreshes: s.refreshes }
  }
}

/**
 * The sink for load() against a cluster: { sink, close }. `control`: a client of any node (or
 * an ioredis Cluster), disconnected on close when `owned` (load() opened it).
 */
async function openClusterSink (o, input, run, { control, owned, connections = 1 }) {
  const topology = new Topology(control, o.connectTimeout, o.signal, o.said.connectTimeout)
  const sink = new ClusterSink({
    topology,
    endpoint: endpointTemplate(control),
    connectTimeout: o.connectTimeout,
    signal: o.signal,
    window: o.window,
    connections,
    timeout: o.timeout,
    retryTimeout: o.retryTimeout,
    said: o.said,
    file: input.name,
    onFailure: (f, parent) => run.fail(f, parent),
    onAck: b => run.acked(b),
    onReconnect: e => run.reconnected(e),
    written: run.written
  })
  const close = async () => {
    sink.close()
    topology.close()
    if (owned) control.disconnect()
  }
  try {
    await sink.start()
  } catch (err) {
    await close()
    throw err
  }
  const seed = control.isCluster ? 'ioredis Cluster' : dataEndpoint(control).target
  run.target = `cluster via ${seed} (${sink.masters().length} master${sink.masters().length === 1 ? '' : 's'})`
  return { sink, close }
}

/**
 * A ClusterSink on its own (timing mode): { sink, close }, `connections` per master. `control`
 * is a client of any node (or an ioredis Cluster); it is not closed.
 */
async function openClusterPipe (control, { window, connections = 1, timeout = 0, retryTimeout = 0, connectTimeout, signal, file = 'bench', onFailure = () => {} }) {
  const topology = new Topology(control, connectTimeout, signal)
  const sink = new ClusterSink({ topology, endpoint: endpointTemplate(control), connectTimeout, signal, window, connections, timeout, retryTimeout, file, onFailure })
  const close = () => { sink.close(); topology.close() }
  try {
    await sink.start()
  } catch (err) {
    close()
    throw err
  }
  return { sink, close }
}

module.exports = { ClusterSink, Topology, Parent, isCluster, openClusterSink, openClusterPipe, openClusterClient, deletePrefixCluster }
