'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// The one bookkeeping of a master's SCAN replies (lib/export/cursors.js) that both the
// checkpoint (mark()) and a reconnect (rewind()) read: the expected cursors are worked out
// by hand from the replies fed in.
const { CursorLedger } = require('../lib/export/cursors')

/** Three SCAN replies: 0 -> 17 (2 keys), 17 -> 42 (3 keys), 42 -> 9 (no key). */
function scanned () {
  const l = new CursorLedger()
  l.found('0', '17', 2)
  l.found('17', '42', 3)
  l.found('42', '9', 0)
  return l
}

describe('CursorLedger: the cursor whose keys are all written', () => {
  it('marks the oldest reply with a key not written, then the last cursor once all are', () => {
    const l = scanned()
    const gens = [l.take(), l.take(), l.take(), l.take(), l.take()]
    expect(l.mark()).toEqual({ cursor: '0', done: false })
    l.done(gens[1]) // out of order: the first reply still has a key left
    expect(l.mark()).toEqual({ cursor: '0', done: false })
    l.done(gens[0])
    expect(l.mark()).toEqual({ cursor: '17', done: false })
    for (const g of gens.slice(2)) l.done(g)
    expect(l.mark()).toEqual({ cursor: '9', done: false })
    l.found('9', '0', 0)
    expect(l.mark()).toEqual({ cursor: '0', done: true })
  })

  it('a reconnect to the same process goes on from the mark, and the checkpoint then says the same', () => {
    const l = scanned()
    const gens = [l.take(), l.take(), l.take()]
    l.done(gens[0])
    l.done(gens[1])
    // The first reply written whole; a key of the second taken (in flight), two not taken.
    expect(l.rewind(false)).toEqual({ cursor: '17', done: false })
    expect(l.mark()).toEqual({ cursor: '17', done: false })
    expect(l.next).toBe('17')
    // The keys of the reply sent with 17, found again, are taken from a clean slate.
    l.found('17', '42', 1)
    const g = l.take()
    expect(l.mark()).toEqual({ cursor: '17', done: false })
    l.done(g)
    expect(l.mark()).toEqual({ cursor: '42', done: false })
  })

  it('a reconnect to another process (restart, failover) starts at 0: no old cursor left to checkpoint', () => {
    const l = scanned()
    for (let i = 0; i < 5; i++) l.done(l.take())
    l.found('9', '0', 0) // this master was read to its end on the old process
    expect(l.mark()).toEqual({ cursor: '0', done: true })
    expect(l.rewind(true)).toEqual({ cursor: '0', done: false })
    expect(l.mark()).toEqual({ cursor: '0', done: false })
    l.found('0', '5', 1)
    l.take()
    expect(l.mark()).toEqual({ cursor: '0', done: false })
  })

  it('a resume starts where the checkpoint says', () => {
    expect(new CursorLedger({ cursor: '42', done: false }).mark()).toEqual({ cursor: '42', done: false })
    expect(new CursorLedger({ cursor: '0', done: true }).mark()).toEqual({ cursor: '0', done: true })
  })
})
