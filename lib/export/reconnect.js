'use strict'

const { performance } = require('node:perf_hooks')
const { setTimeout: sleep } = require('node:timers/promises')
const { PipeloadError } = require('../errors')
const { BACKOFF_FIRST, nextBackoff, gaveUp } = require('../send/pipeline')
const { openRequests } = require('./requests')
const { encodeCommands } = require('./commands')
const { notReady } = require('../send/not-ready')

// A master's connection again after it was lost, as import reconnects (lib/send/pipeline.js):
// 100 ms doubling to 2 s between attempts, for up to the retry timeout from the loss, then
// PIPELOAD_CONNECTION_LOST (exit 4) naming the cause and the last attempt's error. In a
// cluster, each attempt first asks the nodes known who owns the master's slots now
// (`owner()`, ./cluster-faults.js). A SCAN cursor means something only to the process that
// gave it (each has its own hash seed): when the server reached is another one (a failover's
// new master) or the same address with another run_id (restarted), the read starts again
// from cursor 0 (`fresh`); a run_id that cannot be read (no +info) counts as another.

/**
 * reconnect(cause) for one master's reader: resolves with { requests, fresh } (fresh: another
 * server than before). `o`: endpoint, connectTimeout, retryTimeout, said ({ retryTimeout }
 * as given), signal, owner (async () => the endpoint now owning the master's slots, or null).
 */
function reconnector (o) {
  let endpoint = o.endpoint
  let runId = o.runId ?? null
  // From the first loss until a reply that is not "not now" comes on a new connection: a
  // server that accepts connections and answers every read LOADING or CLUSTERDOWN still
  // ends the export once the retry timeout is up.
  let lostSince = null
  return async function reconnect (cause) {
    lostSince ??= performance.now()
    const left = () => o.retryTimeout - (performance.now() - lostSince)
    let delay = BACKOFF_FIRST
    let last = cause
    for (;;) {
      if (o.signal?.aborted) throw abortedError(endpoint.target)
      if (left() <= 0) throw gaveUp(cause, last, o.said?.retryTimeout ?? `${o.retryTimeout} ms`, endpoint.target)
      try { await sleep(Math.min(delay, Math.max(0, left())), undefined, { signal: o.signal }) } catch { throw abortedError(endpoint.target) }
      delay = nextBackoff(delay)
      try {
        const now = o.owner ? await o.owner(Math.max(1, Math.min(left(), o.connectTimeout))) : null
        const to = now ?? endpoint
        const requests = await openRequests(to, { signal: o.signal, timeout: o.timeout, said: { timeout: o.said?.timeout } }, Math.max(1, Math.min(left(), o.connectTimeout)))
        const id = await runIdOf(requests)
        const fresh = to.target !== endpoint.target || id === null || id !== runId
        endpoint = to
        runId = id
        return { requests: settling(requests, () => { lostSince = null }), fresh, target: to.target }
      } catch (err) {
        if (err.code === 'PIPELOAD_ABORTED') throw err
        last = err
      }
    }
  }
}

/** The server's run_id (INFO server), or null when it does not say (no +info). */
async function runIdOf (requests) {
  const [info] = await requests.send(encodeCommands([['INFO', 'server']]), 1)
  if (info instanceof Error) return null
  return /^run_id:(\w+)/m.exec(info.toString('latin1'))?.[1] ?? null
}

/** `requests` that call settled() once a request is answered without a "not now" reply. */
function settling (requests, settled) {
  const send = requests.send.bind(requests)
  let done = false
  requests.send = (bytes, n) => {
    const replies = send(bytes, n)
    if (!done) {
      replies.then(r => {
        if (done || r.some(x => x instanceof Error && notReady(x.message))) return
        done = true
        settled()
      }, () => {})
    }
    return replies
  }
  return requests
}

/**
 * A reply that says "not now" (LOADING, TRYAGAIN, CLUSTERDOWN, MASTERDOWN, BUSY: a server
 * restarted and loading, a cluster mid-failover) counts as a lost connection: connected
 * again after a pause, the read goes on from the last cursor written whole (./cursors.js).
 */
function checkReady (replies, target) {
  for (const r of replies) {
    if (r instanceof Error && notReady(r.message)) {
      throw new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${target} answered ${r.message.split(' ')[0]} (${r.message})`, { target, reply: r.message })
    }
  }
}

function abortedError (target) {
  return new PipeloadError('PIPELOAD_ABORTED', `export aborted (Redis at ${target})`, { target })
}

module.exports = { reconnector, runIdOf, checkReady }
