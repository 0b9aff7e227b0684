'use strict'

const { PipeloadError } = require('../errors')
const { SLOTS } = require('../encode/slots')

// Cluster redirects (MOVED, ASK): what a reply says, checked before cluster.js uses its
// slot as an index of the slot map and its address as a node to connect to.

/** Is this error reply a cluster redirect? */
function isRedirect (message) {
  return message.startsWith('MOVED ') || message.startsWith('ASK ')
}

/** A redirect's "host:port"; Redis 7 may leave the host out when it is the same (":port"). */
function fullAddr (addr, node) {
  return addr.startsWith(':') ? node.endpoint.host + addr : addr
}

/**
 * A MOVED or ASK reply from `node` as { slot, addr }: a slot outside 0..16383 or an address
 * that is not host:port is a protocol error naming the node and the reply (`MOVED
 * 1000000000 h:p` made the slot map a billion entries long).
 */
function redirectOf (m, node) {
  const [, slot, addr = ''] = m.split(' ')
  const port = /:(\d{1,5})$/.exec(addr)
  const bad = !/^\d{1,5}$/.test(slot) || Number(slot) >= SLOTS
    ? `a slot outside 0..${SLOTS - 1}`
    : !port || Number(port[1]) < 1 || Number(port[1]) > 65535 ? 'an address that is not host:port' : null
  if (bad) {
    throw new PipeloadError('PIPELOAD_CLUSTER_REDIRECT', `cluster node ${node.target} sent a redirect with ${bad}: ${m.slice(0, 200)}`, { target: node.target, reply: m })
  }
  return { slot: Number(slot), addr: fullAddr(addr, node) }
}

module.exports = { isRedirect, redirectOf }
