'use strict'

const { SlotMap } = require('./slots')
const { Redirects } = require('./redirects')
const { Requests, openRequests } = require('./requests')
const { encodeCommands } = require('./commands')
const { globMatch } = require('./glob')
const { connectData } = require('../send/connection')

// Rounds of reading moved slots again: slots still moving after that many are reported only.
const ROUNDS = 3

// What a cluster export adds for faults (docs/export.md "Faults"): one slot map, read again
// after a fault (./slots.js); per master the owner of its slots now (where ./reconnect.js
// goes after a failover) and the following of MOVED and ASK (./redirects.js); and at the
// end, the slots that moved between masters while they were read: their keys are read again
// where they are now (CLUSTER GETKEYSINSLOT), so that a key moved from a master not yet
// scanned to one scanned already is not missed; each round may find more slots moved.

/** `found`: masterEndpoints()'s answer; each connection `c` gets c.owner and c.redirects. */
function clusterFaults (found, connections, o) {
  const extra = []
  const map = new SlotMap({ ...found.map, first: o.firstSlots ?? found.map.ranges, connectTimeout: o.connectTimeout, signal: o.signal })
  for (const c of connections) {
    const first = found.map.ranges.find(r => r[2] === c.endpoint.target)[0]
    c.first = c.endpoint.target
    c.owner = async ms => {
      if (await map.refresh(ms) === null) return null
      const owner = map.ownerOf(first)
      return owner === null ? null : map.endpoint(owner)
    }
    c.redirects = new Redirects({ map, stats: c.stats, link: o })
  }
  return {
    map,
    /** The slots whose master now is not the one their keys were read from: moved meanwhile. */
    async moved () {
      if (await map.refresh() === null) return null
      const now = new Map(connections.map(c => [c.first, c.target]))
      const slots = []
      for (const [start, end, was] of map.first) {
        for (let s = start; s <= end; s++) if (map.ownerOf(s) !== now.get(was)) slots.push(s)
      }
      return slots
    },
    /**
     * Read again the keys of the slots that moved while they were read, on their masters now,
     * through `read(requests, keys, stats)`; until no more move (ROUNDS at most). Resolves
     * with { slots: the slots moved (null: no node answered CLUSTER SLOTS), reread: the
     * slots read again }.
     */
    async reread (read) {
      const done = new Set()
      let slots = null
      for (let round = 0; round < ROUNDS; round++) {
        slots = await this.moved()
        if (slots === null) break
        // [node, slot]: a moved slot on its master now; a slot being migrated at the end on
        // both its nodes (the keys moved already are on the importing one).
        const pairs = [...slots.map(s => [map.ownerOf(s), s]), ...await migrating(map, o)]
        const byNode = new Map()
        for (const [node, slot] of pairs) {
          if (done.has(`${node}/${slot}`)) continue
          done.add(`${node}/${slot}`)
          if (!byNode.has(node)) byNode.set(node, [])
          byNode.get(node).push(slot)
        }
        if (byNode.size === 0) break
        await Promise.all([...byNode].map(([node, list]) => readSlots(map, node, list, { read, ...o })))
      }
      return { slots, reread: new Set([...done].map(d => d.slice(d.indexOf('/') + 1))).size }
    },
    /** Redirects for the reads of reread(). */
    redirects (stats) {
      const r = new Redirects({ map, stats, link: o })
      extra.push(r)
      return r
    },
    close () {
      for (const c of connections) c.redirects.close()
      for (const r of extra) r.close()
    }
  }
}

/**
 * [node, slot] for each slot that a master says it is migrating or importing (CLUSTER NODES,
 * its own line: `[slot->-id]`, `[slot-<-id]`); none when a master does not answer (no +cluster).
 */
async function migrating (map, o) {
  const masters = [...new Set(map.ranges.map(r => r[2]))]
  const pairs = []
  await Promise.all(masters.map(async node => {
    let requests = null
    try {
      requests = new Requests(await connectData(map.endpoint(node), o.connectTimeout, o.signal))
      const [nodes] = await requests.send(encodeCommands([['CLUSTER', 'NODES']]), 1)
      if (nodes instanceof Error) return
      const mine = String(nodes).split('\n').find(l => / myself[, ]/.test(l) || /,myself/.test(l)) ?? ''
      for (const m of mine.matchAll(/\[(\d+)-[<>]-\w+\]/g)) pairs.push([node, Number(m[1])])
    } catch (err) {
      if (err.code === 'PIPELOAD_ABORTED') throw err
    } finally {
      requests?.close()
    }
  }))
  return pairs
}

/** The keys of `slots` on `owner`, read with o.read(requests, keys). */
async function readSlots (map, owner, slots, o) {
  const requests = await openRequests(map.endpoint(owner), o)
  try {
    for (const slot of slots) {
      const [n] = await requests.send(encodeCommands([['CLUSTER', 'COUNTKEYSINSLOT', String(slot)]]), 1)
      if (!(n > 0)) continue
      const [keys] = await requests.send(encodeCommands([['CLUSTER', 'GETKEYSINSLOT', String(slot), String(n)]]), 1)
      if (!Array.isArray(keys)) continue
      const wanted = o.match === undefined ? keys : keys.filter(k => globMatch(o.match, k))
      if (wanted.length) await o.read(requests, wanted)
    }
  } finally {
    requests.close()
  }
}

module.exports = { clusterFaults }
