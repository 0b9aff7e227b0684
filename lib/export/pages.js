'use strict'

// How each type is read, one page at a time: the command for the page at `at` (a cursor, an
// index, a stream ID; null for the first page) and what a reply holds: the page's elements
// as the record's value, and where the next page starts (null: that was the last).
// HSCAN/SSCAN/ZSCAN return a small (listpack, intset) key whole with cursor 0 whatever COUNT.

const ZERO = 0x30

function scanPage (command) {
  return {
    command: (key, at, n) => [command, key, at === null ? '0' : at, 'COUNT', String(n)],
    parse (reply) {
      const cursor = reply[0]
      return { value: reply[1], next: cursor.length === 1 && cursor[0] === ZERO ? null : cursor.toString('latin1') }
    }
  }
}

const PAGES = Object.freeze({
  string: {
    command: key => ['GET', key],
    parse: reply => ({ value: reply, next: null })
  },
  hash: scanPage('HSCAN'),
  set: scanPage('SSCAN'),
  zset: scanPage('ZSCAN'),
  list: {
    command: (key, at, n) => ['LRANGE', key, String(at ?? 0), String((at ?? 0) + n - 1)],
    parse: (reply, at, n) => ({ value: reply, next: reply.length === n ? (at ?? 0) + n : null })
  },
  stream: {
    // "(id": after that entry (Redis 6.2+, Valkey).
    command: (key, at, n) => ['XRANGE', key, at === null ? '-' : '(' + at, '+', 'COUNT', String(n)],
    parse (reply, at, n) {
      const value = new Array(reply.length)
      for (let i = 0; i < reply.length; i++) value[i] = { id: reply[i][0].toString('latin1'), fields: reply[i][1] || [] }
      return { value, next: reply.length === n ? value[reply.length - 1].id : null }
    }
  }
})

const TYPES = Object.freeze(Object.keys(PAGES))

/**
 * The commands of a key's first read (lib/export/master.js): a key found by SCAN, its PTTL
 * and the first page of the type guessed for it; a key read again (`typed`), its TYPE first,
 * and its TYPE only after a guess that missed (guess null).
 */
function firstReads (item, pageSize) {
  if (!item.typed) return [['PTTL', item.key], PAGES[item.guess].command(item.key, null, pageSize)]
  if (item.guess === null) return [['TYPE', item.key]]
  return [['TYPE', item.key], ['PTTL', item.key], PAGES[item.guess].command(item.key, null, pageSize)]
}

module.exports = { PAGES, TYPES, firstReads }
