'use strict'

const { Gate } = require('./gate')
const { Reservoir, sendStats } = require('./stats')
const { SentBatch } = require('./sent-batch')
const { Pipe } = require('./pipe')
const { SlotScanner, commandSlots, NO_KEY, CROSS_SLOT } = require('../encode/slots')
const { copyBytes } = require('../read/copy')

// Several connections to one server (--connections n): n Pipes (pipe.js), each a pipelined
// Connection with its own window, drain, timeout, reconnect and re-send, exactly as one
// connection's. Connection i owns the hash slots s with s % n = i, the slots computed as a
// cluster does (encode/slots.js: CRC16 of the key or of its {hash tag}), so every command
// on one key goes through one connection, in order. Each encoded batch (a "parent") is split
// into n parts, part i a batch of its own for Pipe i (its records' command counts, so an
// error reply still names its record); the parent is acknowledged (onAck) once every part is,
// in input order across the connections, as the cluster sink does across masters: the
// checkpoint and the rejects file still count an acknowledged prefix of the input.
//
// A command without keys goes through connection 0. A command whose keys lie in different
// slots (MSET a 1 b 2) has no one connection that keeps its order with the commands on each
// of its keys: its batch waits until every connection has nothing in flight, goes whole
// through connection 0, and the next batch waits for its replies (a fence).
//
// Each connection's window counts its parts (a window per connection, not one shared: no
// connection waits for another's replies to send). With keys spread over the slots a part
// holds about 1/n of a batch, so the server holds about window x batchSize replies in all, as
// with one connection, and this process about window batches' bytes (a part has its own copy,
// the batch's are let go once split). At worst, batches that each fall on one connection
// only (a few keys), every connection's window is full of whole batches: n times that.

/** An encoded batch split over the connections: acknowledged once each of its parts is. */
class Parent extends SentBatch {
  constructor (encoded) {
    super(encoded)
    this.left = 0 // parts not acknowledged yet
    this.failed = 0 // records failed by an error reply, each counted once
    this.recFailed = null
  }
}

/** A Pipe of the lanes: its batches know their parent, and its failure ends the others'. */
class LanePipe extends Pipe {
  batchOf (part) {
    const b = super.batchOf(part)
    b.parent = part.parent
    return b
  }

  fail (err) {
    super.fail(err)
    this.lanes.laneFailed(err)
  }
}

class Lanes {
  /**
   * @param {object} o
   * @param {import('./connection').DataConnection[]} o.conns one per lane, connected
   * @param {(ms: number) => Promise<import('./connection').DataConnection>} [o.reconnect]
   * @param {number} o.window each connection's window
   * @param {(failure: object, batch: object) => void} o.onFailure once per failed record
   * @param {(batch: object) => void} [o.onAck] each fully acknowledged batch, in input order
   */
  constructor ({ conns, onFailure, onAck, ...pipe }) {
    this.onFailure = onFailure
    this.onAck = onAck || (() => {})
    this.failure = null
    this.gate = new Gate(() => this.failure)
    this.rtt = new Reservoir()
    this.parents = [] // awaiting acknowledgement, in input order
    this.scanner = new SlotScanner()
    this.fence = null // a parent sent whole through connection 0: the next waits for it
    this.own = { batches: 0, ackedRecords: 0, failedRecords: 0 }
    this.pipes = conns.map(conn => {
      const p = new LanePipe({ ...pipe, conn, onFailure: (f, b, r) => this.failed(f, b.parent, r), onAck: b => this.partAcked(b.parent) })
      p.lanes = this
      p.rtt = this.rtt // one latency distribution for the run, as with one connection
      return p
    })
  }

  get fatal () {
    return this.failure
  }

  /** The send counters, as one Pipe's (stats.js sendStats): records counted per parent. */
  get stats () {
    const s = sendStats()
    for (const p of this.pipes) {
      for (const k of ['commands', 'acked', 'errorReplies', 'reconnects', 'resentBatches', 'resentCommands']) s[k] += p.stats[k]
    }
    return Object.assign(s, this.own)
  }

  /** Resolves once every connection has room for a batch (see Pipe#room). */
  async room () {
    for (const p of this.pipes) await p.room()
  }

  /** Send one encoded batch: each connection's part of it; resolves once all are written. */
  async send (encoded) {
    if (this.failure) throw this.failure
    if (this.fence) await this.waitFor(() => this.fence === null || this.fence.left === 0)
    this.fence = null
    const parent = new Parent(encoded)
    if (parent.cmds === 0) {
      this.parents.push(parent)
      return this.settle()
    }
    this.own.batches++
    const parts = this.split(parent)
    if (parts === null) return this.sendWhole(parent)
    this.parents.push(parent)
    parent.left = parts.filter(Boolean).length
    for (let i = 0; i < parts.length; i++) if (parts[i]) await this.pipes[i].send(parts[i])
  }

  /** A batch with a command whose keys are in several slots: alone on connection 0 (see above). */
  async sendWhole (parent) {
    await this.waitFor(() => this.pipes.every(p => p.inflight.length === 0 && !p.link.connecting))
    this.parents.push(parent)
    parent.left = 1
    this.fence = parent
    await this.pipes[0].send(this.part(parent, parent.buf, parent.cmds, parent.ends))
  }

  /** The parts of a parent, one per connection (null: no command for it); null when a command has keys in several slots. */
  split (parent) {
    const n = this.pipes.length
    const { cmds, ends } = parent
    const { starts, slots } = commandSlots(this.scanner, parent.buf, cmds)
    const lane = new Uint8Array(cmds)
    const count = new Uint32Array(n)
    const bytes = new Float64Array(n)
    for (let k = 0; k < cmds; k++) {
      const s = slots[k]
      if (s === CROSS_SLOT) return null
      const l = s === NO_KEY ? 0 : s % n
      lane[k] = l
      count[l]++
      bytes[l] += starts[k + 1] - starts[k]
    }
    const parts = new Array(n).fill(null)
    const only = count.indexOf(cmds)
    if (only !== -1) { // every command for one connection: the parent's bytes as they are
      parts[only] = this.part(parent, parent.buf, cmds, ends)
      return parts
    }
    for (let l = 0; l < n; l++) {
      if (count[l] > 0) parts[l] = this.part(parent, Buffer.allocUnsafe(bytes[l]), count[l], new Uint32Array(ends.length))
    }
    this.fill(parent, parts, lane, starts)
    // The parts have their own copies: the parent's bytes (a worker's buffer) can go now.
    parent.release?.()
    parent.release = null
    parent.buf = null
    return parts
  }

  /** Copy each command into its connection's part (a run of commands for one connection in one copy), and count each part's commands per record. */
  fill (parent, parts, lane, starts) {
    const { buf, ends, cmds } = parent
    const into = parts.map(p => p && { buf: p.buf, pos: 0 })
    const done = new Uint32Array(parts.length) // commands of each part so far
    let k = 0
    for (let r = 0; r < ends.length; r++) {
      const end = ends[r]
      while (k < end) {
        const l = lane[k]
        let j = k + 1
        while (j < end && lane[j] === l) j++
        copyBytes(buf, starts[k], starts[j], into[l])
        done[l] += j - k
        k = j
      }
      for (let l = 0; l < parts.length; l++) if (parts[l]) parts[l].ends[r] = done[l]
    }
    if (k !== cmds) throw new Error(`lanes: ${k} of ${cmds} commands split`)
  }

  /** A part: a batch for one Pipe, its records the parent's (positions shared), none of the parent's bytes to release. */
  part (parent, buf, cmds, ends) {
    return {
      buf,
      cmds,
      ends,
      lines: parent.lines,
      offsets: parent.offsets,
      marks: parent.marks,
      raws: parent.raws,
      records: 0,
      file: parent.file,
      fileIndex: parent.fileIndex,
      seq: parent.seq,
      parent
    }
  }

  /** Record r of a parent failed on one connection: counted once, whichever connections it failed on. */
  failed (f, parent, r) {
    parent.recFailed ??= new Uint8Array(parent.ends.length)
    if (parent.recFailed[r]) return
    parent.recFailed[r] = 1
    parent.failed++
    this.own.failedRecords++
    this.onFailure(f, parent)
  }

  partAcked (parent) {
    if (--parent.left === 0 && parent === this.parents[0]) this.settle()
    else this.wake()
  }

  /** Acknowledge, in input order, the parents whose parts all are. */
  settle () {
    const parents = this.parents
    while (parents.length && parents[0].left === 0) {
      const p = parents.shift()
      this.own.ackedRecords += p.ends.length
      p.release?.()
      p.buf = null
      this.onAck(p)
    }
    this.wake()
  }

  /** One connection failed for good (a lost connection past the retry time, a refusal): the run stops, on every connection. */
  laneFailed (err) {
    if (this.failure) return
    this.failure = err
    for (const p of this.pipes) if (!p.fatal) p.fail(err)
    this.wake()
  }

  waitFor (ready) {
    return this.gate.wait(ready)
  }

  wake () {
    this.gate.wake()
  }

  /** Wait for every reply on every connection. */
  async finish () {
    try {
      const ends = await Promise.allSettled(this.pipes.map(p => p.finish()))
      if (this.failure) throw this.failure
      const bad = ends.find(e => e.status === 'rejected')
      if (bad) throw bad.reason
    } finally {
      this.close()
    }
  }

  close () {
    for (const p of this.pipes) p.close()
  }

  /** End each connection once what was written is flushed. */
  end () {
    for (const p of this.pipes) p.conn.end()
  }
}

/**
 * `count` data connections opened side by side with `open()`: all of them, or none (those
 * that opened are closed again and the first failure is thrown).
 */
async function openConnections (count, open) {
  const opened = await Promise.allSettled(Array.from({ length: count }, open))
  const bad = opened.find(r => r.status === 'rejected')
  if (bad) {
    for (const r of opened) if (r.status === 'fulfilled') r.value.close()
    throw bad.reason
  }
  return opened.map(r => r.value)
}

module.exports = { openConnections, Lanes }
