'use strict'

const { SLOTS } = require('./slots')
const { copyBytes } = require('../read/copy')

// For a cluster: a batch's commands grouped by the master that owns their hash slot, in
// the parse worker, so the sending thread sends each master's part of a batch as one run
// of the batch's bytes, without copying it (lib/send/cluster-node.js NodeBatch#seal),
// instead of copying command by command. Within a master the commands keep their order,
// and commands for different masters never had an order between them on the wire, so
// what each master receives is unchanged.
//
// `owners` maps a slot to its master's number (lib/send/cluster.js ClusterSink#owners),
// as of the last topology the sender told the worker. It only decides where bytes sit:
// the sender still routes every command by its own, current slot map, so a stale `owners`
// costs copies, never a wrong route.

const OTHER = 0xffff // no known owner, no key, keys in several slots
// Per owner: its bytes in a batch, then where its next command goes. Zero between calls
// (a typed array indexed by owner: a Map per command cost as much as the copies).
const bytes = new Float64Array(OTHER + 1)

/**
 * The batch's commands regrouped by owner: a new buffer, and for each command (by its
 * index in the batch) its start and end there. null when they already form one group.
 * @param {object} batch an encoded batch, its commands scanned (./slots.js commandSlots)
 * @param {Buffer} batch.buf the encoded commands
 * @param {Uint32Array} batch.starts start of each command, and the end (cmds + 1 entries)
 * @param {Int16Array} batch.slots hash slot of each command (or NO_KEY / CROSS_SLOT)
 * @param {Uint16Array} owners master number of each slot (OTHER: unknown)
 * @param {(n: number) => Buffer} [alloc] memory for the regrouped bytes
 * @returns {null | { buf: Buffer, starts: Uint32Array, stops: Uint32Array }}
 */
function groupByOwner (batch, owners, alloc = n => Buffer.allocUnsafeSlow(n)) {
  const { starts, slots } = batch
  const cmds = slots.length
  const group = new Uint16Array(cmds)
  const seen = [] // owners in order of first appearance
  for (let k = 0; k < cmds; k++) {
    const s = slots[k]
    const g = s >= 0 && s < SLOTS ? owners[s] : OTHER
    group[k] = g
    if (bytes[g] === 0) seen.push(g)
    bytes[g] += starts[k + 1] - starts[k]
  }
  try {
    return seen.length < 2 ? null : regroup(batch, group, seen, alloc)
  } finally {
    for (const g of seen) bytes[g] = 0 // clean for the next batch
  }
}

/** The copy itself: `bytes` holds each owner's byte count on entry. */
function regroup ({ buf, starts }, group, seen, alloc) {
  const cmds = group.length
  let pos = 0
  for (const g of seen) { // bytes[g] becomes where g's next command goes
    const n = bytes[g]
    bytes[g] = pos
    pos += n
  }
  const out = alloc(pos)
  const into = { buf: out, pos: 0 }
  const newStarts = new Uint32Array(cmds + 1)
  const stops = new Uint32Array(cmds)
  for (let k = 0; k < cmds;) {
    // A run of consecutive commands of one owner is one copy.
    const g = group[k]
    let j = k + 1
    while (j < cmds && group[j] === g) j++
    let p = bytes[g]
    into.pos = p
    copyBytes(buf, starts[k], starts[j], into)
    for (let i = k; i < j; i++) {
      newStarts[i] = p
      p += starts[i + 1] - starts[i]
      stops[i] = p
    }
    bytes[g] = p
    k = j
  }
  newStarts[cmds] = pos
  return { buf: out, starts: newStarts, stops }
}

module.exports = { groupByOwner, OTHER }
