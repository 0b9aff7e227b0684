'use strict'

// Starts a private Redis Cluster for integration tests: N masters (and optionally one
// replica each), every node a redis-server (or valkey-server: the `server` option) from
// startRedis() on its own free loopback port and tmpdir (so its nodes.conf is its own),
// joined with `redis-cli --cluster create` (valkey-cli for Valkey nodes).

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const { promisify } = require('node:util')
const Redis = require('ioredis')
const { startRedis, REDIS } = require('./redis-server')
const wait = require('./wait')

const run = promisify(execFile)
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms)) // pacing input in cluster.test.js, not waiting
// Cluster checks open a client per node: poll them every 100 ms.
const waitFor = (what, check, timeoutMs = wait.scaledMs(20_000)) => wait.waitFor(what, check, timeoutMs, 100)
// repl-diskless-sync-delay 0: a replica's full sync starts at once, not after the default 5 s
// of waiting for more replicas (a 3 + 3 cluster was ready in 6.2 s, now 2.2 s).
const NODE_ARGS = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1000', '--repl-diskless-sync-delay', '0']

/** redis-cli (or `cli`, e.g. valkey-cli) with args; resolves with stdout. */
async function redisCli (args, timeout = 60_000, cli = 'redis-cli') {
  const { stdout } = await run(cli, args, { timeout, maxBuffer: 64 * 1024 * 1024 })
  return stdout
}

/**
 * @param {{ masters?: number, replicas?: number, server?: object, password?: string, tls?: object }} [o]
 *   server: the kind of every node, from serverKinds() (default redis-server); password:
 *   requirepass and masterauth on every node (the helper's own clients and cli calls
 *   authenticate); tls: { cert, key, ca, clientCert, clientKey } (paths, as makeCerts()
 *   names them), every node on a TLS port only, with the cluster bus and replication over
 *   TLS too (the bus wants client certificates: clientCert/clientKey)
 * @returns cluster: { nodes, url, client(), cli(args), slots(), masterPorts(), replicaOf(port), reshard(from, to, n), stop(), … }
 */
async function startCluster ({ masters = 3, replicas = 0, server = REDIS, password, tls } = {}) {
  const count = masters * (1 + replicas)
  const args = [...NODE_ARGS, ...(password ? ['--masterauth', password] : [])]
  if (tls) args.push('--tls-cluster', 'yes', '--tls-replication', 'yes', '--tls-client-cert-file', tls.clientCert, '--tls-client-key-file', tls.clientKey)
  const serverTls = tls && { cert: tls.cert, key: tls.key, ca: tls.ca }
  const nodes = await Promise.all(Array.from({ length: count }, () => startRedis({ args, server, password, tls: serverTls })))
  const auth = [...(password ? ['-a', password, '--no-auth-warning'] : []), ...(tls ? ['--tls', '--cacert', tls.ca] : [])]
  const cli = (args, timeout) => redisCli([...auth, ...args], timeout, server.cli)
  const cluster = {
    nodes,
    server,
    get url () { return nodes[0].url },
    /** The cli of this server kind (redis-cli, valkey-cli) with args; resolves with stdout. */
    cli,
    /** An ioredis Cluster client (closed by stop()). */
    client () {
      const c = new Redis.Cluster(nodes.filter(n => n.alive !== false).map(n => ({ host: n.host, port: n.port })), {
        redisOptions: { protocol: 2, ...(password ? { password } : {}), ...(tls ? { tls: { ca: fs.readFileSync(tls.ca) } } : {}) }
      })
      c.on('error', () => {})
      clients.push(c)
      return c
    },
    /** CLUSTER SLOTS as seen by one live node: [[start, end, port of the master]]. */
    async slots (node = liveNodes()[0]) {
      const c = node.client()
      try {
        return (await c.cluster('SLOTS')).map(([s, e, m]) => [s, e, m[1]])
      } finally {
        c.disconnect()
      }
    },
    /** The node object serving as master of a port. */
    nodeAt (port) {
      return nodes.find(n => n.port === port)
    },
    /** Wait until every live node says cluster_state:ok and agrees on who owns every slot. */
    async settled (timeoutMs = 20_000) {
      await waitFor('the cluster to settle', async () => {
        let view = null
        for (const n of liveNodes()) {
          const c = n.client()
          try {
            const info = await c.cluster('INFO')
            if (!/cluster_state:ok/.test(info)) return false
            const slots = JSON.stringify((await c.cluster('SLOTS')).map(([s, e, m]) => [s, e, m[1]]).sort((a, b) => a[0] - b[0]))
            if (view !== null && slots !== view) return false
            view = slots
          } finally {
            c.disconnect()
          }
        }
        return true
      }, timeoutMs)
    },
    /** Live master ports. */
    async masterPorts () {
      return [...new Set((await cluster.slots()).map(r => r[2]))]
    },
    /** The live node replicating the master at `masterPort`, its link up. */
    async replicaOf (masterPort) {
      for (const n of liveNodes()) {
        const c = n.client()
        try {
          const info = await c.info('replication')
          if (new RegExp(`master_port:${masterPort}\\b`).test(info) && /master_link_status:up/.test(info)) return n
        } finally {
          c.disconnect()
        }
      }
      throw new Error(`no replica of ${masterPort}`)
    },
    /**
     * `<cli> --cluster reshard`: `slots` slots (keys and all) from the master at port `from` to
     * the one at `to`; `replace`: --cluster-replace; `pipeline`: keys per MIGRATE.
     */
    async reshard (from, to, slots, { replace = false, pipeline = 50 } = {}) {
      const idOf = async port => {
        const c = cluster.nodeAt(port).client()
        try { return await c.cluster('MYID') } finally { c.disconnect() }
      }
      await cli(['--cluster', 'reshard', `127.0.0.1:${from}`, '--cluster-from', await idOf(from), '--cluster-to', await idOf(to),
        '--cluster-slots', String(slots), '--cluster-yes', ...(replace ? ['--cluster-replace'] : []), '--cluster-pipeline', String(pipeline)])
    },
    /** FLUSHALL on every live master. */
    async flushall () {
      for (const port of await cluster.masterPorts()) {
        const c = cluster.nodeAt(port).client()
        try { await c.flushall() } finally { c.disconnect() }
      }
    },
    async stop () {
      for (const c of clients) c.disconnect()
      await Promise.all(nodes.map(n => n.stop()))
    }
  }
  const clients = []
  const liveNodes = () => nodes.filter(n => n.alive !== false)
  try {
    const addrs = nodes.map(n => `${n.host}:${n.port}`)
    if (masters >= 3) {
      await cli(['--cluster', 'create', ...addrs, '--cluster-replicas', String(replicas), '--cluster-yes'])
    } else {
      // redis-cli --cluster create wants 3 masters or more: assign the slots by hand.
      if (replicas) throw new Error('replicas need 3 masters or more')
      const per = Math.ceil(16384 / masters)
      for (let i = 0; i < masters; i++) {
        await cli(['-p', String(nodes[i].port), 'CLUSTER', 'ADDSLOTSRANGE', String(i * per), String(Math.min(16383, (i + 1) * per - 1))])
        if (i > 0) await cli(['-p', String(nodes[i].port), 'CLUSTER', 'MEET', nodes[0].host, String(nodes[0].port)])
      }
    }
    await cluster.settled()
    if (replicas) {
      await waitFor('replicas to sync', async () => {
        for (const n of nodes) {
          const c = n.client()
          try {
            const info = await c.info('replication')
            if (/role:slave/.test(info) && !/master_link_status:up/.test(info)) return false
          } finally {
            c.disconnect()
          }
        }
        return true
      })
    }
  } catch (err) {
    await cluster.stop()
    throw err
  }
  return cluster
}

module.exports = { startCluster, redisCli, waitFor, sleep }
