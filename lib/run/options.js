'use strict'

const os = require('node:os')
const { PipeloadError } = require('../errors')
const { keyWord, altReading, parseTemplate, templateFields } = require('../encode/template')

/** Defaults for load(); see docs/performance.md "Choosing --batch-size and --window" for why these. */
const DEFAULTS = Object.freeze({
  header: true,
  batchSize: 5000,
  window: 4,
  maxBatchBytes: 8 * 1024 * 1024,
  maxRecordSize: 64 * 1024 * 1024,
  connectTimeout: 10000,
  timeout: 30000, // ms without a reply, while replies are due, before reconnecting
  retryTimeout: 60000, // ms to keep trying to reconnect after a lost connection
  progressInterval: 250,
  maxFailures: 100, // failures kept in the summary; all are counted
  onError: 'abort', // the first failed record stops the run; 'skip': report it and go on
  // Parse and encode on the main thread: with the byte-range fast paths one thread encodes
  // 1M 5-column rows in about 1.5 s of CPU, faster than one Redis server applies them, and
  // a worker measured no faster while adding ~55 MB RSS (165 MB against the 150 MB bound).
  // 'auto': a worker when the machine has more than 2 cores. `workers` supersedes it.
  worker: false,
  // Threads that parse and encode, decided per run (lib/threads/modes.js autoWorkers):
  // this thread alone where one server is the limit or there are only 2 cores (see
  // `worker` above), parse workers for a cluster of several masters or a dry run, which
  // one thread cannot feed at their speed.
  workers: 'auto',
  // Bytes per chunk of the parallel parse (workers ≥ 2): big enough that a chunk's
  // messages cost nothing next to parsing it, small enough that 2n + 2 of them stay small.
  chunkSize: 1024 * 1024
})

// Every option name load() and bench() take. A name not listed is refused: a misspelled
// option (`batchsize`, `tll`) would otherwise be ignored without a word. index.d.ts and
// docs/library.md list the same names (test/options.test.js checks).
const CONNECTION_OPTIONS = Object.freeze(['url', 'host', 'port', 'username', 'password', 'db', 'tls', 'sentinels', 'masterName',
  'sentinelUsername', 'sentinelPassword', 'redis', 'connectTimeout', 'timeout', 'retryTimeout', 'onReconnect'])
const LOAD_OPTIONS = Object.freeze([...CONNECTION_OPTIONS, 'input', 'format', 'name', 'header', 'columns', 'delimiter', 'relaxQuotes', 'jsonPath', 'key',
  'command', 'commands', 'map', 'ttl', 'ttlKeys', 'replace', 'batchSize', 'window', 'maxBatchBytes', 'maxRecordSize', 'worker', 'workers', 'chunkSize', 'cluster', 'dryRun',
  'output', 'onProgress', 'onFailure', 'progressInterval', 'signal', 'onError', 'maxErrors', 'maxFailures', 'rejects',
  'checkpoint', 'resume', 'onResume', 'vector', 'shard'])

const FORMATS = ['csv', 'tsv', 'json', 'ndjson', 'parquet']
const DRY_RUN = ['resp', 'text']

function invalid (name, expected, got) {
  const shown = typeof got === 'string' ? JSON.stringify(got) : String(got)
  return new PipeloadError('PIPELOAD_OPTION_INVALID', `${name} must be ${expected}, got ${shown}`, { option: name })
}

const UNITS = { us: 0.001, µs: 0.001, μs: 0.001, ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 }

/**
 * Refuse option names not in `known`, suggesting the closest known one. Names whose value
 * is undefined are let through: `{ ...defaults, key: undefined }` sets nothing.
 */
function checkKnownOptions (o, known) {
  for (const name of Object.keys(o)) {
    if (o[name] === undefined || known.includes(name)) continue
    const near = closestNames(name, known).slice(0, 3).map(k => JSON.stringify(k)).join(' or ')
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `unknown option ${JSON.stringify(name)}${near ? `: did you mean ${near}?` : ''}`, { option: name })
  }
}

/**
 * The known names nearest to `name` (case aside, a swap of two letters as one edit), if
 * near enough; several when equally near (`tll`: `ttl` or `tls`).
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
  return best
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

// The longest delay setTimeout/setInterval hold: beyond it Node fires after 1 ms instead
// (with a TimeoutOverflowWarning), so --connect-timeout 30d would fail every connect at once.
const MAX_DURATION_MS = 2 ** 31 - 1

/** `250ms`, `0.25s`, `1m`, `2h`, `1d`, `250` (ms) or a number of ms → milliseconds, at most MAX_DURATION_MS. */
function parseDuration (value, name) {
  let ms = value
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw invalid(name, 'a duration ≥ 0 such as "250ms" or "1.5s"', value)
  } else {
    const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(us|µs|μs|ms|s|m|h|d)?\s*$/.exec(String(value))
    if (!m) throw invalid(name, 'a duration such as "250ms" or "1.5s"', value)
    ms = Number(m[1]) * UNITS[m[2] || 'ms']
  }
  if (ms > MAX_DURATION_MS) throw invalid(name, `at most ${MAX_DURATION_MS} ms (24.8 days, the longest timer Node.js can set), such as "24d"`, value)
  return ms
}

function durationOf (o, name) {
  return o[name] === undefined ? DEFAULTS[name] : parseDuration(o[name], name)
}

/** A duration that must be over 0: a connect timeout of 0 would give up before trying. */
function positiveDuration (value, name, fallback) {
  if (value === undefined || value === null) return fallback
  const ms = parseDuration(value, name)
  if (!(ms >= 1)) throw invalid(name, 'a duration of at least 1 ms such as "5s"', value)
  return ms
}

const COUNT_UNITS = { '': 1, k: 1e3, m: 1e6, g: 1e9 }

/**
 * A count: a number, or text such as "5000", "5k", "2.5k", "1m", "1_000_000". k, m and g are
 * 1000-based (counts, not bytes); the result must be whole ("1.5" is refused, "1.5k" is 1500).
 * Returns NaN for text that is no count, so each caller says what it expected.
 */
function parseCount (v) {
  if (typeof v === 'number') return v
  if (typeof v !== 'string') return NaN
  const m = /^\s*(\d[\d_]*(?:\.\d+)?)\s*([kmg]?)\s*$/i.exec(v)
  if (!m || /_$|__/.test(m[1])) return NaN
  return Math.round(Number(m[1].replace(/_/g, '')) * COUNT_UNITS[m[2].toLowerCase()] * 1e6) / 1e6
}

function positiveInt (o, name) {
  const v = o[name]
  if (v === undefined) return DEFAULTS[name]
  const n = parseCount(v)
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(name, 'a positive integer such as 5000 or "5k"', v)
  return n
}

const SIZE_UNITS = { b: 1, kib: 1024, kb: 1024, mib: 1024 ** 2, mb: 1024 ** 2, gib: 1024 ** 3, gb: 1024 ** 3 }

/**
 * A size in bytes: a number, or text such as "1048576", "64MiB", "64 MiB", "512kb". KB, MB
 * and GB are 1024-based, as in redis.conf; plain k/m/g are refused (redis.conf reads 1m as
 * 1,000,000 bytes, so they would be ambiguous).
 */
function positiveSize (o, name) {
  return o[name] === undefined ? DEFAULTS[name] : parseSize(o[name], name)
}

/** A size (see positiveSize) → bytes; `name` is the option in the message. */
function parseSize (v, name) {
  if (typeof v !== 'string') return positiveInt({ [name]: v }, name)
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v)
  const unit = m ? SIZE_UNITS[(m[2] || 'b').toLowerCase()] : undefined
  const n = unit ? Math.floor(Number(m[1]) * unit) : NaN
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(name, 'a size in bytes ≥ 1, such as 1048576 or "64MiB"', v)
  return n
}

function oneOf (o, name, allowed) {
  const v = o[name]
  if (v === undefined || v === null) return undefined
  if (!allowed.includes(v)) throw invalid(name, `one of ${allowed.join(', ')}`, v)
  return v
}

function templatesOf (o) {
  const given = ['key', 'command', 'commands', 'map'].filter(k => o[k] !== undefined)
  if (given.length === 0) throw invalid('key, command, commands or map', 'given (what to write for each record)', 'none')
  if (o.map !== undefined) {
    if (typeof o.map !== 'function') throw invalid('map', 'a function record => commands', typeof o.map)
    if (/^Async/.test(o.map[Symbol.toStringTag])) throw invalid('map', 'a function that returns the commands, not a Promise of them (pipeload does not wait for map(): fetch what it needs before the load)', 'an async function')
    if (given.length > 1) throw invalid('map', 'used without key/command templates', given.join(' and '))
    return { templates: null, map: o.map }
  }
  const templates = []
  if (o.key !== undefined) {
    if (typeof o.key !== 'string' || !o.key) throw invalid('key', 'a key template such as "user:{id}"', o.key)
    templates.push(`HSET ${keyWord(o.key)} *`)
  }
  for (const t of [].concat(o.command ?? [], o.commands ?? [])) {
    if (typeof t !== 'string') throw invalid('command', 'a template string such as "SET k:{id} {v}"', t)
    templates.push(t)
  }
  if (templates.length === 0) throw invalid('commands', 'at least one template', '[]')
  // Their syntax now, on this thread: a parse worker must not be the first to read them
  // (its error would be a stopped thread), and what needs no input comes before connecting.
  for (const t of templates) parseTemplate(t)
  return { templates, map: null }
}

/** vector: "embedding:f32" or "embedding:f64:768" (or a list): fields `*` writes as float bytes. */
function vectorsOf (o) {
  if (o.vector === undefined || o.vector === null) return []
  return [].concat(o.vector).map(v => {
    const alt = typeof v === 'string' ? altReading(v.trim()) : null
    if (!alt || alt.kind !== 'vector') throw invalid('vector', 'a field and a float type such as "embedding:f32" or "embedding:f32:768"', v)
    return { name: alt.name, type: alt.type, dim: alt.dim }
  })
}

/**
 * A TTL in whole seconds (EXPIRE's unit): a number of seconds, "3600", or a duration with a
 * unit: "90s", "30m", "1h", "7d" (one unit: write 90m, not 1h30m). A plain number is
 * seconds here, unlike the library's durations (ms), because EXPIRE counts seconds.
 */
function parseTtl (v, name = 'ttl') {
  let n = v
  if (typeof v === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(v)
    n = m ? Number(m[1]) * (m[2] ? UNITS[m[2]] / 1000 : 1) : NaN
  }
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(name, 'a whole number of seconds ≥ 1, such as 3600, "90s", "1h" or "7d"', v)
  return n
}

function ttlOf (o) {
  if (o.ttl === undefined || o.ttl === null) return undefined
  return parseTtl(o.ttl)
}

/** Which keys of a record --ttl expires: 'first' (the first command's key) or 'all' (every key it writes). */
function ttlKeysOf (o) {
  const v = oneOf(o, 'ttlKeys', ['first', 'all'])
  if (v !== undefined && o.ttl == null) throw invalid('ttlKeys', 'used with ttl (the expiry to set)', v)
  return v ?? 'first'
}

function replaceOf (o) {
  if (o.replace === undefined || o.replace === null) return false
  if (typeof o.replace !== 'boolean') throw invalid('replace', 'true or false', o.replace)
  return o.replace
}

function relaxQuotesOf (o) {
  if (o.relaxQuotes === undefined || o.relaxQuotes === null) return false
  if (typeof o.relaxQuotes !== 'boolean') throw invalid('relaxQuotes', 'true or false', o.relaxQuotes)
  return o.relaxQuotes
}

function delimiterOf (o) {
  if (o.delimiter === undefined) return undefined
  const d = o.delimiter === '\\t' ? '\t' : o.delimiter
  if (typeof d !== 'string' || d.length === 0 || /[\r\n"]/.test(d)) throw invalid('delimiter', 'a character other than a quote or newline', o.delimiter)
  return d
}

/** onError, maxErrors (skip mode: stop once more than this many records failed), rejects. */
function errorPolicyOf (o) {
  const onError = oneOf(o, 'onError', ['abort', 'skip']) ?? DEFAULTS.onError
  let maxErrors = null
  if (o.maxErrors !== undefined && o.maxErrors !== null) {
    const v = o.maxErrors
    maxErrors = parseCount(v)
    if (!Number.isSafeInteger(maxErrors) || maxErrors < 0) throw invalid('maxErrors', 'a whole number ≥ 0 such as 100 or "1k"', v)
    if (onError !== 'skip') throw invalid('maxErrors', 'used with onError "skip" (abort stops at the first failure)', v)
  }
  if (o.rejects !== undefined && o.rejects !== null && (typeof o.rejects !== 'string' || !o.rejects)) {
    throw invalid('rejects', 'a file path', o.rejects)
  }
  return { onError, maxErrors, rejects: o.rejects || null }
}

/** cluster: true = the server must be a cluster, false = never treat it as one, undefined = ask it. */
function clusterOf (o) {
  if (o.cluster === undefined || o.cluster === null) return undefined
  if (typeof o.cluster !== 'boolean') throw invalid('cluster', 'true or false', o.cluster)
  return o.cluster
}

/**
 * columns: names for the CSV/TSV columns, an array (library) or 'a,b,c' (CLI); null when not
 * given. Distinct and non-empty: two fields of one name would overwrite each other in `*`.
 */
function columnsOf (o) {
  if (o.columns === undefined || o.columns === null) return null
  const list = typeof o.columns === 'string' ? o.columns.split(',').map(c => c.trim()) : o.columns
  if (!Array.isArray(list) || list.length === 0 || list.some(c => typeof c !== 'string' || c === '')) {
    throw invalid('columns', 'non-empty column names, e.g. ["id", "name"] (--columns id,name)', Array.isArray(o.columns) ? JSON.stringify(o.columns) : o.columns)
  }
  const dup = list.find((c, i) => list.indexOf(c) !== i)
  if (dup !== undefined) throw new PipeloadError('PIPELOAD_OPTION_INVALID', `columns must be distinct names, got "${dup}" twice`, { option: 'columns' })
  return Object.freeze([...list])
}

/**
 * shard: 'i/n' or { index, count }, 0 ≤ i < n → { index, count }, or null for none. One
 * shard of one (0/1) is the whole input: null, so it reads, numbers and checkpoints as a
 * run without --shard does. `name` says where the value came from (PIPELOAD_SHARD).
 */
function parseShard (v, name = 'shard') {
  if (v === undefined || v === null) return null
  let index, count
  if (typeof v === 'string') {
    const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(v)
    if (m) [index, count] = [Number(m[1]), Number(m[2])]
  } else if (typeof v === 'object') {
    ({ index, count } = v)
  }
  const expected = 'i/n with 0 ≤ i < n, such as "0/4" (the first of 4 shards) or { index: 0, count: 4 }'
  if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(index) || index < 0) {
    throw invalid(name, expected, typeof v === 'object' ? JSON.stringify(v) : v)
  }
  if (index >= count) {
    const hint = index === count ? ` (shards count from 0: the last of ${count} is ${count - 1}/${count}; from a 1-based number k, write $((k-1))/${count})` : ''
    throw invalid(name, expected + hint, typeof v === 'object' ? JSON.stringify(v) : v)
  }
  return count === 1 ? null : Object.freeze({ index, count })
}

/** Validate and complete load() options once; everything downstream trusts the result. */
function normalizeLoadOptions (o = {}) {
  if (o === null || typeof o !== 'object') throw invalid('options', 'an object', o)
  checkKnownOptions(o, LOAD_OPTIONS)
  if (o.input === undefined || o.input === null) throw invalid('input', 'a file path, a pattern, "-", a URL, a list of these, a Readable or an iterable of records', o.input)
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw invalid('onProgress', 'a function', typeof o.onProgress)
  if (o.onFailure !== undefined && typeof o.onFailure !== 'function') throw invalid('onFailure', 'a function', typeof o.onFailure)
  if (o.onResume !== undefined && typeof o.onResume !== 'function') throw invalid('onResume', 'a function', typeof o.onResume)
  if (o.signal !== undefined && !(o.signal && typeof o.signal.aborted === 'boolean')) throw invalid('signal', 'an AbortSignal', o.signal)
  const { templates, map } = templatesOf(o)
  if (o.checkpoint !== undefined && (typeof o.checkpoint !== 'string' || !o.checkpoint)) throw invalid('checkpoint', 'a file path', o.checkpoint)
  if (o.resume && !o.checkpoint) throw invalid('resume', 'used with checkpoint (the file to resume from)', 'no checkpoint')
  if (![undefined, null, true, false, 'if-present'].includes(o.resume)) throw invalid('resume', 'true, false or "if-present"', o.resume)
  if (o.checkpoint && o.dryRun) throw invalid('checkpoint', 'used without dryRun (nothing is acknowledged in a dry run)', o.dryRun)
  return Object.freeze({
    ...o,
    format: oneOf(o, 'format', FORMATS),
    header: o.header === undefined ? DEFAULTS.header : Boolean(o.header),
    columns: columnsOf(o),
    delimiter: delimiterOf(o),
    relaxQuotes: relaxQuotesOf(o),
    templates,
    map,
    // What the templates read (a Parquet input reads those columns only); null: everything (map()).
    fieldsUsed: templates ? templateFields(templates) : null,
    ttl: ttlOf(o),
    vectors: vectorsOf(o),
    ttlKeys: ttlKeysOf(o),
    replace: replaceOf(o),
    batchSize: positiveInt(o, 'batchSize'),
    window: positiveInt(o, 'window'),
    maxBatchBytes: positiveSize(o, 'maxBatchBytes'),
    maxRecordSize: positiveSize(o, 'maxRecordSize'),
    connectTimeout: positiveDuration(o.connectTimeout, 'connectTimeout', DEFAULTS.connectTimeout),
    timeout: durationOf(o, 'timeout'),
    retryTimeout: durationOf(o, 'retryTimeout'),
    progressInterval: positiveInt(o, 'progressInterval'),
    maxFailures: positiveInt(o, 'maxFailures'),
    dryRun: oneOf(o, 'dryRun', DRY_RUN),
    cluster: clusterOf(o),
    shard: parseShard(o.shard),
    ...errorPolicyOf(o),
    worker: o.worker === undefined ? DEFAULTS.worker : workerOf(o),
    workers: workersOf(o),
    chunkSize: positiveSize(o, 'chunkSize')
  })
}

/** worker (given): 'auto' is a worker when the machine has more than 2 cores. */
function workerOf (o) {
  return o.worker === 'auto' ? os.availableParallelism() > 2 : Boolean(o.worker)
}

/** workers: a count ≥ 0 or 'auto'; without it, `worker` (the older switch) means 1 or 0. */
function workersOf (o) {
  const v = o.workers
  if (v === undefined || v === null) {
    if (o.worker === undefined) return DEFAULTS.workers
    return workerOf(o) ? 1 : 0
  }
  if (v === 'auto') return 'auto'
  const n = parseCount(v)
  if (!Number.isSafeInteger(n) || n < 0 || n > 256) throw invalid('workers', 'a number of threads from 0 to 256, or "auto"', v)
  return n
}

module.exports = { normalizeLoadOptions, parseShard, checkKnownOptions, DEFAULTS, FORMATS, LOAD_OPTIONS, CONNECTION_OPTIONS, invalid, parseDuration, positiveDuration, parseCount, parseTtl, parseSize, MAX_DURATION_MS }
