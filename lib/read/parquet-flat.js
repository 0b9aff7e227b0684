'use strict'

// A flat column's chunk (a top-level leaf, not repeated: max repetition level 0, max definition
// level 0 or 1), read page by page with hyparquet's own page reader, decompressors and decoders,
// and assembled here: a definition level below the maximum is a null, else the next value.
// hyparquet's assembleLists (its Dremel assembly, for lists and structs) did the same for these
// columns at about half of its decoding time, with an array per page joined onto the last.
// Each value goes through `value` (parquet-values.js) straight into the one output array; a
// dictionary's entries are converted once, and a dictionary-encoded page's indices pick them.
// Nested columns keep hyparquet's parquetRead (parquet.js).

let hy = null

/** hyparquet's page-level modules (package.json exports ./src/*.js), loaded with the reader. */
function pages () {
  if (hy === null) {
    hy = {
      ...require('hyparquet/src/column.js'),
      ...require('hyparquet/src/datapage.js'),
      ...require('hyparquet/src/convert.js')
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
 * rows, as `rows` record values: `value` of each stored value, null for null.
 * `buffer` is the file's AsyncBuffer; `schemaRoot` the schema tree's root (for the levels).
 * @returns {Promise<any[]>}
 */
async function readFlatColumn ({ buffer, meta, schemaRoot, node, element, rows, value, compressors, parsers }) {
  const { parquetHeader, readPage, decompressPage, readDataPage, readDataPageV2, convert } = pages()
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
  const out = new Array(rows)
  let i = 0
  let dictionary = null // the dictionary's entries as record values
  while (i < rows && reader.offset < reader.view.byteLength - 1) {
    const header = parquetHeader(reader)
    if (header.type === 'DICTIONARY_PAGE') {
      const { data } = readPage(reader, header, decoder, undefined, undefined, 0)
      const entries = convert(data, decoder)
      dictionary = new Array(entries.length)
      for (let k = 0; k < entries.length; k++) dictionary[k] = value(entries[k])
      continue
    }
    const compressed = new Uint8Array(bytes, reader.offset, header.compressed_page_size)
    reader.offset += header.compressed_page_size
    let page
    let encoding
    if (header.type === 'DATA_PAGE') {
      const daph = header.data_page_header
      const raw = decompressPage(compressed, Number(header.uncompressed_page_size), decoder.codec, compressors)
      page = readDataPage(raw, daph, decoder)
      encoding = daph.encoding
    } else if (header.type === 'DATA_PAGE_V2') {
      page = readDataPageV2(compressed, header, decoder)
      encoding = header.data_page_header_v2.encoding
    } else if (header.type === 'INDEX_PAGE') {
      continue
    } else {
      throw new Error(`parquet unsupported page type: ${header.type}`)
    }
    i = assemble(out, i, rows, page, encoding, dictionary, decoder, value, maxDef)
  }
  if (i < rows) throw new Error(`the column chunk holds ${i} values, the row group ${rows} rows`)
  return out
}

/** One data page's values into out from `i`; returns where the next page goes on. */
function assemble (out, i, rows, { definitionLevels: defs, dataPage }, encoding, dictionary, decoder, value, maxDef) {
  const byIndex = dictionary !== null && encoding.endsWith('_DICTIONARY')
  const values = byIndex ? dataPage : pages().convert(dataPage, decoder)
  const n = defs && defs.length ? defs.length : values.length
  const end = Math.min(rows, i + n)
  let k = 0
  if (!defs || defs.length === 0) {
    if (byIndex) for (; i < end; i++) out[i] = dictionary[values[k++]]
    else for (; i < end; i++) out[i] = value(values[k++])
  } else {
    for (let d = 0; i < end; i++, d++) {
      if (defs[d] !== maxDef) out[i] = null
      else out[i] = byIndex ? dictionary[values[k++]] : value(values[k++])
    }
  }
  return i
}

module.exports = { readFlatColumn, isFlat }
