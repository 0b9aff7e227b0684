'use strict'

const { connectData } = require('../send/connection')
const { Requests } = require('./requests')
const { encodeCommands } = require('./commands')

// A cluster's slot map as export needs it after a fault (./reconnect.js, ./redirects.js):
// CLUSTER SLOTS asked of the nodes known (masters and replicas, the ones of the first map
// and of every map since) on a short-lived connection each, until one answers.

class SlotMap {
  /**
   * `template`: credentials and TLS of every node (lib/send/cluster-topology.js endpointTemplate);
   * `nodes`: 'host:port' of the nodes known; `ranges`: the map now ([start, end, owner
   * 'host:port']); `first`: the map the export began with (a resumed one's, from its checkpoint).
   */
  constructor ({ template, nodes, ranges, first = ranges, connectTimeout, signal }) {
    this.template = template
    this.known = [...nodes]
    this.first = first
    this.ranges = ranges
    this.connectTimeout = connectTimeout
    this.signal = signal
    this.refreshes = 0
  }

  endpoint (target) {
    const at = target.lastIndexOf(':')
    return Object.freeze({ ...this.template, host: target.slice(0, at), port: Number(target.slice(at + 1)), target })
  }

  /** The map now, from the first node known that answers (`ms` per node at most); null: none did. */
  async refresh (ms = this.connectTimeout) {
    for (const target of this.known) {
      let requests = null
      try {
        requests = new Requests(await connectData(this.endpoint(target), Math.min(ms, this.connectTimeout), this.signal))
        const [reply] = await requests.send(encodeCommands([['CLUSTER', 'SLOTS']]), 1)
        if (reply instanceof Error || !Array.isArray(reply) || reply.length === 0) continue
        this.learn(reply, target.slice(0, target.lastIndexOf(':')))
        this.refreshes++
        return this.ranges
      } catch (err) {
        if (err.code === 'PIPELOAD_ABORTED') throw err
      } finally {
        requests?.close()
      }
    }
    return null
  }

  learn (reply, askedHost) {
    const ranges = []
    for (const [start, end, ...nodes] of reply) {
      const addrs = nodes.map(n => `${String(n[0]) || askedHost}:${n[1]}`)
      for (const a of addrs) if (!this.known.includes(a)) this.known.push(a)
      ranges.push([Number(start), Number(end), addrs[0]])
    }
    this.ranges = ranges
  }

  /** The master of `slot` in the map last read. */
  ownerOf (slot) {
    for (const [start, end, owner] of this.ranges) if (slot >= start && slot <= end) return owner
    return null
  }

  /** Whether `target` is a master with slots in the map last read. */
  serves (target) {
    return this.ranges.some(r => r[2] === target)
  }
}

module.exports = { SlotMap }
