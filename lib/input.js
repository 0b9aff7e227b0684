'use strict'

const fs = require('node:fs')
const { Readable } = require('node:stream')
const { PipeloadError } = require('./errors')
const { openReader, detectFormat } = require('./readers')

// Turns load()'s `input` (a path, "-", a byte stream, or an iterable of records) into one
// shape: an async iterable of record batches plus what the mapper needs to know.

const ITERABLE_BATCH = 512

/**
 * @returns {Promise<{ name, size, batches: AsyncIterable, shape: { columns?, file } }>}
 */
async function openInput (o) {
  const input = o.input
  if (typeof input === 'string') return openFile(input, o)
  // A byte stream; an object-mode stream too when a format is given (Readable.from(buffer) is
  // object-mode), so its Buffer/string chunks are parsed rather than taken as records.
  if (input instanceof Readable && (!input.readableObjectMode || o.format)) return openStream(input, o.name || '<stream>', undefined, o)
  if (input && (typeof input[Symbol.asyncIterator] === 'function' || typeof input[Symbol.iterator] === 'function')) {
    const name = o.name || '<records>'
    return { name, size: undefined, batches: iterableBatches(input), shape: { file: name } }
  }
  throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'input must be a file path, "-", a Readable or an iterable of records', { option: 'input' })
}

function openFile (path, o) {
  if (path === '-') return openStream(process.stdin, o.name || '<stdin>', undefined, o)
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
  const format = o.format || detectFormat(path)
  if (!format) {
    throw new PipeloadError('PIPELOAD_FORMAT_UNKNOWN', `cannot tell the format of ${path} from its name: use --format csv|tsv|json|ndjson`, { file: path })
  }
  return readerInput({ name: o.name || path, path, size }, format, o)
}

function openStream (stream, name, size, o) {
  if (!o.format) {
    throw new PipeloadError('PIPELOAD_FORMAT_UNKNOWN', `the format of ${name} must be given: --format csv|tsv|json|ndjson`, { file: name })
  }
  return readerInput({ name, stream, size }, o.format, o)
}

async function readerInput (source, format, o) {
  const reader = openReader(source, {
    format,
    header: o.header,
    delimiter: o.delimiter,
    jsonPath: o.jsonPath,
    maxRecordSize: o.maxRecordSize
  })
  const tabular = format === 'csv' || format === 'tsv'
  const columns = tabular ? await reader.ready() : undefined
  if (tabular && columns) checkHeader(columns, source.name)
  return {
    name: source.name,
    size: source.size,
    format,
    batches: reader,
    // With a header expected but none read, the input is empty: nothing to map.
    empty: tabular && o.header && !columns,
    shape: tabular ? { columns: columns || null, file: source.name } : { file: source.name }
  }
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

/** Records from a (async) iterable, grouped like a reader's batches; "line" is the record number. */
async function * iterableBatches (iterable) {
  let records = []
  let lines = []
  let n = 0
  for await (const rec of iterable) {
    records.push(rec)
    lines.push(++n)
    if (records.length >= ITERABLE_BATCH) {
      yield { records, lines, bytesRead: 0 }
      records = []
      lines = []
    }
  }
  if (records.length) yield { records, lines, bytesRead: 0 }
}

module.exports = { openInput }
