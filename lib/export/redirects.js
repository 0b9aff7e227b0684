'use strict'

const { PipeloadError } = require('../errors')
const { openRequests } = require('./requests')
const { CommandBuffer } = require('./commands')
const { PAGES, firstReads } = require('./pages')

// A cluster master's reads answered MOVED or ASK (docs/export.md "Faults"): slots move
// (resharding), or the master was failed over (CLUSTER FAILOVER: it is a replica now, its
// connection stays, SCAN still answers, every key read is MOVED). On the first MOVED of a
// batch the slot map is read again: a master that serves no slot any more was failed over,
// and its read starts again on the new master (a lost connection to ./reconnect.js, which
// finds it); otherwise each redirected key's read is sent again where the reply says (ASKING
// first for ASK), up to 16 times, as import follows them (docs/cluster.md "Resharding").

const MAX_REDIRECTS = 16
const REDIRECT = /^(MOVED|ASK) (\d+) (\S+:\d+)$/

function redirectOf (reply) {
  if (!(reply instanceof Error)) return null
  const m = REDIRECT.exec(reply.message)
  return m && { kind: m[1], slot: Number(m[2]), target: m[3] }
}

class Redirects {
  /**
   * `map`: the cluster's SlotMap (./slots.js); `stats`: this master's counts; `link`: the
   * export's connection options, for the connections to other masters (./requests.js).
   */
  constructor ({ map, stats, link }) {
    this.map = map
    this.stats = stats
    this.link = link
    this.side = new Map() // 'host:port' -> Requests: the other masters a key's read is sent to
  }

  /** The batch's replies, each redirected item's read again where it was sent; throws on a failover. */
  async follow (reader, batch, replies) {
    if (!redirected(replies)) return replies
    const spans = spansOf(batch)
    let checked = false
    for (const span of spans) {
      for (let hop = 0; ; hop++) {
        const to = firstRedirect(replies, span)
        if (to === null) break
        if (to.kind === 'MOVED' && !checked) {
          checked = true
          await this.checkMaster(reader)
        }
        if (hop === MAX_REDIRECTS) {
          throw new PipeloadError('PIPELOAD_CLUSTER_REDIRECT', `the read of key ${JSON.stringify(span.item.key.toString())} was redirected ${MAX_REDIRECTS} times, the last by ${reader.requests.conn.target}: ${replies[span.at].message}`, { target: reader.requests.conn.target })
        }
        if (to.kind === 'MOVED') this.stats.moved++
        else this.stats.asked++
        const again = await this.send(to, commandsOf(span.item, reader.plan.pageSize))
        for (let i = 0; i < span.n; i++) replies[span.at + i] = again[i]
      }
    }
    return replies
  }

  /** A MOVED: is this master still one? Not (failed over): its connection counts as lost. */
  async checkMaster (reader) {
    const target = reader.requests.conn.target
    if (await this.map.refresh() === null || this.map.serves(target)) return
    throw new PipeloadError('PIPELOAD_CONNECTION_LOST', `Redis at ${target} is no longer a master (a failover): reading its slots again from the new master`, { target, failover: true })
  }

  /** The commands sent to the node `to` names (each after ASKING for ASK); their replies. */
  async send (to, commands) {
    const requests = await this.connection(to.target)
    const w = new CommandBuffer()
    for (const c of commands) {
      if (to.kind === 'ASK') w.command(['ASKING'])
      w.command(c)
    }
    const n = commands.length * (to.kind === 'ASK' ? 2 : 1)
    const replies = await requests.send(w.take(), n)
    return to.kind === 'ASK' ? replies.filter((_, i) => i % 2 === 1) : replies
  }

  async connection (target) {
    let r = this.side.get(target)
    if (r && !r.failed) return r
    r = await openRequests(this.map.endpoint(target), this.link)
    this.side.set(target, r)
    return r
  }

  close () {
    for (const r of this.side.values()) r.close()
    this.side.clear()
  }
}

/** Where each item's replies are in a batch's: { item, at, n }. */
function spansOf (batch) {
  const spans = []
  let at = 0
  for (const item of batch.items) {
    const n = commandsOf(item, 1).length
    spans.push({ item, at, n })
    at += n
  }
  return spans
}

function firstRedirect (replies, span) {
  for (let i = 0; i < span.n; i++) {
    const r = redirectOf(replies[span.at + i])
    if (r) return r
  }
  return null
}

/** An item's read commands, as MasterReader.nextBatch() wrote them. */
function commandsOf (item, pageSize) {
  if (item.type !== undefined) return [PAGES[item.type].command(item.key, item.at, pageSize)]
  return firstReads(item, pageSize)
}

/** Whether any reply of a batch is a MOVED or an ASK. */
function redirected (replies) {
  return replies.some(r => r instanceof Error && REDIRECT.test(r.message))
}

module.exports = { Redirects, redirected, redirectOf, MAX_REDIRECTS }
