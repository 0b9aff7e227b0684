'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError, where } = require('../errors')

// Commands the cluster cannot take now, held by the cluster sink (cluster.js) for a pause
// (100 ms doubling to 1 s) and a slot-map refresh, then routed again: those a node refused
// with "not now" (TRYAGAIN, CLUSTERDOWN, LOADING, BUSY, MASTERDOWN: not-ready.js), and
// those whose slot has no reachable master. Both end within the retry time:
//   - the whole cluster accepted no command for that long (the message names the last
//     refusal and its node);
//   - one command was refused for that long since its first refusal, even while other
//     nodes accept theirs: a node that keeps refusing must not keep a run going for as long
//     as its input lasts, holding every later batch's acknowledgement (and memory) back.

const RETRY_FIRST = 100
const RETRY_MAX = 1000

class Parking {
  /** @param {import('./cluster').ClusterSink} sink */
  constructor (sink) {
    this.sink = sink
    this.parked = [] // [parent, index] pairs waiting for a pause or a slot owner
    this.timer = null
    this.delay = RETRY_FIRST
    this.lastError = null // the last refusal (or redirect), with its node, for messages
  }

  /** Command i of parent was refused by `node` ("not now", reply `m`): hold it, and note since when. */
  refused (node, parent, i, m) {
    this.lastError = `${m} from ${node.target}`
    const refusals = (parent.refusals ??= new Map())
    const first = refusals.get(i)
    if (first) {
      first.node = node.target
      first.reply = m
    } else {
      refusals.set(i, { since: performance.now(), node: node.target, reply: m })
    }
    this.park(parent, i)
  }

  /** Hold a command until after a pause and a refresh: the cluster is not ready for it. */
  park (parent, i) {
    this.parked.push(parent, i)
    if (this.timer) return
    this.timer = setTimeout(() => this.unpark(), this.delay)
    this.delay = Math.min(this.delay * 2, RETRY_MAX)
  }

  async unpark () {
    const sink = this.sink
    await sink.refresh()
    this.timer = null
    if (sink.fatal) return
    const error = this.expired()
    if (error) return sink.fail(error)
    const parked = this.parked
    this.parked = []
    for (let k = 0; k < parked.length; k += 2) sink.reroute(parked[k], parked[k + 1])
    if (!this.parked.length) this.delay = RETRY_FIRST
  }

  /** The error that ends the run once the retry time is up (see above), or null. */
  expired () {
    const { retryTimeout, progress, file, said } = this.sink
    const shown = said.retryTimeout ?? `${retryTimeout} ms` // as given: --retry-timeout 2m says 2m
    if (progress.quietMs() > retryTimeout) {
      return new PipeloadError('PIPELOAD_CONNECTION_LOST',
        `the cluster accepted no command for ${shown}${this.lastError ? ` (last reply: ${this.lastError})` : ' (slots without a reachable master)'}`)
    }
    const now = performance.now()
    const { parked } = this
    for (let k = 0; k < parked.length; k += 2) {
      const parent = parked[k]
      const first = parent.refusals?.get(parked[k + 1])
      if (!first || now - first.since <= retryTimeout) continue
      const r = parent.recordOf(parked[k + 1])
      return new PipeloadError('PIPELOAD_CONNECTION_LOST',
        `cluster node ${first.node} kept refusing a command of ${where(parent.file ?? file, parent.lines[r], parent.offsets?.[r])} for ${shown} (retry timeout), while other nodes accepted theirs (last reply: ${first.reply.slice(0, 200)})`,
        { target: first.node, reply: first.reply })
    }
    return null
  }

  close () {
    clearTimeout(this.timer)
  }
}

module.exports = { Parking }
