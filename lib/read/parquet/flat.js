'use strict'

// A flat column's chunk (a top-level leaf, not repeated: max repetition level 0, max definition
// level 0 or 1), read page by page with hyparquet's own page reader, decompressors and decoders,
// and assembled here: a definition level below the maximum is a null, else the next value.
// hyparquet's assembleLists (its Dremel assembly, for lists and structs) did the same for these
// columns at about half of its decoding time, with an array per page joined onto the last.
// Each value goes through `value` (values.js) straight into the one output array; a
// dictionary's entries are converted once, and a dictionary-encoded page's indices pick them.
// Nested columns keep hyparquet's parquetRead (reader.js).

const { isUtf8 } = require('node:buffer')
const { leafRule, notUtf8 } = require('./values')

let hy = null

/** hyparquet's page-level modules (package.json exports ./src/*.js), loaded with the reader. */
function pages () {
  if (hy === null) {
    hy = {
      ...require('hyparquet/src/column.js'),
      ...require('hyparquet/src/datapage.js'),
      ...require('hyparquet/src/convert.js'),
      ...require('hyparquet/src/plain.js'),
      ...require('hyparquet/src/encoding.js')
    }
  }
  return hy
}

/** Is a top-level schema node (hyparquet's parquetSchema) a column this reader reads? */
function isFlat (node) {
  return node.children.length === 0 && node.element.repetition_type !== 'REPEATED'
}

/**
 * The column chunk `meta` (a row group's column meta_data) of the flat column `node`, `rows`
 * rows, as a FlatColumn of `rows` record values: `value` of each stored value, null for null.
 * Pages and their levels are read here, before any row is taken (a page that cannot be read
 * fails the row group before its first batch); a PLAIN page of byte arrays (strings, bytes:
 * an object per value) is decoded as its rows are taken, a batch at a time, so that a row
 * group's strings do not all live, and survive the young generation, while it is encoded.
 * `buffer` is the file's AsyncBuffer; `schemaRoot` the schema tree's root (for the levels).
 * @returns {Promise<FlatColumn>}
 */
async function readFlatColumn (chunk) {
  const segments = await readPages(chunk, new FlatPages(chunk.value, STRING_RULES.has(leafRule(chunk.node.element).rule)))
  return new FlatColumn(segments, chunk.rows)
}

/**
 * A flat column's pages made segments of record values, for readPages (its `maker`): `value`
 * the column's record value function, `strings` a text column's (its byte values checked to
 * be UTF-8). readPages sets `decoder` (hyparquet's, for the chunk) and `maxDef` before the
 * first page.
 */
class FlatPages {
  constructor (value, strings) {
    this.value = value
    this.strings = strings
    this.entries = null // the dictionary's entries as record values
    this.decoder = null
    this.maxDef = 0
  }

  dictionary (entries) {
    const value = this.value
    const converted = new Array(entries.length)
    for (let k = 0; k < entries.length; k++) converted[k] = value(entries[k])
    this.entries = converted
  }

  v1 (raw, daph) {
    return daph.encoding === 'PLAIN' && BYTES.has(this.decoder.type)
      ? lazyPage(raw, daph, this)
      : eagerPage(pages().readDataPage(raw, daph, this.decoder), daph.encoding, this)
  }

  v2 (page, encoding) {
    return eagerPage(page, encoding, this)
  }
}

/**
 * The pages of a flat column's chunk, each made a segment ({ rows, defs, … }) by `maker`
 * (FlatPages, text.js TextPages), whose `decoder` (hyparquet's, for the chunk) and `maxDef`
 * are set here first: `dictionary(entries)` for the dictionary page (hyparquet's converted
 * entries), `v1(raw, daph)` for a decompressed DATA_PAGE, `v2(page, encoding)` for a
 * DATA_PAGE_V2 read by hyparquet ({ definitionLevels, dataPage }). Each segment's `maxDef` is
 * set here. Fails when the chunk holds fewer values than the row group's rows.
 */
async function readPages ({ buffer, meta, schemaRoot, node, element, rows, compressors, parsers }, maker) {
  const { parquetHeader, readPage, decompressPage, readDataPageV2, convert } = pages()
  const start = Number(meta.dictionary_page_offset || meta.data_page_offset)
  const bytes = await buffer.slice(start, start + Number(meta.total_compressed_size))
  const reader = { view: new DataView(bytes), offset: 0 }
  const decoder = {
    pathInSchema: meta.path_in_schema,
    element,
    schemaPath: [schemaRoot, node],
    type: meta.type,
    codec: meta.codec,
    compressors,
    parsers,
    utf8: false
  }
  const maxDef = element.repetition_type === 'REQUIRED' ? 0 : 1
  maker.decoder = decoder
  maker.maxDef = maxDef
  const segments = []
  let i = 0
  while (i < rows && reader.offset < reader.view.byteLength - 1) {
    const header = parquetHeader(reader)
    checkCount(header, rows - i)
    if (header.type === 'DICTIONARY_PAGE') {
      const { data } = readPage(reader, header, decoder, undefined, undefined, 0)
      maker.dictionary(convert(data, decoder))
      continue
    }
    const compressed = new Uint8Array(bytes, reader.offset, header.compressed_page_size)
    reader.offset += header.compressed_page_size
    let segment
    if (header.type === 'DATA_PAGE') {
      const raw = decompressPage(compressed, Number(header.uncompressed_page_size), decoder.codec, compressors)
      segment = maker.v1(raw, header.data_page_header)
    } else if (header.type === 'DATA_PAGE_V2') {
      segment = maker.v2(readDataPageV2(compressed, header, decoder), header.data_page_header_v2.encoding)
    } else if (header.type === 'INDEX_PAGE') {
      continue
    } else {
      throw new Error(`parquet unsupported page type: ${header.type}`)
    }
    segment.maxDef = maxDef
    segments.push(segment)
    i += segment.rows
  }
  if (i < rows) throw new Error(`the column chunk holds ${i} values, the row group ${rows} rows`)
  return segments
}

/**
 * A page of a flat column holds no more values than the row group has rows left (one value a
 * row), a dictionary no more entries than its bytes can hold (a bit each, at the least):
 * checked before the values' arrays are made, which a page of a few bytes (an RLE run of 2^31
 * dictionary indices) could make gigabytes long.
 */
function checkCount (header, left) {
  const data = header.data_page_header || header.data_page_header_v2
  if (data && data.num_values > left) throw new Error(`a page of ${data.num_values} values where the row group has ${left} rows left`)
  const dictionary = header.dictionary_page_header
  if (dictionary && dictionary.num_values > 8 * header.uncompressed_page_size) {
    throw new Error(`a dictionary page of ${dictionary.num_values} entries in ${header.uncompressed_page_size} bytes`)
  }
}

const BYTES = new Set(['BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'])
// The rules (values.js leafRule) of text: UTF-8, checked.
const STRING_RULES = new Set(['string', 'text'])

/**
 * A page decoded whole by hyparquet: `next()` gives its values in order (a dictionary-encoded
 * page's indices pick the converted dictionary's entries). `column`: its FlatPages.
 */
function eagerPage ({ definitionLevels: defs, dataPage }, encoding, column) {
  const { entries: dictionary, value } = column
  const byIndex = encoding.endsWith('_DICTIONARY')
  if (byIndex) checkIndices(dataPage, dictionary)
  const values = byIndex ? dataPage : storedValues(dataPage, column.decoder, column.strings)
  let k = 0
  return {
    rows: defs && defs.length ? defs.length : values.length,
    defs: defs && defs.length ? defs : null,
    next: byIndex ? () => dictionary[values[k++]] : () => value(values[k++])
  }
}

/**
 * A dictionary-encoded page's indices each pick an entry of the dictionary (else the row
 * would have no value: its field left out, the row sent without it).
 */
function checkIndices (indices, dictionary) {
  if (dictionary === null) throw new Error('a dictionary-encoded page without a dictionary page before it')
  const size = dictionary.length
  for (let i = 0; i < indices.length; i++) {
    if (!(indices[i] < size)) throw new Error(`a dictionary-encoded page's value ${i + 1} is entry ${indices[i]} of a dictionary of ${size} entries`)
  }
}

/**
 * A page's values decoded by hyparquet, converted by it (strings decoded: reader.js
 * RAW_PARSERS); `strings`: a text column whose values it left as bytes (JSON, ENUM), each
 * checked now to be UTF-8 (values.js utf8Text would refuse it as its row is taken).
 */
function storedValues (dataPage, decoder, strings) {
  const values = pages().convert(dataPage, decoder)
  if (strings) {
    for (let i = 0; i < values.length; i++) {
      const v = values[i]
      if (v instanceof Uint8Array && !isUtf8(v)) throw notUtf8(v)
    }
  }
  return values
}

/**
 * A PLAIN page of byte arrays, its definition levels read now (as hyparquet's readDataPage
 * reads them) and its values when taken: hyparquet's readPlain from where the last take
 * stopped. The values' lengths are checked now, so that a take cannot fail. `column`: its
 * FlatPages.
 */
function lazyPage (raw, daph, column) {
  const { readPlain, convert } = pages()
  const { decoder, value } = column
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength)
  const reader = { view, offset: 0 }
  const { defs, present } = readDefs(reader, daph.num_values, column.maxDef)
  checkLengths(reader, present, decoder, column.strings)
  let held = [] // the values read ahead of the rows taken
  let k = 0
  return {
    rows: daph.num_values,
    defs,
    /** Reads the next `count` values (the non-null ones of the rows about to be taken). */
    want (count) {
      held = convert(readPlain(reader, decoder.type, count, decoder.element.type_length), decoder)
      k = 0
    },
    next: () => value(held[k++])
  }
}

/**
 * A DATA_PAGE's definition levels (a flat column's: 0 or 1, RLE/bit-packed with a length
 * before them), the reader left after them: `defs` null when every value is present (no
 * levels, or one RLE run of the maximum: the page is not walked), and the values present.
 */
function readDefs (reader, count, maxDef) {
  if (!maxDef) return { defs: null, present: count }
  if (oneRun(reader, count, maxDef)) return { defs: null, present: count }
  const defs = new Array(count)
  pages().readRleBitPackedHybrid(reader, 1, defs)
  let present = count
  for (let d = 0; d < count; d++) if (defs[d] !== maxDef) present--
  return { defs: present === count ? null : defs, present }
}

/**
 * Are the levels at the reader one RLE run of `maxDef` covering `count` values? Then the
 * reader is moved past them. (The run's header: a varint, count << 1; its value: one byte.)
 */
function oneRun (reader, count, maxDef) {
  const { view } = reader
  const at = reader.offset
  if (at + 4 > view.byteLength) return false
  const length = view.getUint32(at, true)
  let p = at + 4
  let header = 0
  for (let shift = 0; shift < 35 && p < view.byteLength; shift += 7) {
    const byte = view.getUint8(p++)
    header += (byte & 0x7f) * 2 ** shift
    if (byte < 0x80) {
      if (header % 2 !== 0 || header / 2 < count || p >= view.byteLength || view.getUint8(p) !== maxDef) return false
      reader.offset = at + 4 + length
      return true
    }
  }
  return false
}

/**
 * A PLAIN page's `count` byte arrays from the reader's offset ({ view, offset }: left where it
 * is) end within the page (else readPlain would read past it); `utf8`: each is UTF-8 (a
 * string column's: else it is refused now, with the page, not when its row is taken).
 */
function checkLengths (reader, count, decoder, utf8 = false) {
  const view = reader.view
  let offset = reader.offset
  const size = decoder.element.type_length
  const bytes = utf8 ? new Uint8Array(view.buffer, view.byteOffset, view.byteLength) : null
  if (decoder.type === 'FIXED_LEN_BYTE_ARRAY') {
    if (!size) throw new Error('parquet missing fixed length')
    if (offset + count * size > view.byteLength) throw new Error(`a PLAIN page of ${count} values of ${size} bytes is ${view.byteLength} bytes long`)
    if (utf8) for (let i = 0, s = offset; i < count; i++, s += size) checkUtf8(bytes, s, s + size)
    return
  }
  for (let i = 0; i < count; i++) {
    if (offset + 4 > view.byteLength) throw new Error(`a PLAIN page ends within its value ${i + 1} of ${count}`)
    const s = offset + 4
    offset = s + view.getUint32(offset, true)
    if (utf8 && offset <= view.byteLength) checkUtf8(bytes, s, offset)
  }
  if (offset > view.byteLength) throw new Error(`a PLAIN page ends within its value ${count} of ${count}`)
}

/** bytes[s, e) are UTF-8, or the value is refused (values.js notUtf8). */
function checkUtf8 (bytes, s, e) {
  let or = 0
  for (let i = s; i < e; i++) or |= bytes[i]
  if (or >= 0x80 && !isUtf8(bytes.subarray(s, e))) throw notUtf8(bytes.subarray(s, e))
}

/**
 * A row group's flat column, taken in row order: take(n, out) writes the next n rows' record
 * values into out[0..n). Pages decoded whole are held whole; lazy ones a take at a time.
 */
class FlatColumn {
  constructor (segments, rows) {
    this.segments = segments
    this.rows = rows
    this.s = 0 // the segment being taken
    this.row = 0 // the row within it
    this.taken = 0 // rows taken so far (reader.js records() checks it takes them in order)
  }

  take (n, out) {
    let o = 0
    while (o < n) {
      const seg = this.segments[this.s]
      const m = Math.min(n - o, seg.rows - this.row)
      const defs = seg.defs
      if (seg.want !== undefined) {
        let count = m
        if (defs !== null) for (let d = this.row; d < this.row + m; d++) if (defs[d] !== seg.maxDef) count--
        seg.want(count)
      }
      if (defs === null) {
        for (let j = 0; j < m; j++) out[o++] = seg.next()
      } else {
        for (let d = this.row, end = this.row + m; d < end; d++) out[o++] = defs[d] === seg.maxDef ? seg.next() : null
      }
      this.row += m
      if (this.row === seg.rows) {
        this.segments[this.s] = null // taken: its values can go
        this.s++
        this.row = 0
      }
    }
    return out
  }
}

module.exports = { readFlatColumn, readPages, readDefs, checkLengths, checkIndices, storedValues, pages, isFlat, FlatColumn, BYTES, STRING_RULES }
