'use strict'

const { PipeloadError } = require('../../errors')
const { nodeValue, setField, utf8Text, ROW_GROUP } = require('./values')
const { checkSchema, readableMetadata } = require('./schema')
const { fileBuffer } = require('./file-buffer')
const { pageCodecs, prepareCodecs } = require('./codecs')
const { KEY_ORDER } = require('../row')
const { SNIFF, binaryKind, notParquetError } = require('../magic')
const { readFlatColumn, isFlat, FlatColumn } = require('./flat')
const { readTextColumn, textRows } = require('./text')
const { RowShape } = require('./row')

// Parquet input, by row groups. The interface, for resume, shards and workers:
//
//   const pf = await ParquetFile.open({ name, buffer })   // buffer: an AsyncBuffer (file-buffer.js:
//                                                           // fileBuffer(path), http.js: urlBuffer(url))
//   pf.columns          top-level column names, schema order
//   pf.rowGroups        [{ index, rows, firstRow, bytesEnd }]: firstRow 0-based over the file, bytesEnd
//                       where its column chunks end in the file
//   pf.rows             rows in the file
//   pf.projection(used) the top-level columns a run reads, from the templates' fields (templateFields
//                       in encode/template.js; null = every column); throws PIPELOAD_TEMPLATE_INVALID
//                       for a field that is no column
//   await pf.readGroup(g, columns)  -> { rows, columns, values: one per column, an array of record values
//                       or a flat column's FlatColumn (flat.js), taken in row order by records() }
//   pf.records(g, read, start, end) -> record objects of rows [start, end) of readGroup(g)'s result, called
//                       with consecutive ranges from row 0
//   pf.batches(columns, { fromGroup, toGroup, batchRecords }) -> async iterable of reader batches
//                       { records, lines, offsets: null, bytesRead }: lines = 1-based row numbers over
//                       the file; bytesRead = how far through the file that is (position(g, row), not
//                       the bytes fetched: unused columns are never read); a batch never spans two row
//                       groups; each record carries its row group under ROW_GROUP (a symbol: no field),
//                       for failures
//   await pf.close()    closes the file (a URL: nothing to close)
//
// Only the projected columns' chunks are fetched and decompressed (hyparquet reads by byte ranges).
// A row group is the unit: it is read whole (its projected columns), converted column by column
// (values.js), then cut into records.

const DEFAULT_BATCH = 512
// Text rows (text.js) come in batches of 1,024: a few arrays per column each, no JS
// value per row (callgrind, the 300k-row flights dry run: 4.31 G instructions at 512 rows,
// 4.34 G at 1,024, 4.44 G at 2,048, 4.59 G at 4,096; 4.31 G at 1,024 with a turn of the event
// loop every 8 batches, not 4).
const TEXT_BATCH = 1024

// Reader batches between two turns of the event loop (batches()): 8 × 1,024 text rows, 8 × 512 records.
const YIELD_EVERY = 8

// The bytes read from the end first, for the footer (hyparquet reads again when it is longer):
// its default, 512 KiB, is most of a small file, and one slow request over HTTP.
const FOOTER_FETCH = 64 * 1024

/** hyparquet, loaded when a Parquet input is first opened (not at start-up); its codecs: codecs.js. */
let hyparquet = null
function lib () {
  if (hyparquet === null) hyparquet = require('hyparquet')
  return hyparquet
}

// hyparquet's parsers, as the identity: INT96 arrives as nanoseconds since the epoch (the only
// leaf it still converts once annotations are stripped), turned into text in values.js.
const RAW_PARSERS = Object.freeze({
  timestampFromMilliseconds: v => v,
  timestampFromMicroseconds: v => v,
  timestampFromNanoseconds: v => v,
  dateFromDays: v => v,
  stringFromBytes: v => v == null ? v : utf8Text(v), // not UTF-8: refused
  jsonFromBytes: v => v,
  geometryFromBytes: v => v,
  geographyFromBytes: v => v,
  uuidFromBytes: v => v
})

const EMPTY = Buffer.alloc(0)

/** A name as a RESP bulk string. */
function bulkOf (name) {
  return Buffer.from(`$${Buffer.byteLength(name)}\r\n${name}\r\n`)
}

/** A footer that cannot be read, or whose schema is no tree, as the error that names the file. */
function footerError (name, err) {
  if (err instanceof PipeloadError) return err
  return new PipeloadError('PIPELOAD_INPUT_INVALID', `${name}: cannot read the Parquet footer (a Parquet file is read from its end): ${reasonOf(err)}`, { file: name, cause: err })
}

/** A footer not found in gzip or a zip archive: what the file is (lib/read/magic.js), or null. */
async function notParquet (name, buffer) {
  let head
  try {
    head = Buffer.from(await buffer.slice(0, Math.min(SNIFF, buffer.byteLength)))
  } catch {
    return null // the footer's own error says what failed
  }
  return notParquetError(binaryKind(head), name)
}

function reasonOf (err) {
  const msg = err && err.message ? err.message : String(err)
  return msg.replace(/^parquet /, '')
}

class ParquetFile {
  constructor (name, buffer, metadata) {
    const { parquetSchema } = lib()
    this.name = name
    this.buffer = buffer
    this.metadata = metadata
    this.readable = readableMetadata(metadata)
    this.tree = parquetSchema(metadata)
    this.columns = this.tree.children.map(c => c.element.name)
    this.nodes = new Map(this.tree.children.map(c => [c.element.name, c]))
    let first = 0
    let bytesEnd = 4 // after the magic bytes
    this.rowGroups = metadata.row_groups.map((g, index) => {
      const rows = Number(g.num_rows)
      bytesEnd = Math.max(bytesEnd, ...g.columns.map(chunkEnd))
      const group = { index, rows, firstRow: first, bytesEnd }
      first += rows
      return group
    })
    this.rows = first
    this.values = new Map() // column -> its converter, made once
  }

  /**
   * Opens a file's footer: its schema and row groups. `buffer` is an AsyncBuffer
   * ({ byteLength, slice(start, end) -> Promise<ArrayBuffer> }).
   * @returns {Promise<ParquetFile>}
   */
  static async open ({ name, buffer }) {
    const { parquetMetadataAsync } = lib()
    let metadata
    try {
      if (buffer.byteLength < 12) throw new Error(`it is ${buffer.byteLength} bytes long, shorter than any Parquet file`)
      // geoparquet: false: its marking of GeoParquet columns (whose bytes are sent as they are
      // anyway) walks the schema before it is checked, and a negative number of children
      // looped it forever.
      metadata = await parquetMetadataAsync(buffer, { initialFetchSize: FOOTER_FETCH, geoparquet: false })
    } catch (err) {
      throw (await notParquet(name, buffer)) ?? footerError(name, err)
    }
    return ParquetFile.of(name, buffer, metadata)
  }

  /**
   * A file whose footer was read already (`metadata`: a parse worker's, from the loader), its
   * codecs made ready. A schema that is no tree, or nested too deep, is the footer's error.
   */
  static async of (name, buffer, metadata) {
    let pf
    try {
      checkSchema(metadata.schema)
      pf = new ParquetFile(name, buffer, metadata)
    } catch (err) {
      throw footerError(name, err)
    }
    await prepareCodecs(metadata)
    return pf
  }

  /**
   * The top-level columns that the templates' fields (encode/template.js templateFields) read,
   * in schema order; every column for `used` null or `used.all`. A field that is no column
   * (nor a field of a struct column) is PIPELOAD_TEMPLATE_INVALID, before anything is read.
   */
  projection (used) {
    if (!used || used.all) return this.columns.slice()
    const wanted = new Set()
    for (const f of used.fields) {
      const col = (!f.forced && this.resolve(f.name)) || (f.alt && f.alt.kind !== 'meta' ? this.resolve(f.alt.name) : null)
      if (col) wanted.add(col)
      else if (!f.optional) throw this.notAColumn(f)
    }
    return this.columns.filter(c => wanted.has(c))
  }

  /** The top-level column a field name reads: the column of that name, or the first part of a.b.c through struct fields. */
  resolve (name) {
    if (this.nodes.has(name)) return name
    const path = name.split('.')
    let node = this.nodes.get(path[0])
    if (!node) return null
    for (let i = 1; i < path.length; i++) {
      if (!isStruct(node)) return isLeaf(node) ? null : path[0] // a list or map: its elements are the record's to walk
      node = node.children.find(c => c.element.name === path[i])
      if (!node) return null
    }
    return path[0]
  }

  notAColumn (f) {
    const name = f.alt && f.alt.kind !== 'meta' && !this.resolve(f.name) ? f.alt.name : f.name
    const top = this.nodes.get(name.split('.')[0])
    const known = top && isStruct(top) && name.includes('.')
      ? `the fields of ${top.element.name} are: ${top.children.map(c => c.element.name).join(', ')}`
      : `columns are: ${this.columns.join(', ')}`
    return new PipeloadError('PIPELOAD_TEMPLATE_INVALID',
      `template "${f.template}" uses {${name}}, which is not a column of ${this.name} (${known})`,
      { template: f.template, field: name, file: this.name })
  }

  valueOf (column) {
    let v = this.values.get(column)
    if (v === undefined) {
      v = nodeValue(this.nodes.get(column))
      this.values.set(column, v)
    }
    return v
  }

  /**
   * Row group `g`'s `columns` (top-level names), read, decompressed and converted. One column
   * at a time, each converted from hyparquet's pages straight into its one array: at most one
   * column's stored values are held beside the converted ones (all read at once and joined,
   * then converted, a 3M-row file's load peaked ~60 MB higher, over the issue's 250 MB).
   * @returns {Promise<{ rows: number, columns: string[], values: any[][] }>}
   */
  async readGroup (g, columns) {
    const group = this.rowGroups[g]
    const values = []
    for (const c of columns) {
      const node = this.nodes.get(c)
      if (isFlat(node)) {
        try {
          values.push(await this.readFlat(group, c, node))
        } catch (err) {
          throw this.groupError(group, c, err)
        }
        continue
      }
      try {
        values.push(convertParts(await this.readParts(group, c), group.rows, this.valueOf(c)))
      } catch (err) {
        throw this.groupError(group, c, err)
      }
    }
    return { rows: group.rows, columns, values }
  }

  /** A flat column (flat.js) of a row group, converted: its pages assembled without hyparquet's list assembly. */
  async readFlat (group, column, node) {
    if (group.rows === 0) return new FlatColumn([], 0)
    return readFlatColumn(this.chunkOf(group, column, node))
  }

  /** What flat.js readPages reads of a flat column's chunk in a row group. */
  chunkOf (group, column, node) {
    const chunk = this.readable.row_groups[group.index].columns.find(ch => ch.meta_data && ch.meta_data.path_in_schema.length === 1 && ch.meta_data.path_in_schema[0] === column)
    if (chunk === undefined) throw new Error('the row group has no chunk of this column')
    if (chunk.file_path) throw new Error('parquet file_path not supported')
    const element = this.readable.schema[this.metadata.schema.indexOf(node.element)]
    return { buffer: this.buffer, meta: chunk.meta_data, schemaRoot: this.tree, node, element, rows: group.rows, value: this.valueOf(column), compressors: pageCodecs(), parsers: RAW_PARSERS }
  }

  /**
   * Can rows of `columns` be read as text (text.js) for these templates' fields
   * (templateFields; null: a map function, which takes records)? When every column is a flat
   * leaf and every field is one column by name (no {$…}, spread or vector, no a.b path): then
   * the mapper writes them from the rows' bytes and never makes a record of them (but for a
   * failed record, written to the rejects file).
   */
  readsAsText (columns, used) {
    if (!used || !columns.every(c => isFlat(this.nodes.get(c)))) return false
    return used.fields.every(f => !f.alt && !f.name.includes('.') && this.nodes.has(f.name))
  }

  /**
   * Row group `g`'s `columns` (flat ones) read as TextColumns, for textRows; `names`: each
   * value with its column name's bulk string before it (text.js), for `*`.
   */
  async readTextGroup (g, columns, names) {
    const group = this.rowGroups[g]
    const texts = []
    for (const c of columns) {
      try {
        texts.push(group.rows === 0 ? null : await readTextColumn(this.chunkOf(group, c, this.nodes.get(c)), names ? bulkOf(c) : EMPTY))
      } catch (err) {
        throw this.groupError(group, c, err)
      }
    }
    return { rows: group.rows, columns, texts }
  }

  /** One column's stored values in a row group: hyparquet's chunks (a page or more each). */
  async readParts (group, column) {
    const { parquetRead } = lib()
    const parts = []
    if (group.rows === 0) return parts
    await parquetRead({
      file: this.buffer,
      metadata: this.readable,
      columns: [column],
      rowStart: group.firstRow,
      rowEnd: group.firstRow + group.rows,
      compressors: pageCodecs(),
      utf8: false,
      parsers: RAW_PARSERS,
      onChunk: ({ columnData, rowStart }) => parts.push({ rowStart, columnData })
    })
    return parts
  }

  /** A row group's column that could not be read, as the error that names them. */
  groupError (group, column, err) {
    if (err instanceof PipeloadError) return err
    const rows = `rows ${group.firstRow + 1}-${group.firstRow + group.rows}`
    return new PipeloadError('PIPELOAD_INPUT_INVALID',
      `${this.name}: row group ${group.index} (${rows}), column "${column}": cannot be read: ${reasonOf(err)}`,
      { file: this.name, line: group.firstRow + 1, rowGroup: group.index, column, cause: err })
  }

  /**
   * Rows [start, end) of a read row group as record objects: column -> value, null for null.
   * What every record of the group shares is on their prototype, not on each: the row group
   * (ROW_GROUP, for failures) and the columns in schema order (KEY_ORDER, which `*` follows:
   * Object.keys would put a column named like an integer, "2024", first; it also costs an
   * array per record).
   */
  records (g, group, start, end) {
    const { columns, values } = group
    if (group.proto === undefined) group.proto = { [ROW_GROUP]: g, [KEY_ORDER]: columns }
    const proto = group.proto
    const n = columns.length
    // A flat column is taken in row order (flat.js): its rows [start, end) into a
    // scratch array, reused from batch to batch; other columns are arrays of the group's rows.
    if (group.scratch === undefined) group.scratch = values.map(v => v instanceof FlatColumn ? [] : null)
    const from = new Array(n)
    const at = new Array(n)
    for (let c = 0; c < n; c++) {
      const v = values[c]
      if (v instanceof FlatColumn) {
        if (v.taken !== start) throw new Error(`internal: rows of a flat column taken out of order (${start}, not ${v.taken})`)
        from[c] = v.take(end - start, group.scratch[c])
        v.taken = end
        at[c] = -start
      } else {
        from[c] = v
        at[c] = 0
      }
    }
    const out = new Array(end - start)
    if (columns.includes('__proto__')) { // an own field, not the record's prototype
      for (let r = start; r < end; r++) {
        const rec = Object.create(proto)
        for (let c = 0; c < n; c++) setField(rec, columns[c], from[c][r + at[c]])
        out[r - start] = rec
      }
      return out
    }
    for (let r = start; r < end; r++) {
      const rec = Object.create(proto)
      for (let c = 0; c < n; c++) rec[columns[c]] = from[c][r + at[c]]
      out[r - start] = rec
    }
    return out
  }

  /**
   * Reader batches of `columns`, row groups [fromGroup, toGroup), each cut into batches of
   * `batchRecords`: { records, lines (1-based rows over the file), offsets: null, bytesRead }.
   */
  async * batches (columns, { fromGroup = 0, toGroup = this.rowGroups.length, text = false, names = false, batchRecords = text ? TEXT_BATCH : DEFAULT_BATCH } = {}) {
    let turns = 0
    for (let g = fromGroup; g < toGroup; g++) {
      const group = text ? await this.readTextGroup(g, columns, names) : await this.readGroup(g, columns)
      const shape = text ? new RowShape(g, columns) : null
      const first = this.rowGroups[g].firstRow
      for (let start = 0; start < group.rows; start += batchRecords) {
        const end = Math.min(group.rows, start + batchRecords)
        const lines = new Array(end - start)
        for (let i = 0; i < lines.length; i++) lines[i] = first + start + i + 1
        const records = text ? textRows(group.texts, start, end, shape) : this.records(g, group, start, end)
        yield { records, lines, offsets: null, bytesRead: this.position(g, end) }
        // A row group's batches come from memory, through promises alone: without a turn of
        // the event loop now and then, callbacks wait for the whole group (a written batch's
        // memory given back for the next, 443 fresh output buffers in the 3M-row flights dry
        // run against CSV's 4; a progress line; Ctrl-C).
        if (++turns % YIELD_EVERY === 0) await new Promise(setImmediate)
      }
    }
  }

  /**
   * How far through the file row `end` of row group `g` is, in bytes, for the progress line:
   * the group's share of the file by its rows; the whole file after the last row. (The bytes
   * fetched would not do: the columns not used are never read.)
   */
  position (g, end) {
    const group = this.rowGroups[g]
    if (g === this.rowGroups.length - 1 && end === group.rows) return this.buffer.byteLength
    const before = g === 0 ? 4 : this.rowGroups[g - 1].bytesEnd
    return Math.round(before + (group.bytesEnd - before) * end / group.rows)
  }

  async close () {
    if (typeof this.buffer.close === 'function') await this.buffer.close()
  }
}

/** Where a column chunk's bytes end in the file (its dictionary page, if any, comes first). */
function chunkEnd (chunk) {
  const m = chunk.meta_data
  if (!m) return 0
  return Number(m.dictionary_page_offset ?? m.data_page_offset) + Number(m.total_compressed_size)
}

function isLeaf (node) {
  return node.children.length === 0
}

function isStruct (node) {
  const e = node.element
  const l = e.logical_type && e.logical_type.type
  return node.children.length > 0 && !['LIST', 'MAP', 'MAP_KEY_VALUE'].includes(e.converted_type) && l !== 'LIST' && l !== 'MAP'
}

/**
 * A column's chunks (hyparquet's onChunk: it may call several times per column, in any order)
 * converted by `value` into one array of `rows` values, in row order.
 */
function convertParts (parts, rows, value) {
  const out = new Array(rows)
  let i = 0
  if (parts.length > 1) parts.sort((a, b) => a.rowStart - b.rowStart)
  for (const { columnData } of parts) for (let j = 0; j < columnData.length; j++) out[i++] = value(columnData[j])
  for (; i < rows; i++) out[i] = null // no chunk: a row group of no values read
  return out
}

/** Opens a Parquet file on disk. */
async function openParquetFile (name, path) {
  const buffer = await fileBuffer(path, name)
  try {
    return await ParquetFile.open({ name, buffer })
  } catch (err) {
    await buffer.close()
    throw err
  }
}

module.exports = { ParquetFile, openParquetFile, convertParts, DEFAULT_BATCH }
