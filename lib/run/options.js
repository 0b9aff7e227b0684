'use strict'

const { PipeloadError } = require('../errors')
const { templateFields } = require('../encode/template')
const { templateSources, checkSources, refuseSameKey } = require('../encode/template-checks')
const { OPTIONS, DEFAULTS, LOAD_OPTIONS, CONNECTION_OPTIONS, WORKER_FIELDS, REMOVED, FORMATS } = require('./option-table')
const { invalid, parseDuration, positiveDuration, parseCount, parseTtl, parseSize, parseShard, saidDurations, MAX_DURATION_MS } = require('./option-values')
const { ioredisOptions } = require('../send/connection')

// load()'s options checked once, from the option table (./option-table.js); what the table
// cannot say of one option alone is here: the templates, the checkpoint with resume.
// index.d.ts and docs/library.md list the same names (test/option-table.test.js checks).

/**
 * Refuse option names not in `known`, suggesting the closest known one. Names whose value
 * is undefined are let through: `{ ...defaults, key: undefined }` sets nothing. A removed
 * option (`removed`: name → what the table says to use instead) is refused with that.
 */
function checkKnownOptions (o, known, removed = {}) {
  for (const name of Object.keys(o)) {
    if (o[name] === undefined || known.includes(name)) continue
    if (removed[name]) throw new PipeloadError('PIPELOAD_OPTION_INVALID', `option ${JSON.stringify(name)} was removed: use ${removed[name].library}`, { option: name })
    const near = closestNames(name, known).slice(0, 3).map(k => JSON.stringify(k)).join(' or ')
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `unknown option ${JSON.stringify(name)}${near ? `: did you mean ${near}?` : ''}`, { option: name })
  }
}

/**
 * The known names nearest to `name` (case aside, a swap of two letters as one edit), if
 * near enough; several when equally near (`tll`: `ttl` or `tls`), in alphabetical order.
 */
function closestNames (name, known) {
  const lower = name.toLowerCase()
  const letters = sortedLetters(lower)
  let best = []
  let bestScore = Math.max(1, Math.floor(name.length / 3)) + 1
  for (const k of known) {
    // At equal distance, a name with the same letters wins: `tsl` is `tls` with two letters swapped.
    const score = editDistance(lower, k.toLowerCase()) - (sortedLetters(k.toLowerCase()) === letters ? 0.5 : 0)
    if (score < bestScore) { best = [k]; bestScore = score } else if (score === bestScore) best.push(k)
  }
  return best.sort()
}

function sortedLetters (s) {
  return [...s].sort().join('')
}

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function editDistance (a, b) {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i])
  for (let j = 1; j <= b.length; j++) rows[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1)
      rows[i][j] = d
    }
  }
  return rows[a.length][b.length]
}

// What a restore refuses: the dump's lines say the commands (lib/encode/restore.js).
const NOT_WITH_RESTORE = ['key', 'command', 'commands', 'map', 'ttl', 'replace', 'vector', 'sameKey', 'jsonPath', 'shard']

function templatesOf (o) {
  if (o.restore === true) {
    const also = NOT_WITH_RESTORE.filter(k => o[k] !== undefined && o[k] !== null && o[k] !== false)
    if (also.length) throw invalid('restore', `used without ${also.join(', ')} (each line of a dump says its key, type, value and ttl)`, also.join(' and '))
    return { templates: null, map: null }
  }
  const given = ['key', 'command', 'commands', 'map'].filter(k => o[k] !== undefined)
  if (given.length === 0) throw invalid('key, command, commands or map', 'given (what to write for each record)', 'none')
  if (o.map !== undefined) {
    if (typeof o.map !== 'function') throw invalid('map', 'a function record => commands', typeof o.map)
    if (/^Async/.test(o.map[Symbol.toStringTag])) throw invalid('map', 'a function that returns the commands, not a Promise of them (pipeload does not wait for map(): fetch what it needs before the load)', 'an async function')
    if (given.length > 1) throw invalid('map', 'used without key/command templates', given.join(' and '))
    return { templates: null, map: o.map }
  }
  if (o.key !== undefined && (typeof o.key !== 'string' || !o.key)) throw invalid('key', 'a key template such as "user:{id}"', o.key)
  for (const t of [].concat(o.command ?? [], o.commands ?? [])) {
    if (typeof t !== 'string') throw invalid('command', 'a template string such as "SET k:{id} {v}"', t)
  }
  const sources = templateSources(o)
  if (sources.length === 0) throw invalid('commands', 'at least one template', '[]')
  // Their syntax and arity now, on this thread: a parse worker must not be the first to read
  // them (its error would be a stopped thread), and what needs no input comes before connecting.
  const checked = checkSources(sources)
  return { templates: sources.map(s => s.template), map: null, checked }
}

/**
 * The connection options (url, host, port, tls, sentinels), checked as a connection would
 * read them, before anything runs: a dry run that never connects refuses `port: 99999` too.
 */
function checkConnection (o) {
  if (!o.redis) ioredisOptions(o)
}

/** Validate and complete load() options once; everything downstream trusts the result. */
function normalizeLoadOptions (o = {}) {
  if (o === null || typeof o !== 'object') throw invalid('options', 'an object', o)
  checkKnownOptions(o, LOAD_OPTIONS, REMOVED)
  if (o.input === undefined || o.input === null) throw invalid('input', 'a file path, a pattern, "-", a URL, a list of these, a Readable or an iterable of records', o.input)
  for (const e of OPTIONS) if (e.early) e.check(o)
  const { templates, map, checked } = templatesOf(o)
  if (o.checkpoint !== undefined && (typeof o.checkpoint !== 'string' || !o.checkpoint)) throw invalid('checkpoint', 'a file path', o.checkpoint)
  if (o.resume && !o.checkpoint) throw invalid('resume', 'used with checkpoint (the file to resume from)', 'no checkpoint')
  if (![undefined, null, true, false, 'if-present'].includes(o.resume)) throw invalid('resume', 'true, false or "if-present"', o.resume)
  if (o.checkpoint && o.dryRun) throw invalid('checkpoint', 'used without dryRun (nothing is acknowledged in a dry run)', o.dryRun)
  const out = {
    ...o,
    templates,
    map,
    // What the templates read (a Parquet input reads those columns only); null: everything (map()).
    fieldsUsed: templates ? templateFields(templates) : null,
    // What a parse worker takes of these (lib/threads/protocol.js workerOptions).
    workerFields: WORKER_FIELDS,
    // The durations as given, for the messages that echo them (--retry-timeout 2m: "2m").
    said: saidDurations(o, OPTIONS.filter(e => e.duration).map(e => e.name))
  }
  for (const e of OPTIONS) if (e.check && !e.early) out[e.as || e.name] = e.check(o)
  checkConnection(o)
  // Every option read: the suggestion may name a --columns column.
  if (checked) refuseSameKey(checked, { sameKey: out.sameKey, columns: out.columns })
  return Object.freeze(out)
}

module.exports = { normalizeLoadOptions, parseShard, checkKnownOptions, DEFAULTS, FORMATS, LOAD_OPTIONS, CONNECTION_OPTIONS, invalid, parseDuration, positiveDuration, parseCount, parseTtl, parseSize, MAX_DURATION_MS }
