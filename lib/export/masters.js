'use strict'

const { dataEndpoint } = require('../send/connection')
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
    for (const [, , [host, port]] of ranges) {
      const target = `${host}:${port}`
      if (!seen.has(target)) seen.set(target, Object.freeze({ ...template, host, port, target }))
    }
    return { cluster: true, endpoints: [...seen.values()] }
  } finally {
    topology.close()
  }
}

module.exports = { masterEndpoints }
