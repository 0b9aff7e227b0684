'use strict'

// What an export counted, per master and summed.

class ExportStats {
  constructor () {
    this.keys = 0 // keys written (their first record)
    this.types = {} // keys written by type
    this.parts = 0 // records after a key's first (big keys)
    this.scanned = 0 // keys SCAN returned
    this.deleted = 0 // gone between SCAN and their read
    this.changed = 0 // whose type changed each time they were read: not written
    this.restarted = 0 // read again from the start: the type changed between two pages
    this.guessedWrong = 0 // read again: the type guessed for the first page was not the key's
    this.otherTypes = 0 // of a type not asked (--type with several types)
    this.unsupported = {} // of a type export cannot write (a module's), by type
    this.batches = 0
    this.reconnects = 0 // connections lost and made again (lib/export/master.js, cursors.js)
    this.rescans = 0 // reconnects to another process (a restart, a failover): SCAN from cursor 0
    this.failovers = 0 // a cluster master's read started again on its new master
    this.moved = 0 // key reads sent again after MOVED (lib/export/redirects.js)
    this.asked = 0 // key reads sent again after ASK
  }

  counted (type) {
    this.keys++
    this.types[type] = (this.types[type] || 0) + 1
  }

  uncounted (type) {
    this.keys--
    if (--this.types[type] === 0) delete this.types[type]
  }

  /** The sum of several masters' counts. */
  static sum (all) {
    const s = new ExportStats()
    for (const o of all) {
      for (const k of ['keys', 'parts', 'scanned', 'deleted', 'changed', 'restarted', 'guessedWrong', 'otherTypes', 'batches', 'reconnects', 'rescans', 'failovers', 'moved', 'asked']) s[k] += o[k]
      for (const [t, n] of Object.entries(o.types)) s.types[t] = (s.types[t] || 0) + n
      for (const [t, n] of Object.entries(o.unsupported)) s.unsupported[t] = (s.unsupported[t] || 0) + n
    }
    return s
  }
}

module.exports = { ExportStats }
