'use strict'

const fs = require('node:fs')
const { Readable } = require('node:stream')
const { PipeloadError, where } = require('../errors')
const { openReader, detectFormat } = require('./reader')
const { isUrl, displayUrl, parseInputUrl } = require('./http-input')
const { isInputList, isPattern, expandInputs } = require('./inputs')
const { openShardReader } = require('./shard')
const { formatOf, FORMAT_NAMES, STREAM_FORMATS } = require('./formats')
// Parquet's reader (a dozen modules, and hyparquet's) is loaded by the first Parquet input
// or unnamed file, not by every run: each module loaded costs a CLI run ~1 ms of start-up.
const parquetInput = () => require('./parquet/input')

// load()'s `input` (a path, "-", a byte stream, or an iterable of records) in two steps:
// describeInput() says what it is without reading it (cheap, and the description of a file
// can cross into a worker thread); openRecords() then opens it as record batches plus what
// the mapper needs to know (the CSV header).

const ITERABLE_BATCH = 512

/**
 * @returns {{ kind: 'records', name, iterable } |
 *   { kind: 'bytes', name, format, path?, stream?, size? }}
 */
function describeInput (o) {
  const input = o.input
  if (isUrl(input)) return describeUrl(input, o)
  if (typeof input === 'string') return describeFile(input, o)
  // A byte stream; an object-mode stream too when a format is given (Readable.from(buffer) is
  // object-mode), so its Buffer/string chunks are parsed rather than taken as records.
  if (input instanceof Readable && (!input.readableObjectMode || o.format)) return describeStream(input, o.name || '<stream>', o)
  if (input && (typeof input[Symbol.asyncIterator] === 'function' || typeof input[Symbol.iterator] === 'function')) {
    return { kind: 'records', name: o.name || '<records>', iterable: input }
  }
  throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'input must be a file path, a pattern, "-", a URL, a list of these, a Readable or an iterable of records', { option: 'input' })
}

/**
 * load()'s input as the inputs it names, in load order: several for a list of strings or a
 * pattern matching several files, else one. `label`: the run's name for them all.
 */
function describeInputs (o) {
  const given = isInputList(o.input) ? o.input : typeof o.input === 'string' && isPattern(o.input) ? [o.input] : null
  if (given === null) return { label: null, inputs: [describeInput(o)] }
  const list = expandInputs(given)
  if (list.length === 1) return { label: null, inputs: [describeInput({ ...o, input: list[0] })] }
  // `name` names stdin only: files of one name could not be told apart.
  return { label: given.map(s => isUrl(s) ? displayUrl(s) : s).join(', '), inputs: list.map(input => describeInput({ ...o, input, name: input === '-' ? o.name : undefined })) }
}

function describeFile (path, o) {
  if (path === '-') return describeStream(process.stdin, o.name || '<stdin>', o)
  let size
  try {
    const st = fs.statSync(path)
    if (st.isDirectory()) throw new PipeloadError('PIPELOAD_INPUT_NOT_FOUND', `cannot read ${path}: it is a directory`, { file: path })
    size = st.isFile() ? st.size : undefined
  } catch (err) {
    if (err instanceof PipeloadError) throw err
    const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.message
    throw new PipeloadError('PIPELOAD_INPUT_NOT_FOUND', `cannot read ${path}: ${why}`, { file: path })
  }
  // A name that says nothing: a Parquet file is still known by its magic bytes (`PAR1` at both ends).
  const format = o.format || detectFormat(path) || (size !== undefined && parquetInput().isParquetFile(path) ? 'parquet' : null)
  if (!format) {
    throw new PipeloadError('PIPELOAD_FORMAT_UNKNOWN', `cannot tell the format of ${path} from its name: use --format ${FORMAT_NAMES.join('|')}`, { file: path })
  }
  if (format === 'parquet' && size === undefined) throw parquetUnseekable(o.name || path, 'a FIFO or a device')
  return { kind: 'bytes', name: o.name || path, format, path, size }
}

/** An http(s) URL: kind 'url'; openUrl() (./http-input.js) makes of it, once its response is in, a new description of kind 'bytes'. */
function describeUrl (input, o) {
  const { url } = parseInputUrl(input) // refuses a URL that does not parse or decode, before anything is sent
  let path = url.pathname
  try { path = decodeURIComponent(path) } catch {}
  // `url` as given: openUrl splits off its credentials again, at the last "@".
  return { kind: 'url', name: o.name || displayUrl(input), url: input, format: o.format || detectFormat(path) || undefined }
}

function describeStream (stream, name, o) {
  if (!o.format) {
    throw new PipeloadError('PIPELOAD_FORMAT_UNKNOWN', `the format of ${name} must be given: --format ${STREAM_FORMATS.join('|')}`, { file: name })
  }
  if (o.format === 'parquet') throw parquetUnseekable(name, name === '<stdin>' ? 'stdin' : 'a stream')
  return { kind: 'bytes', name, format: o.format, stream }
}

/** Parquet is read from its end (its footer): not from what cannot be sought. */
function parquetUnseekable (name, what) {
  return new PipeloadError('PIPELOAD_OPTION_INVALID',
    `${name}: Parquet cannot be read from ${what}: a Parquet file is read from its end (the footer holds the schema and where each column is), which a stream cannot seek to. Save it to a file, or give its http(s) URL (read by Range requests)`,
    { option: 'input', file: name })
}

/**
 * Open a described input as record batches. `start` (the reader's option of that name), or
 * else `desc.start`: its bytes begin at a record in the middle of the input (the parallel
 * parse's sequential fallback; a --resume of a URL by a Range request).
 * @returns {Promise<{ batches: AsyncIterable<{records, lines, bytesRead}>, shape: { columns?, file }, empty: boolean, resumeShape?: () => object }>}
 */
async function openRecords (desc, o, start = null, skip = 0) {
  if (desc.kind === 'records') {
    return { batches: iterableBatches(desc.iterable, desc.name), shape: { file: desc.name }, empty: false }
  }
  if (desc.format === 'parquet') {
    if (o.columns) throw new PipeloadError('PIPELOAD_OPTION_INVALID', `--columns (columns) names CSV/TSV columns; ${desc.name} is parquet, whose columns are named in the file`, { option: 'columns', file: desc.name })
    return parquetInput().openParquetRecords(desc, o, skip) // its first `skip` rows' row groups are not read
  }
  const options = {
    format: desc.format,
    header: o.header,
    fields: readerFields(o), // fields per record, known before the first
    delimiter: o.delimiter,
    relaxQuotes: o.relaxQuotes,
    jsonPath: o.jsonPath,
    maxRecordSize: o.maxRecordSize,
    onError: o.onError,
    raw: Boolean(o.rejects), // records' input text, for the rejects file
    rows: !o.map && !o.restore, // csv/ndjson records as byte ranges, copied straight into RESP by the mapper
    start: start ?? desc.start ?? null
  }
  // desc.shard (--shard): lib/read/shard.js's plan of this shard's share of the input.
  // `signal`: a read still waiting when the run is aborted ends (lib/read/abortable.js).
  const reader = desc.shard ? openShardReader(desc, options, o.signal) : openReader({ name: desc.name, path: desc.path, stream: desc.stream, size: desc.size, signal: o.signal }, options)
  const tabular = formatOf(desc.format).tabular
  if (o.columns && !tabular) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `--columns (columns) names CSV/TSV columns; ${desc.name} is ${desc.format}`, { option: 'columns', file: desc.name })
  }
  const header = tabular ? await reader.ready() : undefined
  const columns = tabular ? tableColumns(header, o, desc) : undefined
  return {
    batches: reader,
    // With a header expected but none read, the input is empty: nothing to map.
    empty: tabular && o.header && !header,
    // shard: record numbers over the whole input are not known ({$n}, map()'s ctx.n).
    shape: { ...(tabular ? { columns: columns || null } : {}), file: desc.name, ...(desc.shard ? { shard: desc.shard } : {}) },
    resumeShape: () => reader.resumeShape() // for a checkpoint's `next`
  }
}

/** Fields per record known before the first: those --columns names for a headerless file. */
function readerFields (o) {
  return o.columns && !o.header ? o.columns.length : null
}

/**
 * A CSV/TSV input's columns: its header (null without one), or --columns' names for a
 * headerless input or instead of the header's; checked for a name given twice, and a
 * one-column header for another delimiter inside it (./csv/header.js). `desc`: the input's
 * description (its name and format).
 */
function tableColumns (header, o, desc) {
  const name = desc.name
  if (header) require('./csv/header').checkOneColumn(header, o, desc.format, name)
  const columns = o.columns && (header || !o.header) ? renamed(header, o.columns, name) : header
  if (columns) checkHeader(columns, name)
  return columns
}

/** --columns: the names of a headerless input's columns, or new names for the header's (as many). */
function renamed (header, columns, name) {
  if (header && header.length !== columns.length) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID',
      `--columns (columns) names ${columns.length} columns, but the header of ${name} has ${header.length}: ${header.join(', ')}`,
      { option: 'columns', file: name })
  }
  return columns
}

/** Two columns of one name would silently overwrite each other's field in `*`. */
function checkHeader (columns, name) {
  const seen = new Set()
  for (const [i, c] of columns.entries()) {
    if (seen.has(c)) {
      throw new PipeloadError('PIPELOAD_INPUT_INVALID', `${name}:1: the header names column "${c}" twice (column ${i + 1}); rename one`, { file: name, line: 1 })
    }
    seen.add(c)
  }
}

/**
 * Records from a (async) iterable, grouped like a reader's batches; "line" is the record
 * number. When the iterable throws, the records taken from it still go out first; then
 * PIPELOAD_INPUT_FAILED names the record that could not be produced, the error as `cause`.
 */
async function * iterableBatches (iterable, name) {
  let records = []
  let lines = []
  let n = 0
  try {
    for await (const rec of iterable) {
      records.push(rec)
      lines.push(++n)
      if (records.length >= ITERABLE_BATCH) {
        yield { records, lines, bytesRead: 0 }
        records = []
        lines = []
      }
    }
  } catch (err) {
    if (records.length) yield { records, lines, bytesRead: 0 }
    throw iterableFailed(err, name, n + 1)
  }
  if (records.length) yield { records, lines, bytesRead: 0 }
}

function iterableFailed (err, name, record) {
  if (err instanceof PipeloadError) return err
  const why = err instanceof Error ? err.message : String(err)
  return new PipeloadError('PIPELOAD_INPUT_FAILED', `${where(name, record)}: the input failed before giving record ${record}: ${why}`,
    { file: name, line: record, cause: err })
}

module.exports = { describeInput, describeInputs, openRecords, readerFields, tableColumns }
