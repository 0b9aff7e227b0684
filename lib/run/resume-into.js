'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { PipeloadError } = require('../errors')
const { ioredisOptions } = require('../send/connection')

// What a checkpoint records of where and how its records were loaded, besides the input
// (./checkpoint.js): the target and the commands. A resume into another server, or with other
// commands, would count records as loaded that are not there, or not in that shape: it is
// refused, naming both values.
//
// The target is the address as the options resolve it (host:port/db, a socket, a Sentinel
// master by name and sentinels, a cluster by the seed given), known before connecting: the
// check comes before anything is opened, sent or cut (the --rejects file). A server has no
// identity that outlives a restart (run_id changes with each), and a cluster's master node
// IDs change with a failover, so an address is what stays the same across the restarts and
// failovers a resume is for. The cost: the same server under another name (localhost and
// 127.0.0.1, another seed of the same cluster) is refused too, naming both; resume with the
// address the checkpoint names. Never a credential: no user name, no password.
//
// The commands are the templates as the run sends them (--key 'user:{id}' is HSET user:{id} *),
// or of a --map module its resolved path and its content's sha256; of a map function given to
// load(), the sha256 of its source text; with what else shapes them (`modifiers`: --ttl and
// --ttl-keys, --replace, --vector), left out when none is given.

/** map functions the CLI loaded from a --map module: function → { module, sha256 }. */
const mapModules = new WeakMap()

function sha256 (data) {
  return crypto.createHash('sha256').update(data).digest('hex')
}

/** The CLI loaded `fn` from the --map module `file`: its checkpoint records the file's path and hash. */
function registerMapModule (fn, file) {
  const resolved = path.resolve(file)
  let bytes
  try {
    bytes = fs.readFileSync(resolved)
  } catch (err) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `--map ${file}: cannot read it: ${err.message}`, { option: '--map' })
  }
  mapModules.set(fn, { module: resolved, sha256: sha256(bytes) })
}

/** host:port of an address, an IPv6 one in brackets. */
function hostPort (host, port) {
  const h = String(host).toLowerCase()
  return `${h.includes(':') ? `[${h}]` : h}:${port}`
}

/** The parts of a URL ioredis is given (the credentials are already out of it). */
function urlParts (rest) {
  if (!rest) return {}
  if (rest.startsWith('/')) return { path: rest }
  const u = new URL(rest)
  const db = u.pathname.replace(/\//g, '') || u.searchParams.get('db')
  return {
    host: u.hostname.replace(/^\[|\]$/g, '') || undefined,
    port: u.port ? Number(u.port) : undefined,
    db: db ? Number(db) : undefined
  }
}

/** An address from resolved connection options: { host, port, db, path, sentinels, name }. */
function addressOf (c) {
  const db = Number(c.db ?? 0)
  if (c.sentinels) {
    const list = c.sentinels.map(s => hostPort(s.host, s.port ?? 26379)).sort()
    return `master "${c.name}" via sentinel ${list.join(',')} db ${db}`
  }
  if (c.path) return `${c.path} db ${db}`
  return `${hostPort(c.host ?? '127.0.0.1', c.port ?? 6379)}/${db}`
}

/** Where a load goes, as the checkpoint records it (module comment). */
function targetOf (o) {
  const client = o.redis
  if (client) {
    if (client.isCluster) return `cluster via ${(client.startupNodes || []).map(n => typeof n === 'object' ? hostPort(n.host ?? '127.0.0.1', n.port ?? 6379) : String(n)).sort().join(',')}`
    return addressOf(client.options || {})
  }
  const [opts, rest] = ioredisOptions(o)
  const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined))
  return addressOf({ ...urlParts(rest), ...given })
}

/**
 * What changes the commands besides the templates or map: --ttl (and --ttl-keys), --replace,
 * --vector; { } when none is given (then a checkpoint leaves `modifiers` out).
 */
function modifiersOf (o) {
  const m = {}
  if (o.ttl) Object.assign(m, { ttl: o.ttl, ttlKeys: o.ttlKeys ?? 'first' })
  if (o.replace) m.replace = true
  if (o.vectors?.length) m.vectors = o.vectors.map(v => [v.name, v.type, v.dim].filter(x => x !== undefined && x !== null).join(':'))
  return m
}

/** The commands a load sends, as the checkpoint records them: { templates } or { map }, and its modifiers. */
function commandsOf (o) {
  // A restore's commands are the dump's; its start time is the base of every expiry (plan.js).
  if (o.restore) return { restore: { startedAt: o.restoreAt } }
  const modifiers = modifiersOf(o)
  const more = Object.keys(modifiers).length ? { modifiers } : {}
  if (o.templates) return { templates: [...o.templates], ...more }
  return { map: mapModules.get(o.map) ?? { function: sha256(String(o.map)) }, ...more }
}

/** What the checkpoint records of its run: { target, templates } or { target, map }. */
function writesOf (o) {
  return { target: targetOf(o), ...commandsOf(o) }
}

/** Commands for a message: the templates quoted, or the map module or function with a short hash. */
function commandsText (c, other) {
  const same = JSON.stringify(c.modifiers ?? {}) === JSON.stringify(other.modifiers ?? {})
  return baseCommandsText(c) + (same ? '' : modifiersText(c.modifiers || {}))
}

function baseCommandsText (c) {
  if (c.restore) return 'a restore of a dump (--restore)'
  if (c.templates) return c.templates.map(t => JSON.stringify(t)).join(', ')
  if (c.map.module) return `those of the --map module ${c.map.module} (sha256 ${c.map.sha256.slice(0, 12)})`
  return `those of a map function (source sha256 ${c.map.function.slice(0, 12)})`
}

/** " with --ttl 3600 --replace" as the flags say it, or that none was given. */
function modifiersText (m) {
  const flags = []
  if (m.ttl) flags.push(`--ttl ${m.ttl}${m.ttlKeys === 'all' ? ' --ttl-keys all' : ''}`)
  if (m.replace) flags.push('--replace')
  for (const v of m.vectors || []) flags.push(`--vector ${v}`)
  return flags.length ? ` with ${flags.join(' ')}` : ' (no --ttl, --replace or --vector)'
}

/**
 * The same commands: the same templates in the same order, or the same map module content or
 * function source, with the same --ttl, --replace and --vector.
 */
function sameCommands (a, b) {
  if (Boolean(a.restore) !== Boolean(b.restore)) return false
  return JSON.stringify(a.templates ?? a.map) === JSON.stringify(b.templates ?? b.map) && Boolean(a.templates) === Boolean(b.templates) &&
    JSON.stringify(a.modifiers ?? {}) === JSON.stringify(b.modifiers ?? {})
}

/**
 * Refuse a resume into another target or with other commands than the checkpoint's run
 * (`now`: writesOf this run's options), with both values; a checkpoint that does not record
 * them (an older pipeload's) is not refused: unchecked() says what was not checked.
 */
function checkSameWrites (file, state, now) {
  const problems = []
  if (typeof state.target === 'string' && state.target !== now.target) {
    problems.push(`it was written for a load into ${state.target}; this run loads into ${now.target}`)
  }
  const was = state.templates ? { templates: state.templates } : state.map ? { map: state.map } : state.restore ? { restore: state.restore } : null
  if (was && state.modifiers) was.modifiers = state.modifiers
  if (was && !sameCommands(was, now)) {
    const change = was.map?.module && was.map.module === now.map?.module && was.map.sha256 !== now.map.sha256 ? ', changed since' : ''
    problems.push(`its commands were ${commandsText(was, now)}; this run's are ${commandsText(now, was)}${change}`)
  }
  if (problems.length === 0) return
  const what = problems.length === 2 ? 'target and commands' : typeof state.target === 'string' && state.target !== now.target ? 'target' : 'commands'
  throw new PipeloadError('PIPELOAD_CHECKPOINT_INVALID', `checkpoint ${file}: ${problems.join('; ')}: resume with the same ${what}, or remove the checkpoint to start over`, { file })
}

/** What a checkpoint does not record, so a resume cannot check: 'target', 'commands' (an older pipeload's). */
function unchecked (state) {
  const out = []
  if (state.target === undefined) out.push('target')
  if (state.templates === undefined && state.map === undefined && state.restore === undefined) out.push('commands')
  return out
}

/** What is wrong with the recorded target and commands (./checkpoint.js checkpointProblems). */
function writesProblems (state) {
  const problems = []
  if (state.target !== undefined && typeof state.target !== 'string') problems.push(`target is ${JSON.stringify(state.target)}, not a string`)
  if (state.templates !== undefined && !(Array.isArray(state.templates) && state.templates.every(t => typeof t === 'string'))) problems.push('templates is not a list of command templates')
  const m = state.map
  if (m !== undefined && (m === null || typeof m !== 'object' || !(typeof m.function === 'string' || (typeof m.module === 'string' && typeof m.sha256 === 'string')))) {
    problems.push('map is not { module, sha256 } or { function }')
  }
  const r = state.restore
  if (r !== undefined && (r === null || typeof r !== 'object' || !Number.isSafeInteger(r.startedAt))) problems.push('restore is not { startedAt } (epoch milliseconds)')
  const mods = state.modifiers
  if (mods !== undefined && (mods === null || typeof mods !== 'object' || Array.isArray(mods))) problems.push('modifiers is not an object')
  if (state.clean !== undefined && typeof state.clean !== 'boolean') problems.push(`clean is ${JSON.stringify(state.clean)}, not true or false`)
  return problems
}

module.exports = { registerMapModule, targetOf, writesOf, checkSameWrites, unchecked, writesProblems }
