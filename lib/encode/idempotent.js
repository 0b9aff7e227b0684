'use strict'

const { parseTemplate, LITERAL } = require('./template')

// Which templates are safe to re-send. After a lost connection or a server that went silent
// (--timeout), every command not acknowledged is sent again: the server may already have run
// it. A command is idempotent here when running it twice, in the same order as the batch,
// leaves the same data as running it once: it sets a state given by its arguments (SET,
// HSET, SADD, DEL, EXPIRE…). A command that adds to what is there (RPUSH, INCR*, XADD,
// APPEND, ZINCRBY…) or that a second run refuses (XADD with an explicit ID, TS.ADD) is not,
// and so is any command not on the list below: unknown counts as unsafe.

const IDEMPOTENT = new Set([
  'SET', 'SETEX', 'PSETEX', 'MSET', 'SETRANGE', 'SETBIT', 'GETSET', 'GETDEL',
  'HSET', 'HMSET', 'HDEL', 'HSETEX', 'HEXPIRE', 'HPEXPIRE', 'HEXPIREAT', 'HPEXPIREAT', 'HPERSIST',
  'SADD', 'SREM', 'SMOVE',
  'ZADD', 'ZREM',
  'PFADD', 'GEOADD',
  'DEL', 'UNLINK', 'EXPIRE', 'PEXPIRE', 'EXPIREAT', 'PEXPIREAT', 'PERSIST',
  'JSON.SET', 'JSON.MSET', 'JSON.DEL', 'JSON.MERGE'
])

/** Does the template have this literal word (ZADD … INCR adds to the score; any other ZADD sets it)? */
function hasWord (words, text) {
  return words.some(w => w.parts && w.parts.length === 1 && w.parts[0].type === LITERAL && w.parts[0].text.toUpperCase() === text)
}

/** Is one parsed template (parseTemplate) safe to run twice? */
function idempotentCommand ({ name, words }) {
  if (!IDEMPOTENT.has(name)) return false
  if (name === 'ZADD' && hasWord(words, 'INCR')) return false
  return true
}

/**
 * The command names of `templates` that are not idempotent, each once, in template order;
 * [] when every one is. null for a map() function: its commands are not known in advance.
 * (--ttl's EXPIRE and --replace's DEL are idempotent, so they change nothing.)
 */
function notIdempotent (templates) {
  if (!templates) return null
  const names = []
  for (const t of templates) {
    const parsed = parseTemplate(t)
    if (idempotentCommand(parsed)) continue
    const name = parsed.name === 'ZADD' ? 'ZADD INCR' : parsed.name
    if (!names.includes(name)) names.push(name)
  }
  return names
}

module.exports = { notIdempotent, idempotentCommand, IDEMPOTENT }
