'use strict'

const { PipeloadError } = require('../errors')
const { ask } = require('./connection')

// --connections auto: how many connections per server (per master) a load opens. Several
// connections only pay where the server reads and writes its sockets on I/O threads
// (io-threads > 1); without them one thread serves every connection, and more connections
// only split the same pipeline into smaller writes. With them: one connection per I/O
// thread, at most AUTO_MAX (docs/performance.md "Several connections" says why).
// Asked once, of the server given (a cluster: the seed node, taken for every master).

const AUTO_MAX = 4

/**
 * The connection count for `connections` ('auto' or a number) and, for 'auto', why:
 * { count, auto } (auto: null for a number given). With Sentinel one connection: its
 * failover check follows one connection's replication offsets (pipe.js, replication.js).
 */
async function connectionCount (control, { connections, connectTimeout, said, signal }) {
  const sentinel = Boolean(control.options?.sentinels)
  if (sentinel && connections !== 'auto' && connections > 1) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `connections ${connections} cannot be used with Sentinel (a failover is checked against one connection's replication offset): use connections 1`, { option: 'connections' })
  }
  if (connections !== 'auto') return { count: connections, auto: null }
  if (sentinel) return { count: 1, auto: 'with Sentinel one connection' }
  let reply
  try {
    reply = await ask(control, 'while asking CONFIG GET io-threads (--connections auto)',
      () => control.config('GET', 'io-threads'), { ms: connectTimeout, said, signal })
  } catch (err) {
    if (err.code === 'PIPELOAD_TIMEOUT' || err.code === 'PIPELOAD_ABORTED') throw err
    return { count: 1, auto: `CONFIG GET io-threads was refused (${String(err.message).split('\n')[0].slice(0, 120)}): assumed no I/O threads` }
  }
  const threads = Number(Array.isArray(reply) ? reply[1] : NaN)
  if (!Number.isSafeInteger(threads) || threads < 1) return { count: 1, auto: 'the server has no io-threads setting: assumed no I/O threads' }
  return { count: Math.min(threads, AUTO_MAX), auto: `io-threads ${threads}` }
}

module.exports = { connectionCount, AUTO_MAX }
