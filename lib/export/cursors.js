'use strict'

// A master's SCAN cursor whose keys are all written: where a resume starts (--checkpoint:
// ./checkpoints.js saves mark()) and where the read goes on after its connection was lost
// (./reconnect.js, rewind()). Each SCAN reply is a generation: the cursor it was sent with
// and the keys it found. A key is taken by a batch in the order found and carries its
// generation through every read of it (a wrong guess read again, a big key's pages); it is
// done once its last page is handed to the writer (or it is skipped: deleted, another type,
// changed). The mark is the cursor of the first generation with a key not done (its keys
// written already come again: SCAN's at-least-once; a big key in progress is read again
// from its first page, whose part 1 replaces it on restore), or, when every generation
// found is done, the cursor the last SCAN returned ('0' after the last one: this master is
// complete).

class CursorLedger {
  /** @param {{ cursor: string, done: boolean }} [from] a checkpoint's entry for this master */
  constructor (from = { cursor: '0', done: false }) {
    this.gens = [] // { cursor, left }: the SCAN replies with a key not done, oldest first
    this.untaken = [] // { gen, n }: keys found and not taken yet, per generation, in order
    this.next = from.cursor // the next SCAN's cursor
    this.ended = from.done // the last SCAN returned cursor 0
  }

  /** A SCAN sent with `sent` returned `returned` and `n` keys. */
  found (sent, returned, n) {
    this.next = returned
    if (returned === '0') this.ended = true
    if (n === 0) return
    const gen = { cursor: sent, left: n }
    this.gens.push(gen)
    this.untaken.push({ gen, n })
  }

  /** The generation of the next key taken from the keys found (they are taken in order). */
  take () {
    const u = this.untaken[0]
    if (--u.n === 0) this.untaken.shift()
    return u.gen
  }

  /** A key of `gen` is written (or skipped). */
  done (gen) {
    gen.left--
    while (this.gens.length && this.gens[0].left === 0) this.gens.shift()
  }

  /** Where a resume starts: { cursor, done } (done: every key of this master is written). */
  mark () {
    if (this.gens.length) return { cursor: this.gens[0].cursor, done: false }
    return { cursor: this.next, done: this.ended }
  }

  /**
   * The connection was lost: what was found and not written is forgotten, and SCAN goes on
   * from the mark; `fromStart`: from cursor 0 (another process now: a failover's new master
   * or a restarted server, whose hash table is not the old one's, so the old cursor means
   * nothing there; the mark is then that server's). Returns the new mark.
   */
  rewind (fromStart) {
    const m = fromStart ? { cursor: '0', done: false } : this.mark()
    this.gens = []
    this.untaken = []
    this.next = m.cursor
    this.ended = m.done
    return m
  }
}

module.exports = { CursorLedger }
