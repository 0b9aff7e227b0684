'use strict'

const { getKeyIndexes, exists: knownCommand } = require('@ioredis/commands')
const { PipeloadError } = require('../errors')
const { bulkBytes } = require('./writer')

// --ttl and --replace (mapper.js): an EXPIRE after a record's commands for its first key
// (ttlKeys 'first') or for every key they write ('all'), and a DEL of its first key before
// them, for templates (compiled once, like a template's commands) and for map()'s commands.

/**
 * --ttl and --replace for templates: the EXPIRE commands pushed after `commands` (compiled,
 * the first from `template`), the DEL put before them.
 */
function templateKeyCommands (commands, template, { ttl, ttlKeys, replace }) {
  const first = commands[0]
  if (ttl != null) {
    const keys = ttlKeys === 'all' ? templateKeyWords(commands) : [firstKey(first, template, '--ttl')]
    for (const key of keys) commands.push(keyCommand(['EXPIRE', key, String(ttl)]))
  }
  // --replace: the record's first key goes first, so what the record writes is all it holds.
  if (replace) commands.unshift(keyCommand(['DEL', firstKey(first, template, '--replace')]))
}

/**
 * --ttl and --replace for map(): a function adding the EXPIRE and DEL commands to one
 * record's commands (argument arrays, at least one), or null when neither is asked for.
 */
function mapKeyCommands ({ ttl, ttlKeys, replace }) {
  if (ttl == null && !replace) return null
  return out => {
    if (out[0].length < 2) {
      const option = ttl != null ? '--ttl' : '--replace'
      throw new PipeloadError('PIPELOAD_RECORD_INVALID', `${option} needs a key as the first argument of map()'s first command, got only ${JSON.stringify(String(out[0][0]))}`)
    }
    const first = out[0][1]
    if (ttl != null) {
      const keys = ttlKeys === 'all' ? mapKeys(out) : [first]
      for (const k of keys) out.push(['EXPIRE', k, String(ttl)])
    }
    if (replace) out.unshift(['DEL', first])
  }
}

/**
 * The argument positions (0 = the first after the name) of a command's keys, as
 * @ioredis/commands says; a command it does not know (a module's: JSON.SET, TS.ADD…) has its
 * first argument as its key, as slots.js reads it.
 */
function keyIndexes (name, args) {
  const lower = String(name).toLowerCase()
  if (!knownCommand(lower)) return args.length ? [0] : []
  try {
    return getKeyIndexes(lower, args)
  } catch {
    return args.length ? [0] : []
  }
}

/**
 * ttlKeys 'all': the key words of every template (compiled commands), each once. Positions
 * come from the template's constant words ('' for a {field}); a key at or after `*` is refused.
 */
function templateKeyWords (commands) {
  const out = []
  const seen = new Set()
  for (const c of commands) {
    const name = c.words[0].constant
    const starAt = c.words.findIndex(w => w.star)
    const args = c.words.slice(1).map(w => w.constant ?? '')
    for (const i of keyIndexes(name, starAt === -1 ? args : args.slice(0, starAt - 1))) {
      const word = c.words[i + 1]
      // A spread before the key moves it by a count only the record knows.
      if (c.words.slice(1, i + 1).some(w => w.spread)) {
        throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `ttlKeys "all" cannot tell the keys of "${c.source}": a key comes after a spread {x[]}`, { template: c.source })
      }
      if (!word || word.star || word.spread) {
        throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `ttlKeys "all" cannot tell the keys of "${c.source}": a key comes after *`, { template: c.source })
      }
      const id = word.id
      if (seen.has(id)) continue
      seen.add(id)
      out.push(word)
    }
  }
  return out
}

function firstKey (first, template, option) {
  if (!first.key) {
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `${option} needs a key as the first argument of "${template}"`, { template })
  }
  if (first.key.spread) {
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `${option} needs one key as the first argument of "${template}", not a spread`, { template })
  }
  return first.key
}

/** `[NAME, keyWord, ...constant texts]` (EXPIRE key ttl, DEL key) compiled like a template. */
function keyCommand ([name, key, ...rest]) {
  const head = Buffer.concat([Buffer.from(`*${2 + rest.length}\r\n`), bulkBytes(name)])
  const tail = Buffer.concat(rest.map(t => bulkBytes(t)))
  if (key.extended) {
    // A key with {$n}, {$line}, {$file}, {$} or a vector: built from the plain record and its context.
    return {
      extended: true,
      args: (rec, ctx) => [name, key.value(rec, ctx), ...rest],
      write (rec, w, ctx) {
        w.bytes(head)
        w.arg(key.value(rec, ctx))
        w.bytes(tail)
        return 1
      }
    }
  }
  return {
    args: rec => [name, key.value(rec), ...rest],
    write (rec, w) {
      w.bytes(head)
      key.write(rec, w)
      w.bytes(tail)
    },
    writeRow (row, w) {
      if (!key.writeRow) return this.write(row.toPlain(), w)
      w.bytes(head)
      key.writeRow(row, w)
      w.bytes(tail)
    }
  }
}

/** ttlKeys 'all' for map(): every key of every command, each once (Buffers by their bytes). */
function mapKeys (cmds) {
  const seen = new Set()
  const out = []
  for (const c of cmds) {
    for (const i of keyIndexes(c[0], c.slice(1))) {
      const k = c[i + 1]
      if (k === undefined) continue
      const id = typeof k === 'string' ? 's' + k : 'b' + k.toString('latin1')
      if (seen.has(id)) continue
      seen.add(id)
      out.push(k)
    }
  }
  return out
}

module.exports = { templateKeyCommands, mapKeyCommands }
