'use strict'

const { PipeloadError } = require('../errors')
const { TYPES } = require('./pages')
const { FORMAT_NAMES, FORMAT_TYPES, writerOf } = require('./formats')
const { positiveDuration, parseDuration, saidDurations, parseSize } = require('../run/option-values')

// exportKeys() options, checked once into a frozen plan (docs/library.md "exportKeys").

const EXPORT_DEFAULTS = Object.freeze({
  format: 'ndjson',
  // Keys read per round trip (2 commands each: PTTL and a page). Smaller batches keep the
  // server busy while the replies of the one before are written: 1M hashes of 5 fields in
  // 9.4-11.1 s at 250, 13.9-14.8 s at 1000 (window 4 and 8, 2 cores; measured with 3
  // commands a key).
  batchSize: 250,
  window: 4, // batches in flight per master
  pageSize: 1000, // elements per page of a big key (HSCAN/SSCAN/ZSCAN COUNT, LRANGE, XRANGE)
  scanCount: 1000, // SCAN's COUNT
  // Elements (fields and values, members, list items, stream entries) a batch is expected to
  // bring at most: fewer keys a batch when keys are big (lib/export/master.js perKey).
  maxElements: 100_000,
  progressInterval: 250
})

const CONNECTION = ['url', 'host', 'port', 'username', 'password', 'db', 'tls', 'sentinels', 'masterName', 'sentinelUsername', 'sentinelPassword', 'connectTimeout', 'retryTimeout', 'timeout']
// The options of the CSV and Parquet writers (lib/export/table.js, parquet.js): each the
// formats it is for. Their defaults are the writers' own.
const WRITER_OPTIONS = Object.freeze({
  fields: ['csv', 'parquet'],
  sample: ['csv', 'parquet'],
  maxRecordSize: ['csv', 'parquet'],
  rowGroupSize: ['parquet'],
  rowGroupBytes: ['parquet']
})
const KNOWN = new Set([...CONNECTION, ...Object.keys(WRITER_OPTIONS), 'output', 'format', 'match', 'types', 'batchSize', 'window', 'pageSize', 'scanCount', 'maxElements', 'onProgress', 'progressInterval', 'signal', 'checkpoint', 'resume'])

function invalid (option, message) {
  return new PipeloadError('PIPELOAD_OPTION_INVALID', `${option} ${message}`, { option })
}

function whole (o, name) {
  const v = o[name] ?? EXPORT_DEFAULTS[name]
  if (!Number.isSafeInteger(v) || v < 1) throw invalid(name, `must be a whole number ≥ 1, got ${JSON.stringify(o[name])}`)
  return v
}

/** `types`: an array or a comma-separated list of type names; undefined: every type. `name`: the option as given. */
function typesOf (types, name = 'types') {
  if (types === undefined || types === null) return undefined
  const list = typeof types === 'string' ? types.split(',').map(t => t.trim()).filter(Boolean) : types
  if (!Array.isArray(list) || list.length === 0) throw invalid(name, `must name one or more of ${TYPES.join(', ')}, got ${JSON.stringify(types)}`)
  for (const t of list) if (!TYPES.includes(t)) throw invalid(name, `must name types among ${TYPES.join(', ')}, got ${JSON.stringify(t)}`)
  return Object.freeze([...new Set(list)])
}

const PLURAL = { string: 'strings', hash: 'hashes', list: 'lists', set: 'sets', zset: 'zsets', stream: 'streams' }

/**
 * The types an export of `format` reads: `types` as given (checked), or, for a format that
 * holds only some types (CSV: hashes; Parquet: hashes and strings), those. A type the format
 * cannot hold is refused before anything is read. `name`: the option as given (--type).
 */
function formatTypes (format, types, name = 'types') {
  const held = FORMAT_TYPES[format]
  if (held === undefined) return types
  if (types === undefined) return held.types
  const other = types.filter(t => !held.types.includes(t))
  if (other.length === 0) return types
  const cli = name.startsWith('--')
  const asked = cli ? `${name} ${other.join(',')}` : `${name} ${JSON.stringify(other)}`
  const fits = cli ? `--type ${held.types.join(',')}, the default with --format ${format}` : `types ${JSON.stringify(held.types)}, the default with format '${format}'`
  throw new PipeloadError('PIPELOAD_OPTION_INVALID', `${asked}: ${held.label} holds ${held.hint} (${fits}): export ${other.map(t => PLURAL[t]).join(' and ')} to NDJSON, which writes every type`, { option: name })
}

/** `fields`: an array or a comma-separated list of field names. */
function fieldsOf (fields, name = 'fields') {
  const list = typeof fields === 'string' ? fields.split(',').map(f => f.trim()) : fields
  if (!Array.isArray(list) || list.length === 0 || list.some(f => typeof f !== 'string' || f === '')) {
    throw invalid(name, `must name one or more fields, e.g. ["name", "email"] (--fields name,email), got ${JSON.stringify(fields)}`)
  }
  return Object.freeze([...list])
}

/** The options for the format's writer: those given, checked, each refused with a format that has no use for it. */
function writerOptions (options, format) {
  const out = {}
  for (const [name, formats] of Object.entries(WRITER_OPTIONS)) {
    if (options[name] === undefined) continue
    if (!formats.includes(format)) throw invalid(name, `is an option of the ${formats.join(' and ')} format${formats.length > 1 ? 's' : ''}, and format is ${format}`)
    if (name === 'fields') out.fields = fieldsOf(options.fields)
    else if (name === 'sample' || name === 'rowGroupSize') out[name] = whole(options, name)
    else out[name] = parseSize(options[name], name)
  }
  // The writer's own checks (a field named as one of its columns, named twice), before any
  // connection is opened.
  writerOf(format).checkOptions?.(out)
  return Object.freeze(out)
}

function outputOf (output) {
  if (typeof output === 'string' && output !== '') return output
  if (output && typeof output.write === 'function' && typeof output.on === 'function') return output
  throw invalid('output', `must be a file path or a Writable stream, got ${output === undefined ? 'nothing' : typeof output}`)
}

/** The export's frozen plan from exportKeys() options. */
function planExport (options) {
  if (!options || typeof options !== 'object') throw invalid('options', 'must be an object')
  for (const k of Object.keys(options)) {
    if (!KNOWN.has(k)) throw new PipeloadError('PIPELOAD_OPTION_INVALID', `unknown option ${JSON.stringify(k)} of exportKeys()`, { option: k })
  }
  const format = options.format ?? EXPORT_DEFAULTS.format
  if (!FORMAT_NAMES.includes(format)) throw invalid('format', `must be one of ${FORMAT_NAMES.join(', ')}, got ${JSON.stringify(format)}`)
  if (options.match !== undefined && (typeof options.match !== 'string' || options.match === '')) throw invalid('match', `must be a glob pattern, got ${JSON.stringify(options.match)}`)
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw invalid('onProgress', 'must be a function')
  if (options.checkpoint !== undefined && (typeof options.checkpoint !== 'string' || options.checkpoint === '')) throw invalid('checkpoint', `must be a file path, got ${JSON.stringify(options.checkpoint)}`)
  if (options.resume !== undefined && typeof options.resume !== 'boolean') throw invalid('resume', `must be true or false, got ${JSON.stringify(options.resume)}`)
  if (options.resume && options.checkpoint === undefined) throw invalid('resume', 'needs checkpoint: the file to resume from')
  const connection = {}
  for (const k of CONNECTION) if (options[k] !== undefined) connection[k] = options[k]
  connection.connectTimeout = positiveDuration(options.connectTimeout, 'connectTimeout', 10000)
  // A lost connection: reconnect for this long (import's --retry-timeout), then exit 4.
  connection.retryTimeout = positiveDuration(options.retryTimeout, 'retryTimeout', 60000)
  // Nothing from a server this long while replies are due (a frozen one): that connection
  // counts as lost, and is connected again (import's --timeout; 0: never).
  connection.timeout = options.timeout === undefined || options.timeout === null ? 30000 : parseDuration(options.timeout, 'timeout')
  return Object.freeze({
    connection: Object.freeze({ ...connection, said: saidDurations(options, ['connectTimeout', 'retryTimeout', 'timeout']), signal: options.signal }),
    output: outputOf(options.output),
    format,
    match: options.match,
    types: formatTypes(format, typesOf(options.types)),
    writer: writerOptions(options, format),
    batchSize: whole(options, 'batchSize'),
    window: whole(options, 'window'),
    pageSize: whole(options, 'pageSize'),
    scanCount: whole(options, 'scanCount'),
    maxElements: whole(options, 'maxElements'),
    progressInterval: whole(options, 'progressInterval'),
    onProgress: options.onProgress,
    signal: options.signal,
    checkpoint: options.checkpoint,
    resume: options.resume === true
  })
}

module.exports = { planExport, typesOf, formatTypes, fieldsOf, EXPORT_DEFAULTS }
