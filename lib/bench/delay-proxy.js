'use strict'

const net = require('node:net')
const { performance } = require('node:perf_hooks')

// A TCP proxy on loopback that makes a fast link slow: every chunk is held for half the
// simulated round trip in each direction before it is forwarded. Order is kept: a chunk is
// never due before the one read ahead of it, so jitter stretches gaps but never reorders
// bytes. It models latency only, not bandwidth or loss.

/** Forward `from` → `to`, each chunk `delay()` ms late, in order, honouring backpressure. */
function forwardDelayed (from, to, delay) {
  const queue = []
  let lastDue = 0
  let timer = null

  const flush = () => {
    timer = null
    const now = performance.now()
    // setTimeout fires on whole milliseconds: deliver what is due within half of one.
    while (queue.length && queue[0].due <= now + 0.5) {
      const item = queue.shift()
      if (item.end) { to.end(); return }
      if (!to.write(item.chunk) && !from.isPaused()) {
        from.pause()
        to.once('drain', () => from.resume())
      }
    }
    schedule()
  }
  const schedule = () => {
    if (timer || queue.length === 0 || to.destroyed) return
    timer = setTimeout(flush, Math.max(0, queue[0].due - performance.now()))
  }
  const push = item => {
    item.due = Math.max(lastDue, performance.now() + delay())
    lastDue = item.due
    queue.push(item)
    schedule()
  }

  from.on('data', chunk => push({ chunk }))
  from.on('end', () => push({ end: true }))
  return () => { clearTimeout(timer); queue.length = 0 }
}

class DelayProxy {
  /**
   * @param {object} o
   * @param {string} o.host target host
   * @param {number} o.port target port
   * @param {number} o.rttMs added round-trip time (half each way)
   * @param {number} [o.jitterMs] each one-way delay varies uniformly by ±jitter/2
   */
  constructor ({ host, port, rttMs, jitterMs = 0 }) {
    this.target = { host, port }
    this.rttMs = rttMs
    this.jitterMs = jitterMs
    this.sockets = new Set()
    this.server = net.createServer(client => this.accept(client))
  }

  oneWay () {
    const jitter = this.jitterMs ? (Math.random() - 0.5) * this.jitterMs : 0
    return Math.max(0, this.rttMs / 2 + jitter)
  }

  accept (client) {
    client.setNoDelay(true)
    const upstream = net.connect(this.target)
    upstream.setNoDelay(true)
    this.sockets.add(client)
    this.sockets.add(upstream)
    const delay = () => this.oneWay()
    const stops = [forwardDelayed(client, upstream, delay), forwardDelayed(upstream, client, delay)]
    const close = () => {
      for (const stop of stops) stop()
      client.destroy()
      upstream.destroy()
      this.sockets.delete(client)
      this.sockets.delete(upstream)
    }
    client.on('error', close)
    upstream.on('error', close)
    client.on('close', close)
    upstream.on('close', close)
  }

  /** Start listening on 127.0.0.1 (a free port unless given); resolves with { host, port }. */
  listen (port = 0) {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(port, '127.0.0.1', () => {
        this.server.removeListener('error', reject)
        const addr = this.server.address()
        resolve({ host: addr.address, port: addr.port })
      })
    })
  }

  /** Stop accepting and drop every connection. */
  close () {
    for (const s of this.sockets) s.destroy()
    this.sockets.clear()
    return new Promise(resolve => this.server.close(() => resolve()))
  }
}

/** Start a delay proxy in front of host:port; resolves with the listening proxy. */
async function startDelayProxy (o) {
  const proxy = new DelayProxy(o)
  const addr = await proxy.listen(o.listenPort)
  proxy.host = addr.host
  proxy.port = addr.port
  return proxy
}

module.exports = { DelayProxy, startDelayProxy, forwardDelayed }
