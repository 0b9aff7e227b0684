'use strict'

const { PipeloadError } = require('../errors')
const { altReading } = require('../encode/template')
const { FORMAT_NAMES } = require('../read/formats')
const { PARALLEL_CHUNK_SIZE } = require('../read/cut')
const { invalid, parseDuration, positiveDuration, parseCount, positiveCount, parseSize, parseTtl, parseShard } = require('./option-values')

// Every option of load() and of the import command, declared once. An entry:
//   name        the library's name (null: a flag of the CLI alone, such as --json)
//   flag, help  the CLI flag as commander reads it, and its help line (none: library only)
//   more        further flags of the same option, each { flag, help, hidden }
//   choices, repeatable, flagDefault, defaultText   the flag's choices, whether it repeats
//               (a list), the value commander fills in (true: `default`, a duration's in seconds: 30s),
//               and how help shows it
//   duration    the flag is a duration: a plain number other than 0 is refused
//   default     load()'s default (DEFAULTS)
//   check       (options) → the value load() runs with; refuses a bad one (PIPELOAD_OPTION_INVALID)
//   as          the name the checked value goes by, when it is not `name` (vector → vectors)
//   early       a check that runs before the templates are read (callbacks, signal)
//   worker      the parse worker needs it: true, or the checked names it takes instead
//   connection  a connection option (bench takes those too); common: a flag of every command
//   bench       bench() takes the option, and `pipeload bench` the flag (with a file: "file: " help)
//   removed     the option is gone: what to use instead (load() and the CLI refuse it with that)
// Entries with a flag are in the order `pipeload import --help` lists them.

const FORMATS = FORMAT_NAMES // read/formats.js, the format registry
const DRY_RUN = Object.freeze(['resp', 'text'])
const MiB = 1024 * 1024

function oneOf (o, name, allowed) {
  const v = o[name]
  if (v === undefined || v === null) return undefined
  if (!allowed.includes(v)) throw invalid(name, `one of ${allowed.join(', ')}`, v)
  return v
}

function boolean (o, name, fallback) {
  if (o[name] === undefined || o[name] === null) return fallback
  if (typeof o[name] !== 'boolean') throw invalid(name, 'true or false', o[name])
  return o[name]
}

const count = (name, example) => o => o[name] === undefined ? DEFAULTS[name] : positiveCount(o[name], name, example)
// A window is a few batches, not a batch size; 0 would send nothing: 1 is the least pipelining.
const WINDOW_EXAMPLE = '4 or 16 (batches awaiting replies at most; 1 sends the next batch once the one before is answered)'
const size = name => o => o[name] === undefined ? DEFAULTS[name] : parseSize(o[name], name)
const duration = name => o => o[name] === undefined ? DEFAULTS[name] : parseDuration(o[name], name)
const callback = name => o => { if (o[name] !== undefined && typeof o[name] !== 'function') throw invalid(name, 'a function', typeof o[name]) }

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

function delimiterOf (o) {
  if (o.delimiter === undefined) return undefined
  const d = o.delimiter === '\\t' ? '\t' : o.delimiter
  if (typeof d !== 'string' || d.length === 0 || /[\r\n"]/.test(d)) throw invalid('delimiter', 'a character other than a quote or newline', o.delimiter)
  return d
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

/** sameKey: templates whose keys name no field are meant; map() writes the keys it returns. */
function sameKeyOf (o) {
  const v = boolean(o, 'sameKey', false)
  if (v && o.map !== undefined) throw invalid('sameKey', 'used with key or command templates (map() writes the keys it returns)', v)
  return v
}

/** Which keys of a record --ttl expires: 'first' (the first command's key) or 'all' (every key it writes). */
function ttlKeysOf (o) {
  const v = oneOf(o, 'ttlKeys', ['first', 'all'])
  if (v !== undefined && o.ttl == null) throw invalid('ttlKeys', 'used with ttl (the expiry to set)', v)
  return v ?? 'first'
}

/** maxErrors (skip mode: stop once more than this many records failed); null: no bound. */
function maxErrorsOf (o) {
  if (o.maxErrors === undefined || o.maxErrors === null) return null
  const v = o.maxErrors
  const n = parseCount(v)
  if (!Number.isSafeInteger(n) || n < 0) throw invalid('maxErrors', 'a whole number ≥ 0 such as 100 or "1k"', v)
  if ((oneOf(o, 'onError', ['abort', 'skip']) ?? DEFAULTS.onError) !== 'skip') throw invalid('maxErrors', 'used with onError "skip" (abort stops at the first failure)', v)
  return n
}

function rejectsOf (o) {
  if (o.rejects !== undefined && o.rejects !== null && (typeof o.rejects !== 'string' || !o.rejects)) throw invalid('rejects', 'a file path', o.rejects)
  return o.rejects || null
}

/** workers: a count from 0 to 256 or 'auto'. */
function workersOf (o) {
  const v = o.workers
  if (v === undefined || v === null) return DEFAULTS.workers
  if (v === 'auto') return 'auto'
  const n = parseCount(v)
  if (!Number.isSafeInteger(n) || n < 0 || n > 256) throw invalid('workers', 'a number of threads from 0 to 256, or "auto"', v)
  return n
}

// Connections per server (per master of a cluster): at most this many, each one a window of
// its own; `auto` asks the server (lib/send/io-threads.js).
const MAX_CONNECTIONS = 64

function connectionsOf (o) {
  const v = o.connections
  if (v === undefined || v === null) return DEFAULTS.connections
  if (v === 'auto') return 'auto'
  const n = parseCount(v)
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_CONNECTIONS) throw invalid('connections', `a number of connections from 1 to ${MAX_CONNECTIONS}, or "auto"`, v)
  return n
}

const OPTIONS = Object.freeze([
  { name: 'input', bench: true }, // the command's <input...> arguments
  { name: 'format', flag: '-f, --format <format>', help: 'input format (default: from the file extension; for a URL, its path or Content-Type)', choices: FORMATS, check: o => oneOf(o, 'format', FORMATS), bench: true },
  { name: 'name' },
  { name: 'header', flag: '--no-header', help: 'CSV/TSV has no header row: fields are {0}, {1}, …', default: true, check: o => o.header === undefined ? DEFAULTS.header : Boolean(o.header), worker: true, bench: true },
  { name: 'columns', flag: '--columns <names>', help: 'CSV/TSV column names, comma-separated: name a --no-header file\'s columns, or rename the header\'s (e.g. duplicated names)', check: columnsOf, worker: true },
  { name: 'delimiter', flag: '-d, --delimiter <char>', help: 'CSV field delimiter (\\t for tab)', check: delimiterOf, worker: true, bench: true },
  { name: 'relaxQuotes', flag: '--relax-quotes', help: 'CSV/TSV: a quote inside an unquoted field (5\'10", 37°36\'37.8"N) is data, not an error', check: o => boolean(o, 'relaxQuotes', false), worker: true },
  { name: 'jsonPath', flag: '--json-path <path>', help: 'JSON: the records are at this path (an array, or an object keyed by id): data.items, $.data.items, data.items[*]; $ = the top level', worker: true, bench: true },
  // key, command, commands and map are read together (options.js templatesOf): the worker takes the templates.
  { name: 'key', flag: '-k, --key <template>', help: "write each record as a hash: same as -c 'HSET <template> *'", worker: ['templates'], bench: true },
  { name: 'command', flag: '-c, --command <template>', help: 'command template per record, repeatable: {field}, {a.b}, {0}, * = all field/value pairs', repeatable: true, worker: ['templates'], bench: true },
  { name: 'commands', worker: ['templates'], bench: true },
  // A dump of pipeload export: each line says its key, type, ttl and value (lib/encode/restore.js).
  { name: 'restore', flag: '--restore', help: 'the input is a dump of pipeload export (NDJSON): re-create each key with its type, value and TTL, replacing what is there (no --key, -c or --map)', check: o => boolean(o, 'restore', false), worker: ['restore', 'restoreAt'] },
  { name: 'map', flag: '--map <module>', help: 'a JS module (CommonJS or ESM) whose default export (record, ctx) returns the commands for a record, or null to skip it; ctx = { n, line, file }' },
  // A template whose keys name no field writes every record to the same key: refused unless this says it is meant (lib/encode/template-checks.js).
  { name: 'sameKey', flag: '--same-key', help: 'let every record write the same key: templates whose keys name no field (a counter: -c \'INCR total\', one list: -c \'RPUSH ids {id}\')', check: sameKeyOf, bench: true },
  { name: 'ttl', flag: '--ttl <duration>', help: 'EXPIRE the key of the first command after writing it: seconds (3600) or 90s, 30m, 1h, 7d', check: o => o.ttl === undefined || o.ttl === null ? undefined : parseTtl(o.ttl), worker: true, bench: true },
  { name: 'ttlKeys', flag: '--ttl-keys <which>', help: 'which keys --ttl expires: first = the first command\'s key, all = every key the record writes (index sets too)', choices: ['first', 'all'], flagDefault: 'first', check: ttlKeysOf, worker: true },
  { name: 'replace', flag: '--replace', help: 'DEL each record\'s first key before its commands: a re-import leaves no stale fields', check: o => boolean(o, 'replace', false), worker: true },
  { name: 'vector', flag: '--vector <field:f32>', help: '* writes this field (a JSON array of numbers) as float32/f64 bytes, e.g. embedding:f32:768; repeatable', repeatable: true, check: vectorsOf, as: 'vectors', worker: ['vectors'] },
  // Defaults: see docs/performance.md "Choosing --batch-size and --window" for why these.
  { name: 'batchSize', flag: '-b, --batch-size <n>', help: 'commands per pipelined batch (counts take k = 1000, m = 1000000: 5k)', default: 5000, flagDefault: true, check: count('batchSize'), worker: true },
  { name: 'window', flag: '-w, --window <n>', help: 'batches awaiting replies at most', default: 4, flagDefault: true, check: count('window', WINDOW_EXAMPLE), bench: true },
  // Default 1: on a server without I/O threads one connection is as fast (docs/performance.md "Several connections").
  { name: 'connections', flag: '--connections <n|auto>', help: 'connections per server (per master of a cluster), each owning a share of the hash slots, so commands on one key keep their order; auto = 1, or up to 4 where the server has I/O threads (CONFIG GET io-threads)', default: 1, flagDefault: true, check: connectionsOf },
  { name: 'maxBatchBytes', default: 8 * MiB, check: size('maxBatchBytes'), worker: true },
  { name: 'maxRecordSize', flag: '--max-record-size <size>', help: 'refuse records larger than this: bytes, or with a unit (KiB/KB, MiB/MB, GiB/GB: all 1024-based, as in redis.conf)', default: 64 * MiB, flagDefault: true, defaultText: '64 MiB', check: size('maxRecordSize'), worker: true, bench: true },
  // The first failed record stops the run; 'skip': report it and go on.
  { name: 'onError', flag: '--on-error <policy>', help: 'a failed record (bad row, missing field, error reply): abort = stop there, skip = report it and go on', choices: ['abort', 'skip'], default: 'abort', flagDefault: true, check: o => oneOf(o, 'onError', ['abort', 'skip']) ?? DEFAULTS.onError, worker: true },
  { name: 'maxErrors', flag: '--max-errors <n>', help: 'with --on-error skip: stop once more than n records failed', check: maxErrorsOf },
  { name: 'rejects', flag: '--rejects <file>', help: 'write each failed record to this file as NDJSON: { file, line, offset, code, reason, source, raw }', check: rejectsOf, worker: true },
  { name: 'checkpoint', flag: '--checkpoint <file>', help: 'keep in <file> how far the input is loaded and acknowledged (written atomically)', worker: true },
  { name: 'resume', flag: '--resume', help: 'continue from --checkpoint <file>: skip the records it says are loaded (no checkpoint there: exit 2)' },
  { name: null, flag: '--resume-if-present', help: 'resume when --checkpoint <file> is there, else start from the first record (for scripts and jobs that always pass it)' },
  { name: 'onResume', early: true, check: callback('onResume') },
  // ms without a reply, while replies are due, before reconnecting
  { name: 'timeout', flag: '--timeout <duration>', help: 'no reply for this long while replies are due: reconnect and re-send; an http(s) input that sends nothing this long fails: 90s, 500ms, 2m, 1h (a unit is required)', duration: true, default: 30000, flagDefault: true, check: duration('timeout'), connection: true },
  // ms to keep trying to reconnect after a lost connection
  { name: 'retryTimeout', flag: '--retry-timeout <duration>', help: 'keep reconnecting this long after losing the connection', duration: true, default: 60000, flagDefault: true, check: duration('retryTimeout'), connection: true },
  { name: 'shard', flag: '--shard <i/n>', help: 'load only shard i of n (0 ≤ i < n) of the input: n processes, anywhere, with --shard 0/n … (n-1)/n load every record once (default: $PIPELOAD_SHARD)', check: o => parseShard(o.shard) },
  // Threads that parse and encode, decided per run (lib/threads/modes.js autoWorkers): this
  // thread alone where one server is the limit or there are only 2 cores (with the byte-range
  // fast paths one thread encodes 1M 5-column rows in about 1.5 s of CPU, faster than one
  // Redis server applies them, and a worker measured no faster while adding ~55 MB RSS),
  // parse workers for a cluster of several masters or a dry run, which one thread cannot
  // feed at their speed.
  { name: 'workers', flag: '--workers <n|auto>', help: 'threads that parse and encode: 0 = the main thread, 1 = one worker thread, n ≥ 2 = chunks of the input parsed by n threads, sent in input order; auto (default) = up to 4 for a cluster of several masters or --dry-run on more than 2 cores, else 0', default: 'auto', check: workersOf },
  // Bytes per chunk of the parallel parse (workers ≥ 2): big enough that a chunk's messages
  // cost nothing next to parsing it, small enough that the n + 4 in flight stay small
  // (lib/read/cut.js PARALLEL_CHUNK_SIZE says what they cost).
  { name: 'chunkSize', flag: '--chunk-size <size>', help: 'with --workers ≥ 2: bytes per chunk, cut at record boundaries (a tuning knob)', default: PARALLEL_CHUNK_SIZE, flagDefault: true, defaultText: '256 KiB', check: size('chunkSize') },
  // `worker: true/false/'auto'` was a second switch for what `workers` says (0.x: removed).
  { name: 'worker', removed: { library: 'workers: 1 (one worker thread) or workers: 0 (the main thread)', '--worker': '--workers 1 (one worker thread) or --workers 0 (the main thread)', '--no-worker': '--workers 0 (the main thread)' }, more: [{ flag: '--worker', hidden: true }, { flag: '--no-worker', hidden: true }] },
  // true = the server must be a cluster, false = never treat it as one, undefined = ask it.
  { name: 'cluster', flag: '--cluster', help: 'the server is a Redis Cluster node: route each command to the master of its hash slot (default: asked with INFO cluster)', more: [{ flag: '--no-cluster', help: 'never use cluster mode, even when the server says it is a cluster node' }], check: o => boolean(o, 'cluster', undefined) },
  { name: 'dryRun', flag: '--dry-run <mode>', help: 'write the commands to stdout instead of sending them', choices: DRY_RUN, check: o => oneOf(o, 'dryRun', DRY_RUN), worker: true },
  { name: null, flag: '--json', help: 'print the summary as JSON on stdout' },
  { name: null, flag: '-q, --quiet', help: 'print nothing but errors' },
  // A plain line per interval, for logs (lib/cli/progress.js): without the flag, a terminal
  // gets the line redrawn in place and any other stderr a line every 30 s (not with --quiet or --json).
  { name: null, flag: '--progress <interval>', help: 'print a progress line on stderr every <interval>, e.g. 10s, also with --quiet or --json; 0 = none (default: on a terminal one line redrawn in place, else a line every 30s; none with --quiet or --json)', duration: true, more: [{ flag: '--no-progress', help: 'no progress line, on a terminal either' }] },
  { name: 'output' },
  { name: 'onProgress', early: true, check: callback('onProgress') },
  { name: 'onFailure', early: true, check: callback('onFailure') },
  { name: 'signal', early: true, check: o => { if (o.signal !== undefined && !(o.signal && typeof o.signal.aborted === 'boolean')) throw invalid('signal', 'an AbortSignal', o.signal) } },
  { name: 'progressInterval', default: 250, check: count('progressInterval') },
  // failures kept in the summary; all are counted
  { name: 'maxFailures', default: 100, check: count('maxFailures') },
  // The connection: flags every command takes (redis-cli's names), read by lib/cli/connection-flags.js.
  { name: 'url', flag: '-u, --url <url>', help: 'server URL, redis://[user:password@]host:port[/db] (default: $REDIS_URL or 127.0.0.1:6379)', connection: true, common: true },
  { name: 'host', flag: '-h, --host <host>', help: 'server host (redis-cli style); a bare -h shows this help', connection: true, common: true },
  { name: 'port', flag: '-p, --port <port>', help: 'server port', connection: true, common: true },
  { name: 'password', flag: '-a, --pass <password>', help: 'password (prefer $REDISCLI_AUTH or $REDIS_PASSWORD: the command line is visible to other users)', connection: true, common: true },
  { name: 'username', flag: '--user <username>', help: 'ACL user name', connection: true, common: true },
  { name: 'db', flag: '-n, --db <number>', help: 'database number', connection: true, common: true },
  {
    name: 'tls',
    flag: '--tls',
    help: 'connect with TLS (implied by rediss:// and by every --tls-* flag)',
    more: [
      { flag: '--tls-ca <file>', help: 'PEM file of the CA(s) to trust for the server certificate (default: the system CAs)' },
      { flag: '--tls-cert <file>', help: 'PEM client certificate, for servers with tls-auth-clients' },
      { flag: '--tls-key <file>', help: 'PEM private key of --tls-cert' },
      { flag: '--tls-servername <name>', help: 'the name to check the server certificate against and send as SNI (default: the host)' },
      { flag: '--tls-insecure', help: 'do not verify the server certificate (prints a warning)' }
    ],
    connection: true,
    common: true
  },
  { name: 'sentinels', flag: '--sentinel <host:port>', help: 'ask this Redis Sentinel for the master (repeatable; with --master-name)', repeatable: true, connection: true, common: true },
  { name: 'masterName', flag: '--master-name <name>', help: 'the master name the sentinels monitor', connection: true, common: true },
  { name: 'sentinelUsername', connection: true },
  { name: 'sentinelPassword', connection: true },
  { name: 'redis', connection: true },
  { name: 'connectTimeout', flag: '--connect-timeout <duration>', help: 'give up setting up a connection (connect, TLS, AUTH, SELECT, cluster and sentinel discovery) after this long, each step', duration: true, default: 10000, flagDefault: true, check: o => positiveDuration(o.connectTimeout, 'connectTimeout', DEFAULTS.connectTimeout), connection: true, common: true },
  { name: 'onReconnect', connection: true }
])

/** Defaults for load(), from the table. */
const DEFAULTS = Object.freeze(Object.fromEntries(OPTIONS.filter(e => e.default !== undefined).map(e => [e.name, e.default])))

const named = OPTIONS.filter(e => e.name !== null && !e.removed)
/** Every option name load() takes; a name not listed is refused (options.js checkKnownOptions). */
const LOAD_OPTIONS = Object.freeze(named.map(e => e.name))
/** The connection options: load() and bench() take them alike. */
const CONNECTION_OPTIONS = Object.freeze(named.filter(e => e.connection).map(e => e.name))
/** load() options bench() takes as well (with a file; window always). */
const BENCH_SHARED = Object.freeze(named.filter(e => e.bench).map(e => e.name))
/** The fields of the checked options a parse worker takes (functions and streams cannot cross). */
const WORKER_FIELDS = Object.freeze([...new Set(named.filter(e => e.worker).flatMap(e => e.worker === true ? [e.as || e.name] : e.worker))])
/** Removed options: name → what to use instead. */
const REMOVED = Object.freeze(Object.fromEntries(OPTIONS.filter(e => e.removed).map(e => [e.name, e.removed])))

/** The entry of a library option or of a flag's long name (`--batch-size`). */
function optionEntry (nameOrFlag) {
  return OPTIONS.find(e => e.name === nameOrFlag || (e.flag && e.flag.split(/[ ,]+/).includes(nameOrFlag)))
}

module.exports = { OPTIONS, DEFAULTS, LOAD_OPTIONS, CONNECTION_OPTIONS, BENCH_SHARED, WORKER_FIELDS, REMOVED, FORMATS, DRY_RUN, optionEntry }
