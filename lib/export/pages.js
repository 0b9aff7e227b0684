'use strict'

// How each type is read, one page at a time: the command for the page at `at` (a cursor, an
// index, a stream ID; null for the first page) and what a reply holds: the page's elements
// as the record's value, and where the next page starts (null: that was the last).
// HSCAN/SSCAN/ZSCAN return a small (listpack, intset) key whole with cursor 0 whatever COUNT.

const ZERO = 0x30

function scanPage (command) {
  return {
    command: (key, at, n) => [command, key, at === null ? '0' : at, 'COUNT', String(n)],
    parse: scanReply
  }
}

function scanReply (reply) {
  const cursor = reply[0]
  return { value: reply[1], next: cursor.length === 1 && cursor[0] === ZERO ? null : cursor.toString('latin1') }
}

// A hash's first page is HRANDFIELD key n WITHVALUES: asked for at least as many fields as
// the hash has, the server answers the whole hash (in its own order, as HSCAN would), for
// less of its time than HSCAN, which copies every field and value before it answers
// (redis-benchmark, a hash of 5 fields, pipelined: 1.19M HRANDFIELD a second, 1.34M HGETALL,
// 0.73M HSCAN; an export of 1M such hashes: 17% less server CPU, 14% less time, 2 cores).
// n fields or more: the hash may be bigger, and that page is dropped: the hash is read from
// its start with HSCAN pages (one page more, for a hash of n fields or more only).
const hashPage = {
  command: (key, at, n) => at === null ? ['HRANDFIELD', key, String(n), 'WITHVALUES'] : ['HSCAN', key, at, 'COUNT', String(n)],
  parse (reply, at, n) {
    if (at !== null) return scanReply(reply)
    return reply.length < 2 * n ? { value: reply, next: null } : { value: [], next: '0' }
  },
  // The cursor of a later page, for the rights check (./rights.js): its command is another.
  later: '0'
}

const PAGES = Object.freeze({
  string: {
    command: key => ['GET', key],
    parse: reply => ({ value: reply, next: null })
  },
  hash: hashPage,
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
