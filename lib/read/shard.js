'use strict'

const fs = require('node:fs')
const { Readable } = require('node:stream')
const { PipeloadError } = require('../errors')
const { openReader } = require('./reader')
const { openBytes } = require('./source')
const { cutChunks, CsvScan, countLines, isQuoted, CHUNK_SIZE } = require('./cut')

// --shard i/n: which records of one input shard i loads. The n shards' shares are disjoint
// and together hold every record once, whatever machine computes them:
//
// - A plain file (seekable, not gzip) is split by byte ranges: shard i reads [b(i), b(i+1)),
//   b(i) the first record end at or after i·size/n (b(0) = 0, where the header is read;
//   b(n) = size). A CSV/TSV record ends at an LF outside quotes, which only a scan of the
//   quotes from the file's start can tell (as csv-parse reads them, faults included:
//   lib/read/cut.js CsvScan); that scan also counts the lines before b(i), so failures
//   name the file's real lines. NDJSON needs only the line count of the prefix.
// - What cannot be sought (stdin, a stream, gzip, a URL) is read whole by every shard, cut
//   into ~1 MiB chunks at record ends (lib/read/cut.js: the same cuts in every process), and
//   shard i parses the chunks numbered i, i + n, i + 2n, …
//
// - A Parquet file is shared by row groups: shard i reads one contiguous run of them
//   (lib/read/parquet/row-groups.js groupShare), its rows numbered as in the whole file.
//
// The plan is plain data, so it crosses into the encode worker with the input's description.

const SCAN_BLOCK = 1024 * 1024
const LF = 0x0a

function shardError (message) {
  return new PipeloadError('PIPELOAD_OPTION_INVALID', message, { option: 'shard' })
}

/**
 * The share of `desc` (lib/read/input.js describeInput) that shard { index, count } loads:
 *   { mode: 'range', index, count, range: { start, end }, start: null | { offset, line, columns, fields } }
 *   { mode: 'chunks', index, count, size }
 *   { mode: 'groups', index, count } (Parquet: its row groups, found once its footer is read)
 * `o`: load()'s options (header, columns, delimiter, maxRecordSize) for reading the header.
 */
async function shardOf (desc, shard, o) {
  const { index, count } = shard
  if (desc.kind === 'records') {
    throw shardError('shard splits a file, a byte stream or a URL; an iterable of records cannot be split: give each shard its own records')
  }
  if (desc.format === 'json') {
    throw shardError(`shard cannot split ${desc.name}: a JSON document can only be read from its beginning. Convert it to NDJSON (jq -c '.[]'), or load it without --shard`)
  }
  if (desc.format === 'parquet') return require('./parquet/input').parquetShare(shard) // loaded for Parquet only (input.js)
  if (desc.path == null || desc.size == null || await isGzip(desc.path)) return { mode: 'chunks', index, count, size: CHUNK_SIZE }
  const head = index === 0 || !isQuoted(desc.format) ? null : await headOf(desc, o)
  const dataStart = head ? head.dataStart : 0
  const fh = await fs.promises.open(desc.path, 'r')
  try {
    const scan = new FileScan(fh, desc.size, isQuoted(desc.format) ? new CsvScan(desc.format, o.delimiter, o.relaxQuotes) : null)
    const nominal = k => Math.max(Math.floor(k * desc.size / count), dataStart)
    const start = index === 0 ? 0 : await scan.boundaryAt(nominal(index), true)
    const line = scan.lines + 1
    const end = index + 1 === count ? desc.size : await scan.boundaryAt(nominal(index + 1), false)
    return {
      mode: 'range',
      index,
      count,
      range: { start, end },
      start: index === 0 ? null : { offset: start, line, columns: head ? head.columns : null, fields: head && !o.header ? head.fields : null }
    }
  } finally {
    await fh.close()
  }
}

async function isGzip (path) {
  const fh = await fs.promises.open(path, 'r')
  try {
    const { bytesRead, buffer } = await fh.read(Buffer.alloc(2), 0, 2, 0)
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b
  } finally {
    await fh.close()
  }
}

/** The reader options of load()'s options that decide how records are cut and counted. */
function headOptions (format, o) {
  return { format, header: o.header, delimiter: o.delimiter, relaxQuotes: o.relaxQuotes, maxRecordSize: o.maxRecordSize, fields: o.columns && !o.header ? o.columns.length : null, onError: 'skip' }
}

/**
 * What a CSV/TSV shard after the first must know of the file's start: the header, where the
 * first record after it starts, and (headerless) the first record's field count, which every
 * record must have. Read as a whole load reads them; a broken header fails every shard alike.
 */
async function headOf (desc, o) {
  const reader = openReader({ name: desc.name, path: desc.path }, headOptions(desc.format, o))
  const it = reader[Symbol.asyncIterator]()
  try {
    for (;;) {
      const r = await it.next()
      if (r.done) return { columns: reader.columns, dataStart: desc.size, fields: null }
      if (r.value.records.length) return { columns: reader.columns, dataStart: r.value.offsets[0], fields: fieldCount(r.value.records[0]) }
    }
  } finally {
    await it.return()
  }
}

/** The fields of a tabular record (a byte row made plain: read/row.js); null for a Rejected one: the next one sets it, as in a whole load. */
function fieldCount (record) {
  const plain = typeof record.toPlain === 'function' ? record.toPlain() : record
  return Array.isArray(plain) ? plain.length : null
}

/** A plain file read once from its start, for its record ends at given offsets. */
class FileScan {
  /** `csv`: a CsvScan for a CSV/TSV file, null for NDJSON (every LF ends a record). */
  constructor (fh, size, csv) {
    this.fh = fh
    this.size = size
    this.csv = csv
    this.buf = Buffer.allocUnsafe(SCAN_BLOCK)
    this.bufStart = 0
    this.bufLen = 0
    this.pos = 0 // bytes before pos are scanned
    this.lines = 0 // LFs before pos, while counted
  }

  /**
   * The first record end (just past an LF outside quotes) at or after `at` (the file's size
   * when there is none); with `count`, the lines before it are counted. Called with `at`
   * ascending: a boundary already passed that is at or after `at` is the answer again.
   */
  async boundaryAt (at, count) {
    const from = Math.max(at - 1, 0)
    if (this.pos > from) return this.pos
    await this.advance(from, count)
    for (;;) {
      if (!(await this.fill())) return (this.pos = this.size)
      const i = this.pos - this.bufStart
      const part = this.buf.subarray(0, this.bufLen)
      const lf = this.csv !== null ? this.csv.next(part, i, i) : part.indexOf(LF, i)
      const to = lf === -1 ? this.bufLen : lf + 1
      if (count) this.lines += countLines(this.buf, i, to)
      this.pos = this.bufStart + to
      if (lf !== -1) return this.pos
    }
  }

  /** Scan up to `to`: the quote state and, with `count`, the lines. NDJSON not counted: a seek. */
  async advance (to, count) {
    if (this.csv === null && !count) {
      this.pos = Math.max(this.pos, to)
      return
    }
    while (this.pos < to && await this.fill()) {
      const i = this.pos - this.bufStart
      const end = Math.min(this.bufLen, to - this.bufStart)
      if (this.csv !== null) this.csv.next(this.buf.subarray(0, end), i, Infinity)
      if (count) this.lines += countLines(this.buf, i, end)
      this.pos = this.bufStart + end
    }
  }

  /** Bytes at pos in the buffer; false at the end of the file. */
  async fill () {
    if (this.pos < this.bufStart + this.bufLen) return true
    const { bytesRead } = await this.fh.read(this.buf, 0, SCAN_BLOCK, this.pos)
    this.bufStart = this.pos
    this.bufLen = bytesRead
    return bytesRead > 0
  }
}

/**
 * The records of a shard in chunk mode, as a Reader gives them: ready() resolves with the
 * CSV header, iterating gives batches. Every shard reads the whole stream (inflating gzip,
 * dropping a BOM, as a whole load does), counts its lines, and parses chunk 0 as far as the
 * header and first record; it parses only its own chunks whole.
 */
class ChunkShard {
  constructor (source, options, plan) {
    this.source = source
    this.options = options
    this.plan = plan
    this.tabular = isQuoted(options.format)
    this.hasHeader = this.tabular && options.header !== false
    this.columns = null
    this.fields = null
    this.gen = null
    this.stash = null
  }

  async ready () {
    if (!this.hasHeader) return null
    if (this.gen === null) {
      this.gen = this.run()
      try {
        this.stash = await this.gen.next()
      } catch (err) {
        this.stash = { error: err }
      }
    }
    if (this.stash?.error) throw this.stash.error
    return this.columns
  }

  /** No checkpoint `next` shape: a shard resumes by skipping, never by a Range request. */
  resumeShape () {
    return null
  }

  async * [Symbol.asyncIterator] () {
    if (this.gen === null) this.gen = this.run()
    const stash = this.stash
    this.stash = null
    if (stash !== null) {
      if (stash.error) throw stash.error
      if (stash.done) return
      yield stash.value
    }
    yield * this.gen
  }

  async * run () {
    const { index, count, size } = this.plan
    const state = { bytesRead: 0, bomLength: 0, decompressed: 0 }
    let line = 1
    for await (const chunk of cutChunks(openBytes(this.source, state), { format: this.options.format, delimiter: this.options.delimiter, relaxQuotes: this.options.relaxQuotes, size })) {
      const start = { offset: state.bomLength + chunk.offset, line, columns: this.columns, fields: this.options.fields ?? this.fields }
      const mine = chunk.index % count === index
      if (chunk.index === 0 && this.tabular) {
        // Another shard's chunk 0 is read for the header and the first record's field count
        // only: its bad records are that shard's to report, not this one's.
        const options = mine ? this.options : { ...this.options, onError: 'skip', raw: false }
        for await (const b of this.read(chunk.buf, start, state, options)) {
          if (!this.hasHeader && this.fields === null && b.records.length) this.fields = fieldCount(b.records[0])
          if (!mine) break
          yield b
        }
      } else if (mine) {
        yield * this.read(chunk.buf, start, state, this.options)
      }
      line += countLines(chunk.buf)
    }
  }

  /** One chunk's batches, positions in the whole input; bytesRead: the source's so far. */
  async * read (buf, start, state, options) {
    const reader = openReader({ name: this.source.name, stream: Readable.from([buf]) }, { ...options, start })
    if (start.columns === null && this.hasHeader) this.columns = await reader.ready()
    for await (const batch of reader) {
      batch.bytesRead = state.bytesRead
      yield batch
    }
  }
}

/** The reader of one shard of a described input (desc.shard: shardOf's plan). */
function openShardReader (desc, options, signal = null) {
  const plan = desc.shard
  const source = { name: desc.name, path: desc.path, stream: desc.stream, signal }
  if (plan.mode === 'chunks') return new ChunkShard(source, options, plan)
  return openReader({ ...source, range: plan.range }, { ...options, start: plan.start })
}

module.exports = { shardOf, openShardReader, FileScan }
