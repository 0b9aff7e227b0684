'use strict'

const { SlotMap } = require('./slots')
const { Redirects } = require('./redirects')

// What a cluster export adds for faults (docs/export.md "Faults"): one slot map, read again
// after a fault (./slots.js); per master the owner of its slots now (where ./reconnect.js
// goes after a failover) and the following of MOVED and ASK (./redirects.js); and at the
// end, the slots that moved between masters while they were read.

/** `found`: masterEndpoints()'s answer; each connection `c` gets c.owner and c.redirects. */
function clusterFaults (found, connections, o) {
  const map = new SlotMap({ ...found.map, connectTimeout: o.connectTimeout, signal: o.signal })
  for (const c of connections) {
    const first = found.map.ranges.find(r => r[2] === c.endpoint.target)[0]
    c.first = c.endpoint.target
    c.owner = async ms => {
      if (await map.refresh(ms) === null) return null
      const owner = map.ownerOf(first)
      return owner === null ? null : map.endpoint(owner)
    }
    c.redirects = new Redirects({ map, stats: c.stats, connectTimeout: o.connectTimeout, signal: o.signal })
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
    close () {
      for (const c of connections) c.redirects.close()
    }
  }
}

module.exports = { clusterFaults }
