'use strict'

// Peak memory during one row. The server side comes from CLIENT LIST: `omem` is the reply
// list the server holds for a connection (what grows when a client pipelines faster than it
// reads), `tot-mem` all of the connection's buffers. The client side is this process's RSS.
// Both are sampled, so a peak shorter than the interval can be missed; the figures are
// lower bounds, good for comparing rows.

/** Parse CLIENT LIST text into an array of { field: value } objects. */
function parseClientList (text) {
  return String(text).split('\n').filter(l => l.trim()).map(line => {
    const f = {}
    for (const kv of line.trim().split(' ')) {
      const i = kv.indexOf('=')
      if (i > 0) f[kv.slice(0, i)] = kv.slice(i + 1)
    }
    return f
  })
}

/** True when the error says this user may not run CLIENT (ACL, renamed command). */
function notPermitted (err) {
  return /NOPERM|unknown command|ERR unknown|no permissions/i.test(String(err && err.message))
}

class MemorySampler {
  /**
   * @param {object} o
   * @param {import('ioredis').Redis} o.control a client that is not the measured one
   * @param {(client: object) => boolean} o.match which CLIENT LIST entries are ours
   * @param {string|null} [o.id] the measured connection's id: asks `CLIENT LIST ID <id>`
   * @param {number} o.intervalMs
   * @param {boolean} [o.enabled] false: report the server side as n/a (null) without asking
   */
  constructor ({ control, match, id, intervalMs, enabled = true }) {
    this.control = control
    this.match = match
    this.id = id ?? null
    this.intervalMs = intervalMs
    this.server = { omem: 0, totMem: 0, samples: 0, permitted: enabled }
    this.rss = process.memoryUsage.rss()
    this.running = false
    this.loop = null
    this.useIdFilter = this.id !== null
  }

  start () {
    this.running = true
    this.rssTimer = setInterval(() => this.sampleRss(), this.intervalMs)
    this.loop = this.run()
    return this
  }

  sampleRss () {
    const rss = process.memoryUsage.rss()
    if (rss > this.rss) this.rss = rss
  }

  async run () {
    while (this.running && this.server.permitted) {
      await this.sampleServer()
      if (this.running) await new Promise(resolve => setTimeout(resolve, this.intervalMs))
    }
  }

  async sampleServer () {
    let text
    try {
      text = this.useIdFilter
        ? await this.control.call('CLIENT', 'LIST', 'ID', String(this.id))
        : await this.control.call('CLIENT', 'LIST')
    } catch (err) {
      // CLIENT LIST ID came with Redis 6.2: fall back to the whole list once.
      if (this.useIdFilter && /syntax|wrong number|ERR/i.test(err.message) && !/NOPERM/.test(err.message)) {
        this.useIdFilter = false
        return
      }
      if (notPermitted(err) || this.control.status !== 'ready') this.server.permitted = false
      return
    }
    this.server.samples++
    for (const c of parseClientList(text)) {
      if (!this.match(c)) continue
      const omem = Number(c.omem) || 0
      const totMem = Number(c['tot-mem']) || 0
      if (omem > this.server.omem) this.server.omem = omem
      if (totMem > this.server.totMem) this.server.totMem = totMem
    }
  }

  /** Stop; one last sample of each, then { serverReplyPeakBytes, serverTotalPeakBytes, clientRssPeakBytes }. */
  async stop () {
    this.running = false
    clearInterval(this.rssTimer)
    this.sampleRss()
    await this.loop
    const ok = this.server.permitted && this.server.samples > 0
    return {
      serverReplyPeakBytes: ok ? this.server.omem : null,
      serverTotalPeakBytes: ok ? this.server.totMem : null,
      serverSamples: this.server.samples,
      clientRssPeakBytes: this.rss
    }
  }
}

/** The largest client id on the server now (ids only grow), or null when CLIENT is not permitted. */
async function maxClientId (control) {
  try {
    return Math.max(0, ...parseClientList(await control.call('CLIENT', 'LIST')).map(c => Number(c.id) || 0))
  } catch {
    return null
  }
}

/**
 * The pipeload-data connections opened from now on to `control` (newer than every client
 * there now): a started MemorySampler, n/a (null) when CLIENT is not permitted.
 */
async function sampleNewDataConnections (control, intervalMs) {
  const before = await maxClientId(control)
  return new MemorySampler({
    control, enabled: before !== null, match: c => c.name === 'pipeload-data' && Number(c.id) > before, intervalMs
  }).start()
}

/**
 * A cluster: the data connections opened from now on to each master (one per master),
 * sampled with CLIENT LIST on each. stop() gives the largest connection's peaks; null when
 * any master refuses CLIENT (n/a, as on one server).
 */
async function sampleCluster (cluster, intervalMs) {
  const samplers = []
  for (const node of cluster.nodes('master')) samplers.push(await sampleNewDataConnections(node, intervalMs))
  return {
    async stop () {
      const all = await Promise.all(samplers.map(s => s.stop()))
      const peak = k => all.some(m => m[k] === null) ? null : Math.max(...all.map(m => m[k]))
      return {
        serverReplyPeakBytes: peak('serverReplyPeakBytes'),
        serverTotalPeakBytes: peak('serverTotalPeakBytes'),
        serverSamples: all.reduce((n, m) => n + m.serverSamples, 0),
        clientRssPeakBytes: Math.max(...all.map(m => m.clientRssPeakBytes))
      }
    }
  }
}

module.exports = { MemorySampler, parseClientList, notPermitted, maxClientId, sampleNewDataConnections, sampleCluster }
