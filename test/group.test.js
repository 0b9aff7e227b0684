'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// lib/encode/group.js: a batch's commands grouped by the master owning their slot (done in
// the parse workers), and the cluster sink's NodeBatch copying one run per master from it.
const { groupByOwner, OTHER } = require('../lib/encode/group')
const { SlotScanner, commandSlots, slotOf, SLOTS, NO_KEY } = require('../lib/encode/slots')
const { NodeBatch } = require('../lib/send/cluster-node')
const { prng } = require('./helpers/prng')

function encode (commands) {
  return Buffer.from(commands.map(args => `*${args.length}\r\n` + args.map(a => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')).join(''))
}

/** Owners of `masters` masters, each a contiguous range of slots, as CLUSTER SLOTS hands them out. */
function ownersOf (masters) {
  const owners = new Uint16Array(SLOTS)
  for (let s = 0; s < SLOTS; s++) owners[s] = Math.floor(s * masters / SLOTS)
  return owners
}

/** Whether buffer x lies inside y's memory (x is a view of y, not a copy). */
function within (x, y) {
  return x.buffer === y.buffer && x.byteOffset >= y.byteOffset && x.byteOffset + x.length <= y.byteOffset + y.length
}

/** A parent as lib/send/cluster.js's Parent has it: buf, starts, stops, cmdEnd. */
function parentOf (buf, starts, stops = null) {
  return { buf, starts, stops, cmdEnd: k => stops === null ? starts[k + 1] : stops[k] }
}

describe('groupByOwner', () => {
  it('keeps every command whole, each master\'s commands together and in their order', () => {
    const rand = prng(7)
    for (const masters of [2, 3, 12]) {
      const commands = Array.from({ length: 500 }, (_, i) => i % 97 === 0 ? ['PING'] : ['HSET', `user:${rand.int(1e6)}`, 'name', 'é'.repeat(i % 5)])
      const buf = encode(commands)
      const { starts, slots } = commandSlots(new SlotScanner(), buf, commands.length)
      const owners = ownersOf(masters)
      const g = groupByOwner({ buf, starts, slots }, owners)
      expect(g.buf.length).toBe(buf.length)
      const ownerOf = k => slots[k] >= 0 ? owners[slots[k]] : OTHER
      let last = -1
      const seen = []
      for (let k = 0; k < commands.length; k++) {
        // The same bytes, at the new place.
        expect(g.buf.subarray(g.starts[k], g.stops[k]).equals(buf.subarray(starts[k], starts[k + 1]))).toBe(true)
        seen.push([g.starts[k], k])
      }
      // In the new buffer: each owner one run, the commands of a run in input order, no gap.
      seen.sort((a, b) => a[0] - b[0])
      const runs = []
      for (const [pos, k] of seen) {
        expect(pos).toBe(last === -1 ? 0 : g.stops[last])
        if (runs.at(-1)?.owner !== ownerOf(k)) runs.push({ owner: ownerOf(k), first: k })
        else expect(k).toBeGreaterThan(last)
        last = k
      }
      expect(new Set(runs.map(r => r.owner)).size).toBe(runs.length)
      expect(runs.length).toBe(new Set(commands.map((_, k) => ownerOf(k))).size)
    }
  })

  it('one owner (or none known): nothing to do', () => {
    const buf = encode([['SET', 'a', '1'], ['SET', 'b', '2'], ['PING']])
    const { starts, slots } = commandSlots(new SlotScanner(), buf, 3)
    expect(slots[2]).toBe(NO_KEY)
    expect(groupByOwner({ buf, starts, slots: slots.subarray(0, 2) }, new Uint16Array(SLOTS))).toBe(null) // all on master 0
    expect(groupByOwner({ buf, starts, slots }, new Uint16Array(SLOTS).fill(OTHER))).toBe(null) // no master known
  })
})

describe('NodeBatch.seal', () => {
  it('gives the commands of one master in the order added: one copy per run of adjacent bytes, none when the batch is one run', () => {
    const commands = Array.from({ length: 60 }, (_, i) => ['SET', `k${i}`, `v${i}`])
    const buf = encode(commands)
    const { starts, slots } = commandSlots(new SlotScanner(), buf, commands.length)
    const owners = ownersOf(3)
    const g = groupByOwner({ buf, starts, slots }, owners)
    for (const [parent, grouped] of [[parentOf(buf, starts), false], [parentOf(g.buf, g.starts, g.stops), true]]) {
      const byOwner = new Map()
      for (let k = 0; k < commands.length; k++) {
        const o = owners[slotOf(`k${k}`)]
        if (!byOwner.has(o)) byOwner.set(o, new NodeBatch())
        byOwner.get(o).add(parent, k)
      }
      for (const [o, nb] of byOwner) {
        const copies = []
        const real = parent.buf.copy
        parent.buf.copy = function (...args) { copies.push(args); return real.apply(this, args) }
        nb.seal()
        parent.buf.copy = real
        const want = encode(commands.filter((_, k) => owners[slotOf(`k${k}`)] === o))
        expect(nb.buf.equals(want)).toBe(true)
        if (grouped) {
          expect(copies.length, `owner ${o}`).toBe(0) // the parent's own bytes
          expect(within(nb.buf, parent.buf)).toBe(true)
        } else {
          expect(copies.length).toBeGreaterThan(1)
          expect(within(nb.buf, parent.buf)).toBe(false)
        }
      }
    }
  })

  it('two parents, or an ASKING among the commands: copied into a buffer of its own, byte for byte', () => {
    const a = encode([['SET', 'a1', '1'], ['SET', 'a2', '2']])
    const b = encode([['SET', 'b1', '3']])
    const pa = parentOf(a, commandSlots(new SlotScanner(), a, 2).starts)
    const pb = parentOf(b, commandSlots(new SlotScanner(), b, 1).starts)
    const two = new NodeBatch()
    two.add(pa, 0)
    two.add(pa, 1)
    two.add(pb, 0)
    expect(two.seal().buf.equals(Buffer.concat([a, b]))).toBe(true)
    expect(within(two.buf, a) || within(two.buf, b)).toBe(false)
    const asked = new NodeBatch()
    asked.asking()
    asked.add(pa, 1)
    expect(asked.seal().buf.toString()).toBe('*1\r\n$6\r\nASKING\r\n' + encode([['SET', 'a2', '2']]).toString())
    expect([...asked.live]).toEqual([1, 1])
  })
})
