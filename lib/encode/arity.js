'use strict'

const { LITERAL } = require('./template')

// How many arguments the commands people write in templates take, checked before anything
// is read or sent: `-c 'HSET user:{id}'` (no field, no value) would otherwise fail every
// record with an error reply. Arity as COMMAND INFO gives it: the command name counted,
// positive = exactly, negative = at least. Commands not listed are not checked. Only what
// is certain is refused: `*` writes an even number of arguments, of any size, and a spread
// ({tags[]}) any number, so with those only a count already too large for an exact arity
// is refused (and with `*` alone, an odd count where pairs are due).

// name → [arity, the arguments it needs]: test/template-checks.test.js compares each arity
// with a server's COMMAND INFO (JSON.SET is RedisJSON's: JSON.SET key path value [NX|XX]).
const ARITY = Object.freeze({
  SET: [-3, 'key value'],
  SETNX: [3, 'key value'],
  SETEX: [4, 'key seconds value'],
  PSETEX: [4, 'key milliseconds value'],
  GETSET: [3, 'key value'],
  GETDEL: [2, 'key'],
  APPEND: [3, 'key value'],
  SETRANGE: [4, 'key offset value'],
  SETBIT: [4, 'key offset value'],
  INCR: [2, 'key'],
  DECR: [2, 'key'],
  INCRBY: [3, 'key increment'],
  DECRBY: [3, 'key decrement'],
  INCRBYFLOAT: [3, 'key increment'],
  MSET: [-3, 'key value'],
  MSETNX: [-3, 'key value'],
  DEL: [-2, 'key'],
  UNLINK: [-2, 'key'],
  HSET: [-4, 'key field value'],
  HMSET: [-4, 'key field value'],
  HSETNX: [4, 'key field value'],
  HINCRBY: [4, 'key field increment'],
  HINCRBYFLOAT: [4, 'key field increment'],
  HDEL: [-3, 'key field'],
  SADD: [-3, 'key member'],
  SREM: [-3, 'key member'],
  ZADD: [-4, 'key score member'],
  ZINCRBY: [4, 'key increment member'],
  ZREM: [-3, 'key member'],
  LPUSH: [-3, 'key element'],
  RPUSH: [-3, 'key element'],
  LPUSHX: [-3, 'key element'],
  RPUSHX: [-3, 'key element'],
  LSET: [4, 'key index element'],
  LTRIM: [4, 'key start stop'],
  LREM: [4, 'key count element'],
  PFADD: [-2, 'key'],
  GEOADD: [-5, 'key longitude latitude member'],
  XADD: [-5, 'key id field value'],
  EXPIRE: [-3, 'key seconds'],
  PEXPIRE: [-3, 'key milliseconds'],
  EXPIREAT: [-3, 'key unix-time-seconds'],
  PEXPIREAT: [-3, 'key unix-time-milliseconds'],
  PERSIST: [2, 'key'],
  PUBLISH: [3, 'channel message'],
  SPUBLISH: [3, 'shardchannel message'],
  'JSON.SET': [-4, 'key path value']
})

// Commands whose arguments come in pairs: after the key (HSET), or all of them (MSET).
const PAIRS = Object.freeze({
  HSET: { after: 1, syntax: 'key field value [field value ...]', what: 'field value pairs after the key' },
  HMSET: { after: 1, syntax: 'key field value [field value ...]', what: 'field value pairs after the key' },
  MSET: { after: 0, syntax: 'key value [key value ...]', what: 'key value pairs' },
  MSETNX: { after: 0, syntax: 'key value [key value ...]', what: 'key value pairs' }
})

const ZADD_OPTIONS = new Set(['NX', 'XX', 'GT', 'LT', 'CH', 'INCR'])
const ZADD_SYNTAX = 'key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]'

const plural = (n, one) => `${n} ${one}${n === 1 ? '' : 's'}`

/** The word's literal text, or null when it has a field (or is `*`). */
function literalOf (word) {
  if (word.star || word.parts.some(p => p.type !== LITERAL)) return null
  return word.parts.map(p => p.text).join('')
}

const isSpread = word => !word.star && word.parts.length === 1 && word.parts[0].alt?.kind === 'spread'

/**
 * What is wrong with the number of arguments of a parsed template (parseTemplate), as the
 * end of a sentence ("HSET needs at least 3 arguments (key field value), got 1"), or null.
 */
function arityProblem ({ name, words }) {
  const args = words.slice(1)
  const spread = args.some(isSpread)
  const star = args.some(w => w.star)
  const fixed = args.filter(w => !w.star && !isSpread(w)).length
  const got = star ? `${fixed} and *` : String(fixed)
  const known = ARITY[name]
  if (known) {
    const [arity, needs] = known
    const n = Math.abs(arity) - 1
    if (arity > 0 && (fixed > n || (fixed < n && !star && !spread))) return `${name} takes ${plural(n, 'argument')} (${needs}), got ${got}`
    if (arity < 0 && fixed < n && !star && !spread) return `${name} needs at least ${plural(n, 'argument')} (${needs}), got ${got}`
  }
  if (spread) return null
  const pairs = PAIRS[name]
  if (pairs && (fixed - pairs.after) % 2 !== 0) {
    const count = pairs.after ? `${plural(fixed - pairs.after, 'argument')}${star ? ' and *' : ''} after the key` : `${plural(fixed, 'argument')}${star ? ' and *' : ''}`
    return `${name} takes ${pairs.what} (${pairs.syntax}), got ${count}`
  }
  if (name === 'ZADD' && !star) return zaddProblem(args)
  return null
}

/**
 * ZADD key [options] score member [score member ...]: options are read while the words
 * are options, and a field's value may be one, so the count of options is anything from
 * the literal options first (`least`) up to the first word that cannot be one (`most`).
 */
function zaddProblem (args) {
  const after = args.slice(1)
  let least = 0
  while (least < after.length && ZADD_OPTIONS.has(literalOf(after[least])?.toUpperCase())) least++
  let most = least
  while (most < after.length && (literalOf(after[most]) === null || ZADD_OPTIONS.has(literalOf(after[most]).toUpperCase()))) most++
  for (let k = least; k <= most; k++) {
    const rest = after.length - k
    if (rest >= 2 && rest % 2 === 0) return null
  }
  return `ZADD takes score member pairs after the key and its options (${ZADD_SYNTAX}), got ${plural(after.length - least, 'argument')} after ${least ? 'the options' : 'the key'}`
}

module.exports = { arityProblem, literalOf, isSpread, ARITY }
