'use strict'

const { PipeloadError } = require('../errors')
const { parseTemplate, FIELD, LITERAL } = require('../encode/template')

// The file workload runs the real import, but bench must touch only keys under its run
// prefix. Each template's key (its first argument) gets the prefix, so `HSET user:{id} *`
// writes `pipeload:bench:<run>:<row>:user:{id}`. That is sound only for commands whose one
// and only key is the first argument; anything else (MSET, RENAME, SMOVE, EVAL, …) is
// refused rather than risk writing outside the prefix.

const SINGLE_KEY_COMMANDS = new Set([
  'SET', 'SETNX', 'SETEX', 'PSETEX', 'GETSET', 'APPEND', 'SETRANGE', 'SETBIT',
  'INCR', 'INCRBY', 'INCRBYFLOAT', 'DECR', 'DECRBY',
  'HSET', 'HMSET', 'HSETNX', 'HINCRBY', 'HINCRBYFLOAT', 'HDEL',
  'SADD', 'SREM', 'ZADD', 'ZINCRBY', 'ZREM',
  'LPUSH', 'RPUSH', 'LPUSHX', 'RPUSHX', 'LSET', 'LREM', 'LTRIM',
  'PFADD', 'GEOADD', 'XADD', 'EXPIRE', 'PEXPIRE', 'EXPIREAT', 'PEXPIREAT', 'PERSIST',
  'JSON.SET', 'JSON.MERGE', 'BF.ADD', 'CF.ADD', 'TS.ADD'
])

function unsafe (template, reason) {
  return new PipeloadError('PIPELOAD_OPTION_INVALID',
    `bench cannot keep "${template}" under its key prefix: ${reason}`, { option: 'command', template })
}

/** One word of a parsed template back as template text. */
function wordText (word) {
  if (word.star) return '*'
  const raw = word.parts.map(p => p.type === FIELD
    ? `{${p.name}}`
    : p.text.replace(/\{/g, '{{').replace(/\}/g, '}}')).join('')
  if (raw !== '' && raw !== '*' && !/[\s"'\\]/.test(raw)) return raw
  const escaped = raw.replace(/[\\"]/g, '\\$&').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')
  return `"${escaped}"`
}

/** The template with `prefix` in front of its key; throws for commands it cannot make safe. */
function prefixTemplate (template, prefix) {
  const parsed = parseTemplate(template)
  if (!SINGLE_KEY_COMMANDS.has(parsed.name)) {
    throw unsafe(template, `${parsed.name} is not a command whose only key is its first argument ` +
      `(bench accepts ${[...SINGLE_KEY_COMMANDS].join(', ')})`)
  }
  const key = parsed.words[1]
  if (!key || key.star) throw unsafe(template, 'its first argument must be a key')
  const words = parsed.words.slice()
  words[1] = { parts: [{ type: LITERAL, text: prefix }, ...key.parts] }
  return words.map(wordText).join(' ')
}

/** The user's key/command/commands as a list of templates, each under `prefix`. */
function prefixedTemplates (o, prefix) {
  const templates = []
  if (o.key !== undefined) {
    if (typeof o.key !== 'string' || !o.key) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `key must be a key template such as "user:{id}", got ${JSON.stringify(o.key)}`, { option: 'key' })
    }
    // As load() reads --key: `HSET <key> *`, quoted when it has spaces or quotes.
    const key = /[\s"']/.test(o.key) ? `"${o.key.replace(/["\\]/g, '\\$&')}"` : o.key
    templates.push(prefixTemplate(`HSET ${key} *`, prefix))
  }
  for (const t of [].concat(o.command ?? [], o.commands ?? [])) {
    if (typeof t !== 'string') {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `command must be a template string, got ${typeof t}`, { option: 'command' })
    }
    templates.push(prefixTemplate(t, prefix))
  }
  return templates
}

module.exports = { prefixTemplate, prefixedTemplates, wordText, SINGLE_KEY_COMMANDS }
