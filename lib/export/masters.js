'use strict'

const { dataEndpoint, openControl } = require('../send/connection')
const { isCluster } = require('../send/target-kind')

// The servers an export reads: the one server, or every master of the cluster the given node
// belongs to (CLUSTER SLOTS), each with the credentials, TLS and database of the control
// connection. The cluster code is loaded only for a cluster node.

async function masterEndpoints (control, { connectTimeout, said, signal }) {
  const bound = { ms: connectTimeout ?? 10000, said: said?.connectTimeout, signal }
  if (!await isCluster(control, bound)) return { cluster: false, endpoints: [dataEndpoint(control)] }
  const { Topology, endpointTemplate } = require('../send/cluster-topology')
  const topology = new Topology(control, connectTimeout ?? 10000, signal, said?.connectTimeout)
  try {
    const ranges = await topology.slots()
    const template = endpointTemplate(control)
    const seen = new Map()
    const nodes = new Set()
    for (const [, , [host, port], ...replicas] of ranges) {
      const target = `${host}:${port}`
      if (!seen.has(target)) seen.set(target, Object.freeze({ ...template, host, port, target }))
      nodes.add(target)
      for (const r of replicas) nodes.add(`${r[0]}:${r[1]}`)
    }
    // The map and every node, for a fault's slot-map refresh (./slots.js).
    const map = { template, nodes: [...nodes], ranges: ranges.map(([start, end, [host, port]]) => [start, end, `${host}:${port}`]) }
    return { cluster: true, endpoints: [...seen.values()], map }
  } finally {
    topology.close()
  }
}

/**
 * With Sentinel, where a reconnect goes (./reconnect.js `owner`): the master the sentinels
 * name now (a failover moves it), asked with a control client of its own, closed at once
 * (`ms`: what is left of the retry time); null when none answers, to try the address before.
 */
function sentinelOwner (o) {
  return async ms => {
    let control = null
    try {
      control = await openControl({ ...o, connectTimeout: ms })
      return dataEndpoint(control)
    } catch (err) {
      if (err.code === 'PIPELOAD_ABORTED') throw err
      return null
    } finally {
      control?.disconnect()
    }
  }
}

module.exports = { masterEndpoints, sentinelOwner }
