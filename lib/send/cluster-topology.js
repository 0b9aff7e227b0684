'use strict'

const { PipeloadError } = require('../errors')
const { ask, bounded, ioredis, dataEndpoint } = require('./connection')
const { tlsConnectOptions } = require('./tls')
const { isCluster } = require('./target-kind')

// A cluster's nodes as the control plane sees them: whether a server is a cluster node,
// where the slot map comes from (Topology, read by the ClusterSink of cluster.js), an
// ioredis Cluster made ready, and the ioredis Cluster helpers of bench (reads, cleanup).

/**
 * An ioredis Cluster that is still connecting sends CLUSTER commands to any of its seeds
 * at random, a dead one too ("Connection is closed"): wait until it has its slot map.
 */
function clusterReady (cluster, ms = 10000) {
  if (cluster.status === 'ready') return Promise.resolve()
  if (cluster.status === 'wait') { // lazyConnect: resolves once ready
    return cluster.connect().catch(err => {
      throw new PipeloadError('PIPELOAD_CONNECTION_FAILED', `the ioredis Cluster given as redis could not connect: ${err.message}`)
    })
  }
  return new Promise((resolve, reject) => {
    const done = err => {
      clearTimeout(timer)
      cluster.off('ready', ready)
      cluster.off('end', ended)
      if (err) reject(err)
      else resolve()
    }
    const ready = () => done()
    const ended = () => done(new PipeloadError('PIPELOAD_CONNECTION_FAILED', 'the ioredis Cluster given as redis closed before it was ready'))
    const timer = setTimeout(() => done(new PipeloadError('PIPELOAD_CONNECTION_FAILED', `the ioredis Cluster given as redis was not ready within ${ms} ms (no seed node answered)`)), ms)
    cluster.once('ready', ready)
    cluster.once('end', ended)
  })
}

const SLOTS_STAGE = "while asking for the cluster's slots (CLUSTER SLOTS)"

/**
 * Where the slot map comes from: CLUSTER SLOTS from the node we were given, or from any
 * node seen in an earlier map when that one is down (its master may have failed over).
 * With an ioredis Cluster, that client asks (it follows failovers itself).
 */
class Topology {
  constructor (control, connectTimeout, signal, said) {
    this.control = control
    this.connectTimeout = connectTimeout
    this.said = said // connectTimeout as given, for messages
    this.signal = signal
    this.clients = new Map() // "host:port" -> ioredis client of ours
    this.known = [] // every node address of the last map, masters first
    this.closed = false // a refresh still running then must not open a client nobody closes
  }

  async slots () {
    const bound = { ms: this.connectTimeout, said: this.said, signal: this.signal }
    if (this.control.isCluster) return ask(this.control, SLOTS_STAGE, () => this.control.cluster('SLOTS'), bound)
    let last = null
    if (this.control.status === 'ready') {
      const host = this.control.stream?.remoteAddress || this.control.options.host
      try {
        return this.remember(await ask(this.control, SLOTS_STAGE, () => this.control.cluster('SLOTS'), bound), host)
      } catch (err) {
        if (err.code === 'PIPELOAD_ABORTED') throw err
        last = err
      }
    }
    for (const addr of this.known) {
      // Closed meanwhile (the run ended while CLUSTER SLOTS was on its way, and closing the
      // control client failed it): a client opened now would retry for ever and keep the
      // process alive.
      if (this.closed) break
      try {
        return this.remember(await this.client(addr).cluster('SLOTS'), addr.slice(0, addr.lastIndexOf(':')))
      } catch (err) {
        last = err
      }
    }
    throw new PipeloadError('PIPELOAD_CONNECTION_FAILED', `no cluster node answered CLUSTER SLOTS: ${last ? last.message : 'no node known'}`)
  }

  /** Keep the node addresses of a map; a node that does not know its own IP yet says "" (the one we asked). */
  remember (ranges, askedHost) {
    const masters = new Set()
    const replicas = new Set()
    for (const [, , ...nodes] of ranges) for (const n of nodes) if (!n[0]) n[0] = askedHost
    for (const [, , master, ...reps] of ranges) {
      masters.add(`${master[0]}:${master[1]}`)
      for (const r of reps) replicas.add(`${r[0]}:${r[1]}`)
    }
    this.known = [...masters, ...[...replicas].filter(a => !masters.has(a))]
    return ranges
  }

  client (addr) {
    let c = this.clients.get(addr)
    if (!c) {
      const i = addr.lastIndexOf(':')
      c = new (ioredis())({
        ...this.control.options,
        host: addr.slice(0, i),
        port: Number(addr.slice(i + 1)),
        lazyConnect: false,
        enableOfflineQueue: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => 500,
        connectTimeout: Math.min(this.connectTimeout || 10000, 1000),
        commandTimeout: 1000,
        connectionName: 'pipeload-topology'
      })
      c.on('error', () => {}) // a node down during a failover: the next one is asked
      this.clients.set(addr, c)
    }
    return c
  }

  close () {
    this.closed = true
    for (const c of this.clients.values()) c.disconnect()
    this.clients.clear()
  }
}

/** An ioredis Cluster with the credentials of `control` (for reads and cleanup); the caller disconnects it. */
async function openClusterClient (control, { ms = 10000, signal } = {}) {
  if (control.isCluster) return control
  const o = control.options
  const host = control.stream?.remoteAddress || o.host
  const port = control.stream?.remotePort || o.port
  const client = new (ioredis().Cluster)([{ host, port }], {
    redisOptions: { username: o.username, password: o.password, tls: o.tls, protocol: 2, connectTimeout: o.connectTimeout, connectionName: 'pipeload' },
    enableOfflineQueue: true,
    lazyConnect: true
  })
  client.on('error', () => {})
  await bounded(() => client.connect(), {
    ms, signal, target: `${host}:${port}`, stage: 'while connecting to the cluster (CLUSTER SLOTS)', cancel: () => client.disconnect()
  }).catch(err => { client.disconnect(); throw err })
  return client
}

/** SCAN MATCH prefix* on every master and UNLINK what is found (one slot per UNLINK). */
async function deletePrefixCluster (client, prefix, count = 1000) {
  let removed = 0
  for (const node of client.nodes('master')) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', prefix + '*', 'COUNT', count)
      cursor = next
      if (keys.length) {
        const p = node.pipeline()
        for (const k of keys) p.unlink(k)
        for (const [err, n] of await p.exec()) if (!err) removed += n
      }
    } while (cursor !== '0')
  }
  return removed
}

/** The data endpoint template (credentials, TLS) for a control client or an ioredis Cluster. */
function endpointTemplate (control) {
  if (!control.isCluster) return dataEndpoint(control)
  const o = control.options.redisOptions || {}
  const tls = o.tls ? tlsConnectOptions(o.tls === true ? {} : o.tls) : undefined
  return Object.freeze({ tls, username: o.username, password: o.password, db: 0 })
}

module.exports = { endpointTemplate, Topology, clusterReady, isCluster, openClusterClient, deletePrefixCluster }
