'use strict'

// A master, a replica and one redis-sentinel watching them as "m", all private, with the
// sentinel's timers shortened so that a failover and the old master's demotion take about a
// second, not the defaults' tens of seconds.

const { startRedis } = require('./redis-server')
const { waitFor } = require('./wait')

/** Start the three; `stop()` ends them. */
async function startSentinelTrio (server) {
  // A full sync starts at once (not after the default 5 s of waiting for more replicas):
  // the replica's first, and the demoted master's after a failover.
  const sync = ['--repl-diskless-sync-delay', '0']
  const trio = { master: null, replica: null, sentinel: null }
  trio.stop = async () => {
    await trio.sentinel?.stop()
    await trio.replica?.stop()
    await trio.master?.stop()
  }
  try {
    trio.master = await startRedis({ server, args: sync })
    trio.replica = await startRedis({ server, args: [...sync, '--replicaof', '127.0.0.1', String(trio.master.port)] })
    trio.sentinel = await startRedis({
      server,
      sentinel: [
        `sentinel monitor m 127.0.0.1 ${trio.master.port} 1`,
        'sentinel down-after-milliseconds m 1000',
        'sentinel failover-timeout m 5000'
      ].join('\n')
    })
    const s = trio.sentinel.client()
    // The sentinel's own timers, shortened with SENTINEL DEBUG (Redis 7.0 and later, Valkey):
    // it asks its master and replicas for INFO every 10 s by default (500 ms here), so finds
    // the replica, and after a failover the old master, at its next INFO; and it demotes an
    // old master that still says it is one only after 4 publish periods of 2 s (250 ms here).
    const ok = await s.call('SENTINEL', 'DEBUG', 'INFO-PERIOD', '500', 'PUBLISH-PERIOD', '250')
    if (ok !== 'OK') throw new Error(`SENTINEL DEBUG answered ${ok}`)
    // The sentinel must know the replica (from the master's INFO) before it can fail over.
    await waitFor('the sentinel to see the replica', async () => {
      const replicas = await s.call('SENTINEL', 'REPLICAS', 'm')
      return replicas.some(r => r[r.indexOf('port') + 1] === String(trio.replica.port) && r[r.indexOf('master-link-status') + 1] === 'ok')
    }, 20_000, 100)
  } catch (err) {
    await trio.stop()
    throw err
  }
  return trio
}

/** Where the sentinel (an ioredis client of it) says master "m" is now: its port, as a string. */
async function masterPort (s) {
  const [, port] = await s.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'm')
  return port
}

module.exports = { startSentinelTrio, masterPort }
