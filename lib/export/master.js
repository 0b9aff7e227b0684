'use strict'

const { PipeloadError } = require('../errors')
const { CommandBuffer, keyedCommand } = require('./commands')
const { PAGES, firstReads } = require('./pages')
const { CursorLedger } = require('./cursors')
const { checkReady } = require('./reconnect')

// One master read to its end: SCAN finds the keys, and each batch of keys is read in one
// round trip: PTTL and the first page of the type guessed for it (the one type asked, else
// the previous key's type). A wrong guess (WRONGTYPE) is asked its TYPE in a later batch,
// then read again with TYPE, PTTL and the page of its type (./pages.js firstReads()). The next SCAN rides in a batch too, whenever few keys are left to read.
// `window` batches are in flight; their replies are handled in order, and each record is
// handed to `emit`, which is awaited (the output's backpressure stops the reading).
// A key bigger than a page is read on to its end where it stands in its batch, one page per
// round trip, before the next key's record: a key's parts are written one after the other
// (docs/export.md), and meanwhile no batch is sent and the keys after it in the batches
// already answered wait (with a page or two of each big one read ahead), so memory stays
// bounded by the window. With several masters writing into one output, `hold()` before a
// big key's first part and `release()` after its last keep the other masters' records out
// from between its parts.

const PTTL = keyedCommand(['PTTL', ''])

// A key whose type changes under the reader each time it is read again is counted, not
// read for ever.
const MAX_READS = 3

// Pages of a big key read ahead (held) while a key before it in the batch is written.
const READ_AHEAD = 2

class MasterReader {
  /**
   * @param {object} o requests (./requests.js), plan (the export's frozen plan), emit(record)
   *   (undefined or a Promise), stats (this master's counts, ./stats.js), signal; hold() and
   *   release() where other masters write into the same output (export.js): hold() returns
   *   undefined or a Promise that resolves once the output takes this master's records only;
   *   ledger (./cursors.js: the cursor whose keys are all written, which --checkpoint saves
   *   and a reconnect goes on from; a checkpoint's also says where SCAN starts);
   *   reconnect(cause) (./reconnect.js: resolves with { requests, fresh } once connected
   *   again, fresh: to another server; without it a lost connection ends the read), and in
   *   a cluster redirects (./redirects.js: MOVED and ASK followed)
   */
  constructor ({ requests, plan, emit, stats, signal, hold, release, ledger = new CursorLedger(), reconnect, redirects }) {
    this.requests = requests
    this.reconnect = reconnect
    this.redirects = redirects
    this.plan = plan
    this.emit = emit
    this.hold = hold
    this.release = release
    this.stats = stats
    this.signal = signal
    this.ledger = ledger
    this.cursor = ledger.next
    this.scanned = ledger.ended // SCAN's cursor came back to 0
    this.scanning = false // a SCAN is in flight
    this.keys = [] // found, not read yet: keys[keyAt…]
    this.keyAt = 0
    this.again = [] // { key, guess, known, reads }: read again (wrong guess, type changed)
    this.lastType = plan.types?.length === 1 ? plan.types[0] : 'string'
    // Elements a key's first page held, on average (a moving estimate): a batch takes as many
    // keys as maxElements allows, so a keyspace of medium hashes (hundreds of fields, read
    // whole in a first page) does not bring window × batchSize of them into memory at once.
    // It starts cautious and grows as keys turn out small.
    this.perKey = Math.max(1, plan.pageSize / 4)
    this.firstElements = 0 // in the batch being handled
    this.firstKeys = 0
    this.firstPages = new Map() // type -> its first page's command, for keyed()
  }

  /** Read to the end; a lost connection: connected again (reconnect), go on from the ledger's mark. */
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
        this.rewind(fresh)
      }
    }
  }

  async readAll (inflight) {
    for (;;) {
      this.checkAborted()
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
    while (items.length < batchSize && (this.again.length || this.keyAt < this.keys.length) && (items.length === 0 || budget >= this.perKey)) {
      budget -= this.perKey
      const k = this.again.length ? this.again.shift() : { key: this.keys[this.keyAt++], guess: this.lastType, typed: false, reads: 0, gen: this.ledger.take() }
      if (k.typed) {
        const commands = firstReads(k, pageSize)
        for (const c of commands) w.command(c)
        n += commands.length
      } else {
        // The same commands as firstReads(k), their words written once (./commands.js).
        w.keyed(PTTL, k.key)
        w.keyed(this.firstPageCommand(k.guess), k.key)
        n += 2
      }
      items.push(k)
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

  /** The first page's command of a type, for keyed(). */
  firstPageCommand (type) {
    let c = this.firstPages.get(type)
    if (c === undefined) {
      c = keyedCommand(PAGES[type].command('', null, this.plan.pageSize))
      this.firstPages.set(type, c)
    }
    return c
  }

  scanCommand () {
    const c = ['SCAN', this.cursor]
    if (this.plan.match !== undefined) c.push('MATCH', this.plan.match)
    c.push('COUNT', String(this.plan.scanCount))
    // SCAN's TYPE option filters on the server; with several types asked, they are filtered here.
    if (this.plan.types?.length === 1) c.push('TYPE', this.plan.types[0])
    return c
  }

  /**
   * A batch's replies: every key's first page is read, then the records are written in the
   * keys' order, a big key's later pages read where it stands (writeKey()).
   */
  async handle (batch, replies) {
    const keys = []
    let i = 0
    for (const item of batch.items) {
      const again = this.again.length
      let k
      if (item.typed) {
        k = this.first(item, replies[i], replies[i + 1], replies[i + 2])
        i += item.guess === null ? 1 : 3
      } else {
        k = this.guessed(item, replies[i], replies[i + 1])
        i += 2
      }
      if (k !== undefined) keys.push(k)
      else if (this.again.length === again) this.ledger.done(item.gen) // skipped
    }
    if (batch.scan) {
      const sent = this.cursor
      this.scanReply(replies[i])
      this.ledger.found(sent, this.cursor, replies[i][1].length)
    }
    if (this.firstKeys > 0) {
      this.perKey = Math.max(1, (this.perKey + this.firstElements / this.firstKeys) / 2)
      this.firstElements = 0
      this.firstKeys = 0
    }
    for (let at = 0; at < keys.length; at++) {
      const k = keys[at]
      if (k.next === null && k.records.length === 1) {
        // A key of one page (most): emit() returns a Promise only when the output is full.
        const wait = this.emit(k.records[0])
        if (wait !== undefined) await wait
      } else {
        await this.writeKey(keys, at)
      }
      // Its records are with the writer (or it is read again from its start: not done yet).
      if (!k.restarted) this.ledger.done(k.gen)
    }
  }

  /**
   * Write keys[at] whole, reading its later pages one round trip each; the same round trips
   * read ahead a page of each big key after it in the batch (up to READ_AHEAD pages held), so
   * that a batch of keys just over a page costs one more round trip, not one more a key.
   * With other masters writing into the output, it is held from the key's first part to its
   * last.
   */
  async writeKey (keys, at) {
    const k = keys[at]
    const held = k.next !== null || k.records.length > 1 ? this.hold?.() : undefined
    if (held !== undefined) await held
    try {
      while (k.records.length > 0 || k.next !== null) {
        if (k.records.length > 0) {
          const wait = this.emit(k.records.shift())
          if (wait !== undefined) await wait
          continue
        }
        this.checkAborted()
        const group = [k]
        for (let j = at + 1; j < keys.length; j++) if (keys[j].next !== null && keys[j].records.length < READ_AHEAD) group.push(keys[j])
        const w = new CommandBuffer()
        for (const g of group) w.command(PAGES[g.next.type].command(g.next.key, g.next.at, this.plan.pageSize))
        this.stats.batches++
        const replies = await this.requests.send(w.take(), group.length)
        checkReady(replies, this.requests.conn.target)
        if (this.redirects) await this.redirects.follow(this, { items: group.map(g => g.next) }, replies)
        group.forEach((g, n) => this.page(g, g.next, replies[n]))
      }
    } finally {
      this.release?.()
    }
  }

  /**
   * After a reconnect: what was found and not written is forgotten, SCAN goes on from the
   * ledger's mark (./cursors.js), from cursor 0 when `fresh` (another process).
   */
  rewind (fresh) {
    const { cursor, done } = this.ledger.rewind(fresh)
    this.cursor = cursor
    this.scanned = done
    this.scanning = false
    this.keys = []
    this.keyAt = 0
    this.again = []
  }

  checkAborted () {
    if (this.signal?.aborted) throw new PipeloadError('PIPELOAD_ABORTED', `export aborted (Redis at ${this.requests.conn.target})`)
  }

  scanReply (reply) {
    if (reply instanceof Error) throw readError(reply, 'SCAN', null, this.requests.conn.target)
    this.scanning = false
    this.cursor = reply[0].toString('latin1')
    if (this.cursor === '0') this.scanned = true
    const keys = reply[1]
    this.stats.scanned += keys.length
    this.keys = this.keyAt < this.keys.length ? this.keys.slice(this.keyAt).concat(keys) : keys
    this.keyAt = 0
  }

  /**
   * A key found by SCAN: its PTTL and the first page of its guessed type, without TYPE
   * (most guesses are right): the read answers WRONGTYPE when the guess missed, and the key
   * is read again with TYPE (first()).
   */
  guessed (item, pttl, page) {
    const target = this.requests.conn.target
    if (pttl instanceof Error) throw readError(pttl, 'PTTL', item.key, target)
    if (pttl === -2) { this.stats.deleted++; return }
    if (page instanceof Error) {
      if (!isWrongType(page)) throw readError(page, PAGES[item.guess].command(item.key, null, 1)[0], item.key, target)
      this.stats.guessedWrong++
      this.again.push({ key: item.key, guess: null, typed: true, reads: item.reads, gen: item.gen })
      return
    }
    // A guess outside --type's types (the first key's 'string'): read, not written.
    if (this.plan.types && !this.plan.types.includes(item.guess)) { this.stats.otherTypes++; return }
    return this.firstPage(item, item.guess, pttl, page)
  }

  /**
   * A key's TYPE, PTTL and the first page of its guessed type; its TYPE only after a guess
   * missed (guess null): read again, now knowing its type.
   */
  first (item, typeReply, pttl, page) {
    const target = this.requests.conn.target
    if (typeReply instanceof Error) throw readError(typeReply, 'TYPE', item.key, target)
    const type = typeReply.toString('latin1')
    if (type === 'none') { this.stats.deleted++; return }
    if (PAGES[type] === undefined) { this.stats.unsupported[type] = (this.stats.unsupported[type] || 0) + 1; return }
    if (this.plan.types && !this.plan.types.includes(type)) { this.stats.otherTypes++; return }
    this.lastType = type
    if (item.guess === null) {
      this.again.push({ key: item.key, guess: type, typed: true, known: true, reads: item.reads, gen: item.gen })
      return
    }
    if (pttl instanceof Error) throw readError(pttl, 'PTTL', item.key, target)
    if (pttl === -2) { this.stats.deleted++; return }
    if (type !== item.guess || page instanceof Error) {
      if (page instanceof Error && !isWrongType(page)) throw readError(page, PAGES[item.guess].command(item.key, null, 1)[0], item.key, target)
      // A guess of the key's own type (from its TYPE) that misses: the type changed meanwhile.
      const reads = item.known || type === item.guess ? item.reads + 1 : item.reads
      if (reads >= MAX_READS) { this.stats.changed++; return }
      this.stats.guessedWrong++
      this.again.push({ key: item.key, guess: type, typed: true, known: true, reads, gen: item.gen })
      return
    }
    return this.firstPage(item, type, pttl, page)
  }

  /** A key's first page, of its type `type`, read: its key to write (records and next page). */
  firstPage (item, type, pttl, page) {
    const k = { records: [], next: null, gen: item.gen }
    this.page(k, { key: item.key, type, ttl: pttl === -1 ? null : pttl, part: 1, at: null, reads: item.reads }, page)
    return k
  }

  /**
   * One page `p` of a key `k` ({ records: to write, next: its next page or null }): its
   * record added to k.records, and k.next set.
   */
  page (k, p, reply) {
    k.next = null
    if (reply instanceof Error) {
      if (!isWrongType(reply)) throw readError(reply, PAGES[p.type].command(p.key, p.at, 1)[0], p.key, this.requests.conn.target)
      // The key is another type now: read again from its start (a part 1 replaces the key on
      // restore), or counted once it has changed too often.
      // Counted once, when its new first page is written.
      this.stats.uncounted(p.type)
      if (p.reads + 1 >= MAX_READS) { this.stats.changed++; return }
      this.stats.restarted++
      this.again.push({ key: p.key, guess: this.lastType, typed: true, reads: p.reads + 1, gen: k.gen })
      k.restarted = true
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
      if (next !== null) k.next = { ...p, at: next }
      else if (p.part === 1) this.stats.deleted++
      return
    }
    const record = { key: p.key, type: p.type, ttl: p.ttl, part: p.part, value }
    if (p.part === 1) this.stats.counted(p.type)
    else this.stats.parts++
    k.records.push(record)
    if (next !== null) k.next = { ...p, part: p.part + 1, at: next }
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
