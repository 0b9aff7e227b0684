'use strict'

const { PipeloadError } = require('../errors')
const { CommandBuffer } = require('./commands')
const { PAGES } = require('./pages')
const { rewind, found, taken, checkReady } = require('./restart')

// One master read to its end: SCAN finds the keys, and each batch of keys is read in one
// round trip: TYPE, PTTL and the first page of the type guessed for it (the one type asked,
// else the previous key's type). A wrong guess is read again in a later batch, now knowing
// the type. A key bigger than a page goes on page by page, one page per batch, until its
// cursor ends. The next SCAN rides in a batch too, whenever few keys are left to read.
// `window` batches are in flight; their replies are handled in order, and each record is
// handed to `emit`, which is awaited (the output's backpressure stops the reading).

// A key whose type changes under the reader each time it is read again is counted, not
// read for ever.
const MAX_READS = 3

class MasterReader {
  /**
   * @param {object} o requests (./requests.js), plan (the export's frozen plan), emit(record)
   *   (undefined or a Promise), stats (this master's counts, ./stats.js), signal, and
   *   reconnect(cause) (./reconnect.js: resolves with { requests, fresh } once connected
   *   again, fresh: to another server; without it a lost connection ends the read), and in
   *   a cluster redirects (./redirects.js: MOVED and ASK followed)
   */
  constructor ({ requests, plan, emit, stats, signal, reconnect, redirects }) {
    this.requests = requests
    this.reconnect = reconnect
    this.redirects = redirects
    this.plan = plan
    this.emit = emit
    this.stats = stats
    this.signal = signal
    this.cursor = '0'
    this.scanned = false // SCAN's cursor came back to 0
    this.scanning = false // a SCAN is in flight
    this.keys = [] // found, not read yet: keys[keyAt…]
    this.keyAt = 0
    this.again = [] // { key, guess, known, reads }: read again (wrong guess, type changed)
    this.pages = [] // { key, type, ttl, part, at, reads }: the next page of a big key
    // SCAN replies by generation (./restart.js): where a lost connection goes on from.
    this.gen = 0
    this.scanFrom = new Map() // generation -> the cursor that asked for it
    this.keyGens = [] // { gen, left }: the generations of keys[keyAt…]
    this.lastType = plan.types?.length === 1 ? plan.types[0] : 'string'
    // Elements a key's first page held, on average (a moving estimate): a batch takes as many
    // keys as maxElements allows, so a keyspace of medium hashes (hundreds of fields, read
    // whole in a first page) does not bring window × batchSize of them into memory at once.
    // It starts cautious and grows as keys turn out small.
    this.perKey = Math.max(1, plan.pageSize / 4)
    this.firstElements = 0 // in the batch being handled
    this.firstKeys = 0
  }

  /** Read to the end; a lost connection: connected again (reconnect), go on (./restart.js). */
  async run () {
    for (;;) {
      const inflight = []
      try {
        return await this.readAll(inflight)
      } catch (err) {
        if (!this.reconnect || err.code !== 'PIPELOAD_CONNECTION_LOST' || this.signal?.aborted) throw err
        this.requests.close()
        const { requests, fresh } = await this.reconnect(err)
        this.requests = requests
        this.stats.reconnects++
        if (fresh) this.stats.rescans++
        rewind(this, inflight, fresh)
      }
    }
  }

  async readAll (inflight) {
    for (;;) {
      if (this.signal?.aborted) throw new PipeloadError('PIPELOAD_ABORTED', `export aborted (Redis at ${this.requests.conn.target})`)
      while (inflight.length < this.plan.window) {
        const batch = this.nextBatch()
        if (batch === null) break
        batch.replies.catch(() => {}) // a lost connection rejects every batch: run() handles it
        inflight.push(batch)
      }
      if (inflight.length === 0) return
      const replies = await inflight[0].replies
      checkReady(replies, this.requests.conn.target)
      if (this.redirects) await this.redirects.follow(this, inflight[0], replies)
      await this.handle(inflight.shift(), replies)
    }
  }

  /** The next batch to send, or null when there is nothing to send now. */
  nextBatch () {
    const { batchSize, pageSize, maxElements } = this.plan
    const w = new CommandBuffer()
    const items = []
    let n = 0
    let budget = maxElements
    while (this.pages.length && items.length < batchSize && (items.length === 0 || budget >= pageSize)) {
      const p = this.pages.shift()
      w.command(PAGES[p.type].command(p.key, p.at, pageSize))
      items.push(p)
      n += 1
      budget -= pageSize
    }
    while (items.length < batchSize && (this.again.length || this.keyAt < this.keys.length) && (items.length === 0 || budget >= this.perKey)) {
      budget -= this.perKey
      const k = this.again.length ? this.again.shift() : { key: this.keys[this.keyAt++], guess: this.lastType, reads: 0, gen: taken(this) }
      w.command(['TYPE', k.key])
      w.command(['PTTL', k.key])
      w.command(PAGES[k.guess].command(k.key, null, pageSize))
      items.push(k)
      n += 3
    }
    const scan = !this.scanned && !this.scanning && this.keys.length - this.keyAt < batchSize * this.plan.window
    if (scan) {
      w.command(this.scanCommand())
      this.scanning = true
      n += 1
    }
    if (n === 0) return null
    this.stats.batches++
    return { items, scan, replies: this.requests.send(w.take(), n) }
  }

  scanCommand () {
    const c = ['SCAN', this.cursor]
    if (this.plan.match !== undefined) c.push('MATCH', this.plan.match)
    c.push('COUNT', String(this.plan.scanCount))
    // SCAN's TYPE option filters on the server; with several types asked, they are filtered here.
    if (this.plan.types?.length === 1) c.push('TYPE', this.plan.types[0])
    return c
  }

  // first() and page() return what emit() returned: a Promise only when the output is full
  // (no Promise a key otherwise).
  async handle (batch, replies) {
    let i = 0
    for (const item of batch.items) {
      let wait
      if (item.type !== undefined) {
        wait = this.page(item, replies[i++])
      } else {
        wait = this.first(item, replies[i], replies[i + 1], replies[i + 2])
        i += 3
      }
      if (wait !== undefined) await wait
    }
    if (batch.scan) this.scanReply(replies[i])
    if (this.firstKeys > 0) {
      this.perKey = Math.max(1, (this.perKey + this.firstElements / this.firstKeys) / 2)
      this.firstElements = 0
      this.firstKeys = 0
    }
  }

  scanReply (reply) {
    if (reply instanceof Error) throw readError(reply, 'SCAN', null, this.requests.conn.target)
    this.scanning = false
    found(this, this.cursor, reply[1].length)
    this.cursor = reply[0].toString('latin1')
    if (this.cursor === '0') this.scanned = true
    const keys = reply[1]
    this.stats.scanned += keys.length
    this.keys = this.keyAt < this.keys.length ? this.keys.slice(this.keyAt).concat(keys) : keys
    this.keyAt = 0
  }

  /** A key's TYPE, PTTL and the first page of its guessed type. */
  first (item, typeReply, pttl, page) {
    const target = this.requests.conn.target
    if (typeReply instanceof Error) throw readError(typeReply, 'TYPE', item.key, target)
    const type = typeReply.toString('latin1')
    if (type === 'none') { this.stats.deleted++; return }
    if (PAGES[type] === undefined) { this.stats.unsupported[type] = (this.stats.unsupported[type] || 0) + 1; return }
    if (this.plan.types && !this.plan.types.includes(type)) { this.stats.otherTypes++; return }
    this.lastType = type
    if (pttl instanceof Error) throw readError(pttl, 'PTTL', item.key, target)
    if (pttl === -2) { this.stats.deleted++; return }
    if (type !== item.guess || page instanceof Error) {
      if (page instanceof Error && !isWrongType(page)) throw readError(page, PAGES[item.guess].command(item.key, null, 1)[0], item.key, target)
      // A guess of the key's own type (from its TYPE) that misses: the type changed meanwhile.
      const reads = item.known || type === item.guess ? item.reads + 1 : item.reads
      if (reads >= MAX_READS) { this.stats.changed++; return }
      this.stats.guessedWrong++
      this.again.push({ key: item.key, guess: type, known: true, reads, gen: item.gen })
      return
    }
    return this.page({ key: item.key, type, ttl: pttl === -1 ? null : pttl, part: 1, at: null, reads: item.reads, gen: item.gen }, page)
  }

  /** One page of a key: its record, and the next page queued. */
  page (p, reply) {
    if (reply instanceof Error) {
      if (!isWrongType(reply)) throw readError(reply, PAGES[p.type].command(p.key, p.at, 1)[0], p.key, this.requests.conn.target)
      // The key is another type now: read again from its start (a part 1 replaces the key on
      // restore), or counted once it has changed too often.
      // Counted once, when its new first page is written.
      this.stats.uncounted(p.type)
      if (p.reads + 1 >= MAX_READS) { this.stats.changed++; return }
      this.stats.restarted++
      this.again.push({ key: p.key, guess: this.lastType, reads: p.reads + 1, gen: p.gen })
      return
    }
    const { value, next } = PAGES[p.type].parse(reply, p.at, this.plan.pageSize)
    if (p.part === 1 && p.at === null) {
      this.firstKeys++
      this.firstElements += p.type === 'string' ? 1 : value.length
    }
    // An empty page: a scan page that found nothing in its buckets (go on), or a collection
    // deleted since its TYPE (Redis deletes empty collections; a stream may be empty).
    if (value.length === 0 && p.type !== 'string' && !(p.type === 'stream' && p.part === 1 && next === null)) {
      if (next !== null) this.pages.push({ ...p, at: next })
      else if (p.part === 1) this.stats.deleted++
      return
    }
    const record = { key: p.key, type: p.type, ttl: p.ttl, part: p.part, value }
    if (p.part === 1) this.stats.counted(p.type)
    else this.stats.parts++
    if (next !== null) this.pages.push({ ...p, part: p.part + 1, at: next })
    return this.emit(record)
  }
}

function isWrongType (err) {
  return /^WRONGTYPE /.test(err.message)
}

/** An error reply to a read: the export stops (a right missing, a cluster slot moved away). */
function readError (err, command, key, target) {
  const of = key === null ? '' : ` of key ${JSON.stringify(key.toString())}`
  if (/^NOPERM /.test(err.message)) {
    return new PipeloadError('PIPELOAD_PERMISSION_DENIED', `Redis at ${target} refused ${command}${of}: ${err.message} (export needs +scan, +type, +pttl and the read commands of each type)`, { target, command, reply: err.message })
  }
  return new PipeloadError('PIPELOAD_READ_FAILED', `Redis at ${target} answered ${command}${of} with an error: ${err.message}`, { target, command, reply: err.message })
}

module.exports = { MasterReader, MAX_READS }
