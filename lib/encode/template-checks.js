'use strict'

const { exists, getKeyIndexes } = require('@ioredis/commands')
const { PipeloadError } = require('../errors')
const { parseTemplate, keyWord } = require('./template')
const { arityProblem, literalOf, isSpread } = require('./arity')

// The templates a user wrote, checked before anything is read or sent (lib/run/options.js,
// lib/bench/options.js), for mistakes that would load the wrong thing or fail every record:
// an empty {} (the shell ate `$n` in "row:{$n}"), a command with too few arguments for its
// arity (./arity.js), and keys that name no field, so that every record writes the same key
// (`--key 'airport:iata'`: thousands of rows in one hash). Pure: no input, no server.
//
// A refusal names the template as it was written: the library's way (key "row:{}") in its
// message, the command line's (--key 'row:{}', flags, shell quotes) in `cliMessage`, which
// the CLI prints instead.

/**
 * The templates of key, command and commands, each with where it came from:
 * { option: 'key' | 'command', text (as given), template (the command: `HSET <key> *` for a key) }.
 * Values that are not strings are left to the caller to refuse.
 */
function templateSources (o) {
  const out = []
  if (typeof o.key === 'string' && o.key) out.push({ option: 'key', text: o.key, template: `HSET ${keyWord(o.key)} *` })
  for (const t of [].concat(o.command ?? [], o.commands ?? [])) {
    if (typeof t === 'string') out.push({ option: 'command', text: t, template: t })
  }
  return out
}

function shellQuote (s) {
  return `'${s.replaceAll("'", "'\\''")}'`
}

/** The template as the user gave it: `--key 'row:{$n}'` on the command line, `key "row:{$n}"` in load(). */
function label (source, cli, text = source.text) {
  if (cli) return `${source.option === 'key' ? '--key' : '-c'} ${shellQuote(text)}`
  return `${source.option} ${JSON.stringify(text)}`
}

/** A PIPELOAD_TEMPLATE_INVALID whose message `say(cli)` writes for the library and for the CLI. */
function refusal (source, say) {
  return new PipeloadError('PIPELOAD_TEMPLATE_INVALID', say(false), { option: source.option, template: source.template, cliMessage: say(true) })
}

/**
 * Each source parsed and checked for an empty {} and for its arity: [{ source, parsed }].
 * Other syntax errors are parseTemplate's.
 */
function checkSources (sources) {
  return sources.map(source => {
    let parsed
    try {
      parsed = parseTemplate(source.template)
    } catch (err) {
      if (err.emptyField) throw emptyField(source)
      throw err
    }
    const problem = arityProblem(parsed)
    if (problem) throw refusal(source, cli => `${label(source, cli)}: ${problem}`)
    return { source, parsed }
  })
}

/**
 * `{}`: in double quotes a shell replaces `$n` (and $line, $file, $key) with nothing, so
 * "row:{$n}" arrives as row:{}. `{{}}` (literal braces) is left as it is in the example.
 */
function emptyField (source) {
  const fixed = source.text.replace(/\{\{|\}\}|\{\s*\}/g, m => m === '{{' || m === '}}' ? m : '{$n}')
  return refusal(source, cli => cli
    ? `${label(source, true)} has an empty {}: in double quotes the shell replaces $n (and $line, $file, $key) with nothing; put the template in single quotes, e.g. ${label(source, true, fixed)}`
    : `${label(source, false)} has an empty {}: name a field in it, or {$n}, e.g. ${JSON.stringify(fixed)} (from a shell: in double quotes it replaces $n with nothing); {{}} is a literal {}`)
}

/**
 * The words of a parsed template that are keys, where its command says (@ioredis/commands,
 * as lib/encode/slots.js routes it; a module command's key is its first argument); null when
 * that depends on what `*` or a spread writes, which only a record tells.
 */
function keyWordsOf ({ name, words }) {
  const args = words.slice(1)
  const variable = args.findIndex(w => w.star || isSpread(w))
  const lower = name.toLowerCase()
  let idx
  if (!exists(lower)) {
    idx = args.length ? [0] : []
  } else {
    try {
      idx = getKeyIndexes(lower, args.map(w => literalOf(w) ?? ''))
    } catch {
      return null
    }
  }
  if (variable !== -1 && idx.some(i => i >= variable)) return null
  return idx.map(i => args[i])
}

/**
 * Refuse templates none of whose keys names a field ({id}, {$n}, {$line}, {$file}, {$key}…):
 * every record would write the same key. Commands without a key (PUBLISH) do not count;
 * `sameKey` is the user saying so on purpose (a counter, one list). `columns`, when known,
 * are what the suggestion may put in braces.
 */
function refuseSameKey (checked, { sameKey = false, columns = null } = {}) {
  if (sameKey) return
  const constant = []
  for (const { source, parsed } of checked) {
    const keys = keyWordsOf(parsed)
    if (keys === null || keys.some(w => literalOf(w) === null)) return
    if (keys.length) constant.push({ source, key: literalOf(keys[0]) })
  }
  if (constant.length === 0) return
  const { source } = constant[0]
  const fix = (cli, where) => {
    for (const c of constant) {
      const text = suggestion(c, columns)
      if (text !== null) return `did you mean ${label(c.source, cli, text)}?`
    }
    return `put a field in braces in ${where}, such as {${columns?.[0] ?? 'id'}} or {$n}`
  }
  const hint = (cli, what) => `${cli ? '--same-key' : 'sameKey: true'} to write ${what} on purpose`
  throw refusal(source, cli => {
    if (constant.length > 1) {
      return `no command names a field in its key (${constant.map(c => label(c.source, cli)).join(', ')}), so every record writes the same keys; ${fix(cli, 'a key')} (${hint(cli, 'them')})`
    }
    const what = source.option === 'key' ? 'names no field' : `names no field in its key ${JSON.stringify(constant[0].key)}`
    return `${label(source, cli)} ${what}, so every record writes the same key; ${fix(cli, 'the key')} (${hint(cli, 'one key')})`
  })
}

/**
 * The template with a part of its key in braces: the last `:`-separated part that is a
 * column (columns known), else that looks like a field name (`airport:iata`); null when
 * none fits or the key is not written plainly in the template.
 */
function suggestion ({ source, key }, columns) {
  if (!/^[^{}\s"'\\]+$/.test(key)) return null
  const parts = key.split(':')
  let at = -1
  let field = null
  for (let i = parts.length - 1; i >= 0 && at === -1; i--) {
    field = columns ? columns.find(c => c === parts[i]) ?? columns.find(c => c.toLowerCase() === parts[i].toLowerCase()) : null
    if (field !== null && field !== undefined) at = i
  }
  if (at === -1 && !columns && parts.length > 1 && /^[A-Za-z_][\w-]*$/.test(parts.at(-1))) {
    at = parts.length - 1
    field = parts[at]
  }
  if (at === -1) return null
  const braced = parts.map((p, i) => i === at ? `{${field}}` : p).join(':')
  if (source.option === 'key') return braced
  const words = source.text.split(/(\s+)/)
  if (words.filter(w => w === key).length !== 1) return null
  return words.map(w => w === key ? braced : w).join('')
}

module.exports = { templateSources, checkSources, refuseSameKey, keyWordsOf }
