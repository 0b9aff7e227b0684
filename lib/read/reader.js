'use strict'

const { PipeloadError } = require('../errors')
const { openBytes } = require('./source')
const { BatchSink, Rejected } = require('./sink')
const { Utf8Check, BadOffsets } = require('./utf8')
const { pieces } = require('./copy')
const { STREAM_FORMATS } = require('./formats')
const { SNIFF, binaryKind, notTextError } = require('./magic')

// Bytes a core is given at a time: a file read's size (lib/read/source.js).
const PIECE = 256 * 1024

const FORMATS = STREAM_FORMATS // the formats read as a byte stream (formats.js)

const DEFAULTS = Object.freeze({
  header: true,
  jsonPath: null,
  fields: null, // headerless csv/tsv: fields per record (--columns), else the first record's count
  maxRecordSize: 64 * 1024 * 1024,
  batchRecords: 512,
  onError: 'abort', // 'skip': a malformed record becomes a Rejected in its batch, reading goes on
  raw: false, // batches carry each record's input text (`raws`), for a rejects file
  relaxQuotes: false, // csv/tsv: a quote inside an unquoted field (or after a closing one) is data, as csv-parse's relax_quotes reads it
  rows: false, // csv/tsv records may be CsvRows and ndjson ones JsonRows (byte ranges), for the mapper
  // Reading from the middle of an input: { offset, line, columns?, fields? } = the first byte's
  // absolute offset (decompressed, BOM included) and line, the header read before (csv/tsv)
  // and the fields per record. The bytes are then plain: no gzip header or BOM is looked for.
  start: null
})

const EXTENSIONS = Object.freeze({
  csv: 'csv',
  tsv: 'tsv',
  json: 'json',
  ndjson: 'ndjson',
  jsonl: 'ndjson',
  parquet: 'parquet',
  pq: 'parquet'
})

/**
 * The format a file name implies, from its extension (a trailing `.gz` is ignored),
 * or null when it implies none.
 * @param {string} name
 * @returns {'csv'|'tsv'|'json'|'ndjson'|'parquet'|null}
 */
function detectFormat (name) {
  const match = /\.([a-z0-9]+)(?:\.gz)?$/i.exec(String(name))
  return match === null ? null : EXTENSIONS[match[1].toLowerCase()] ?? null
}

/**
 * The spellings people paste from JSONPath: `$.data.items`, `data.items[*]`, `$.data.items[*]`
 * are `data.items`; `$` and `$[*]` the top level (null).
 */
function jsonPathOf (text) {
  let p = text.trim()
  if (p.startsWith('$')) {
    p = p.slice(1)
    if (p.startsWith('.')) p = p.slice(1)
    else if (p !== '' && !p.startsWith('[*]')) return '' // `$x`: refused
  }
  if (p.endsWith('[*]')) p = p.slice(0, -3)
  if (p === '') return text.trim().startsWith('$') ? null : ''
  return p
}

function optionError (message) {
  return new PipeloadError('PIPELOAD_OPTION_INVALID', message)
}

function positiveInteger (name, value) {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw optionError(`${name}: expected a positive integer, got ${JSON.stringify(value)}`)
  }
  return value
}

/** Validates and completes reader options once. */
function normalizeOptions (options) {
  const o = { ...DEFAULTS }
  for (const key of Object.keys(options || {})) {
    if (options[key] != null) o[key] = options[key] // undefined or null: the default
  }
  if (!FORMATS.includes(o.format)) {
    throw new PipeloadError('PIPELOAD_FORMAT_UNKNOWN',
      `format: expected one of ${FORMATS.join(', ')}, got ${JSON.stringify(o.format)}`)
  }
  if (typeof o.header !== 'boolean') {
    throw optionError(`header: expected a boolean, got ${JSON.stringify(o.header)}`)
  }
  if (o.delimiter === undefined || o.delimiter === null) {
    o.delimiter = o.format === 'tsv' ? '\t' : ','
  } else if (typeof o.delimiter !== 'string' || o.delimiter === '' || /[\r\n"]/.test(o.delimiter)) {
    throw optionError(`delimiter: expected a non-empty string without quotes or line breaks, got ${JSON.stringify(o.delimiter)}`)
  }
  if (o.jsonPath !== null) {
    const path = typeof o.jsonPath === 'string' ? jsonPathOf(o.jsonPath) : ''
    if (path !== null && path.split('.').includes('')) {
      throw optionError(`jsonPath: expected dot-separated keys like "data.items" (or "$.data.items", "data.items[*]"; "$" for the top level), got ${JSON.stringify(o.jsonPath)}`)
    }
    o.jsonPathText = o.jsonPath
    o.jsonPath = path
  }
  if (o.onError !== 'abort' && o.onError !== 'skip') {
    throw optionError(`onError: expected "abort" or "skip", got ${JSON.stringify(o.onError)}`)
  }
  if (o.fields !== null && o.fields !== undefined) positiveInteger('fields', o.fields)
  if (o.start !== null) o.start = startState(o.start, o.format)
  o.raw = Boolean(o.raw)
  o.relaxQuotes = Boolean(o.relaxQuotes)
  o.rows = Boolean(o.rows)
  positiveInteger('maxRecordSize', o.maxRecordSize)
  positiveInteger('batchRecords', o.batchRecords)
  return o
}

/** The `start` option, checked: a JSON document cannot be read from its middle. */
function startState (start, format) {
  if (format === 'json') throw optionError('start: a JSON document can only be read from its beginning')
  if (typeof start !== 'object' || !Number.isSafeInteger(start.offset) || start.offset < 0 || !Number.isSafeInteger(start.line) || start.line < 1) {
    throw optionError(`start: expected { offset ≥ 0, line ≥ 1 }, got ${JSON.stringify(start)}`)
  }
  if (start.columns != null && !Array.isArray(start.columns)) throw optionError('start.columns: expected an array of column names')
  if (start.fields != null) positiveInteger('start.fields', start.fields)
  return { offset: start.offset, line: start.line, columns: start.columns ?? null, fields: start.fields ?? null }
}

function checkSource (source) {
  if (source === null || typeof source !== 'object') {
    throw optionError(`source: expected { name, path } or { name, stream }, got ${typeof source}`)
  }
  if (typeof source.name !== 'string') {
    throw optionError(`source.name: expected a string, got ${JSON.stringify(source.name)}`)
  }
  const hasPath = source.path != null
  const hasStream = source.stream != null
  if (hasPath === hasStream) {
    throw optionError(`source ${source.name}: expected exactly one of path and stream`)
  }
  if (hasPath && typeof source.path !== 'string') {
    throw optionError(`source.path: expected a string, got ${JSON.stringify(source.path)}`)
  }
  if (hasStream && typeof source.stream[Symbol.asyncIterator] !== 'function') {
    throw optionError(`source.stream of ${source.name}: expected a Readable stream of bytes`)
  }
}

function createCore (o, file, base, bad) {
  const common = { file, maxRecordSize: o.maxRecordSize, base, skip: o.onError === 'skip', raw: o.raw, bad, relaxQuotes: o.relaxQuotes }
  const st = o.start
  // Mid-input: the line, the header already read, the fields per record expected.
  const resume = st ? { columns: st.columns, line: st.line, expected: st.fields ?? (st.columns ? st.columns.length : -1) } : null
  // Each format's core is loaded by its first input (a CLI run or a parse worker loads one).
  switch (o.format) {
    case 'csv':
    case 'tsv': {
      const { FastCsvCore, fastDelimiter } = require('./csv/fast')
      const { CsvCore } = require('./csv/core')
      if (o.rows && fastDelimiter(o.delimiter) !== -1) return new FastCsvCore({ ...common, delimiter: o.delimiter, header: o.header, fields: o.fields, resume })
      return new CsvCore({ ...common, delimiter: o.delimiter, header: o.header, fields: o.fields, resume })
    }
    case 'json': {
      const { JsonArrayCore } = require('./json/array')
      return new JsonArrayCore({ ...common, jsonPath: o.jsonPath, jsonPathText: o.jsonPathText })
    }
    default: {
      const { NdjsonCore } = require('./json/ndjson')
      return new NdjsonCore({ ...common, rows: o.rows, line: st ? st.line : 1 })
    }
  }
}

/**
 * An async iterable of batches `{ records, lines, offsets, bytesRead, raws? }` read from one
 * source. Iterate it once. csv/tsv records are string arrays; json/ndjson records are the
 * parsed values. `columns` holds the CSV header once known (see ready()).
 *
 * Malformed input throws a PipeloadError (`file:line: reason`, with `file`, `line`,
 * `offset` and, where known, `raw`: the record's text). With `onError: 'skip'`, a record
 * that can be told apart from the next one (a bad CSV row, NDJSON line or JSON array
 * element) is instead yielded in its place as a `Rejected` { code, message, raw }, and
 * reading goes on; a broken structure (truncated gzip or JSON, a quote left open) still
 * throws. `raw: true` adds `raws`, each record's input text. `rows: true` lets well-formed
 * csv/tsv records come as CsvRows and flat ndjson objects as JsonRows: byte ranges of the
 * input, with toArray()/toObject() for the plain value.
 */
class Reader {
  constructor (source, options) {
    checkSource(source)
    this.source = source
    this.options = normalizeOptions(options)
    this.columns = null
    this._state = { bytesRead: 0, bomLength: 0, decompressed: 0, gzip: false }
    this._core = null
    this._hasHeader = this.options.header && (this.options.format === 'csv' || this.options.format === 'tsv')
    this._batches = null // the generator, once started
    this._stash = null // a first batch pulled by ready() before iteration
    this._iterated = false
    this._header = null
    if (this._hasHeader) {
      let resolve, reject
      const promise = new Promise((res, rej) => { resolve = res; reject = rej })
      promise.catch(() => {}) // the error is also thrown by the iterator
      this._header = { promise, resolve, reject }
    }
  }

  /** Raw bytes consumed from the source so far (compressed bytes for gzip). */
  get bytesRead () {
    return this._state.bytesRead
  }

  /**
   * Resolves with the header row of a csv/tsv source (reading up to the first batch if
   * iteration has not started), or null for json, ndjson and headerless input.
   * @returns {Promise<string[]|null>}
   */
  async ready () {
    if (!this._hasHeader) return null
    if (this._batches === null) {
      this._batches = this._run()
      try {
        this._stash = await this._batches.next()
      } catch (err) {
        this._stash = { error: err }
      }
    }
    return this._header.promise
  }

  /**
   * What another reader needs, with the `start` option at a record's offset and line, to
   * read on from there as this one would: the header read and the fields per record
   * (csv/tsv), and whether the bytes were gzip (offsets are then not the source's: such a
   * source can only be read again from its start).
   * @returns {{ gzip: boolean, columns: string[]|null, fields: number|null }}
   */
  resumeShape () {
    const core = this._core
    return { gzip: this._state.gzip, columns: this.columns, fields: core && core.fieldsPerRecord ? core.fieldsPerRecord() : null }
  }

  [Symbol.asyncIterator] () {
    if (this._iterated) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `reader of ${this.source.name} is already being iterated`)
    }
    this._iterated = true
    return this._iterate()
  }

  async * _iterate () {
    if (this._batches === null) this._batches = this._run()
    const stash = this._stash
    this._stash = null
    if (stash !== null) {
      if (stash.error) throw stash.error
      if (stash.done) return
      yield stash.value
    }
    yield * this._batches
  }

  async * _run () {
    const o = this.options
    const state = this._state
    const file = this.source.name
    const sink = new BatchSink(o.batchRecords, o.raw)
    const utf8 = new Utf8Check()
    const bad = new BadOffsets()
    let at = 0 // absolute offset of the next chunk (decompressed bytes, BOM included)
    let core = null
    let yieldedBytes = -1
    let failure = null
    // The input's first bytes, until SNIFF are known (null once looked at, or mid-input).
    let head = o.start === null || o.start.offset === 0 ? Buffer.alloc(0) : null
    try {
      const startAt = o.start ? o.start.offset : 0
      for await (const bytes of openBytes(this.source, state, o.start !== null)) {
        if (core === null) {
          at = startAt + state.bomLength
          core = this._core = createCore(o, file, at, bad)
        }
        // A core parses all it is given before its records are taken: a piece bounds the
        // records held at once, whatever the size of what the source gives (a parallel
        // parse's chunk may be maxRecordSize long: given whole, a 66 MB one held every
        // record, 627 MB of RSS).
        for (const chunk of pieces(bytes, PIECE)) {
          if (head !== null) head = this.sniff(head, chunk)
          bad.add(utf8.check(chunk, at))
          at += chunk.length
          try {
            core.write(chunk, sink)
          } catch (err) {
            failure = err
          }
          if (this._hasHeader && core.columns !== null && this.columns === null) this.setColumns(core.columns)
          // Records before a bad one still go out first.
          for (const batch of sink.take()) {
            batch.bytesRead = yieldedBytes = state.bytesRead
            yield batch
          }
          if (failure !== null) throw failure
        }
      }
      if (core === null) core = this._core = createCore(o, file, startAt + state.bomLength, bad)
      if (head !== null) this.sniff(head, null)
      bad.add(utf8.end())
      try {
        core.end(sink)
      } catch (err) {
        failure = err
      }
      if (this._hasHeader && core.columns !== null && this.columns === null) this.setColumns(core.columns)
      const last = sink.take()
      // A last, possibly empty, batch so that bytesRead reaches the source size.
      if (last.length === 0 && failure === null && state.bytesRead > 0 && yieldedBytes !== state.bytesRead) {
        last.push({ records: [], lines: [], offsets: [] })
      }
      // No header at all (blank lines only): ready() learns it before the last batch is
      // taken, or it would wait for a generator suspended at that batch's yield.
      if (failure === null && this._header !== null) this._header.resolve(this.columns)
      for (const batch of last) {
        batch.bytesRead = state.bytesRead
        yield batch
      }
      if (failure !== null) throw failure
    } catch (err) {
      if (this._header !== null) this._header.reject(err)
      // The source failed (not a record, not a binary file): records a core held back go out
      // first (a JSON document's first bytes, ./json/hints.js), as records before a bad one do.
      if (failure === null && core !== null && core.inputFailed && err.binary === undefined) {
        core.inputFailed(sink)
        for (const batch of sink.take()) {
          batch.bytesRead = state.bytesRead
          yield batch
        }
      }
      throw err
    }
  }

  /**
   * `head` (the input's first bytes so far) and `chunk` (the next; null at the end of the
   * input): refused when they are a binary file's (./magic.js), else the bytes kept to look
   * at with the next chunk, or null once enough were seen. No record can end before them:
   * no magic holds a line end.
   */
  sniff (head, chunk) {
    const bytes = chunk === null ? head : head.length === 0 ? chunk.subarray(0, SNIFF) : Buffer.concat([head, chunk.subarray(0, SNIFF - head.length)])
    if (bytes.length < SNIFF && chunk !== null) return Buffer.from(bytes)
    const kind = binaryKind(bytes)
    if (kind !== null) throw notTextError(kind, { file: this.source.name, format: this.options.format, gzip: this._state.gzip })
    return null
  }

  setColumns (columns) {
    this.columns = columns
    this._header.resolve(columns)
  }
}

/**
 * Opens a reader over a file or a byte stream.
 * @param {{ name: string, path?: string, stream?: import('node:stream').Readable, size?: number }} source
 * @param {{ format: 'csv'|'tsv'|'json'|'ndjson', header?: boolean, delimiter?: string,
 *   jsonPath?: string, maxRecordSize?: number, batchRecords?: number }} options
 * @returns {Reader}
 */
function openReader (source, options) {
  return new Reader(source, options)
}

module.exports = { openReader, detectFormat, normalizeOptions, Reader, Rejected, DEFAULTS, FORMATS }
