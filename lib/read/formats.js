'use strict'

// The format registry: the one place where the stages above read/ reach a format's code or
// ask what a format allows. The byte rows an input's records may be (read/row.js RowKind) are
// chosen from its shape, once per input; a format's code is loaded by the first input that
// needs it: a CSV run loads no Parquet code.

/**
 * What the stages above read/ may ask of a format (the readers themselves are opened by
 * read/input.js, which knows them):
 * - tabular: records are rows of columns (a header, --columns, a width to check);
 * - chunks: its bytes can be cut at record boundaries and parsed in n workers (read/cut.js);
 * - stream: it is read as one byte stream (a file, stdin, a URL's body), so one worker can
 *   read it (Parquet is read by ranges from its footer);
 * - midway: a run can start at a record in its middle (a checkpoint's position; a JSON
 *   document is read from its start only);
 * - ranges: it reads a URL by ranges itself (no Range request to resume it);
 * - groups: its row groups are read by n workers (`entry()`: its code for them).
 * @typedef {{ tabular: boolean, chunks: boolean, stream: boolean, midway: boolean, ranges: boolean, groups: boolean, entry?: () => object }} Format
 */
const TEXT = { tabular: false, chunks: true, stream: true, midway: true, ranges: false, groups: false }
/** @type {Record<string, Format>} in the order `--format` lists them */
const FORMATS = {
  csv: { ...TEXT, tabular: true },
  tsv: { ...TEXT, tabular: true },
  json: { ...TEXT, chunks: false, midway: false },
  ndjson: TEXT,
  parquet: { tabular: false, chunks: false, stream: false, midway: true, ranges: true, groups: true, entry: parquetEntry }
}

// Records given as values (an iterable), or a URL whose format its response will say: none of these.
const NONE = { tabular: false, chunks: false, stream: false, midway: false, ranges: false, groups: false }

/** A format's capabilities (Format), by its name (none for an input without one). */
function formatOf (name) {
  if (name == null) return NONE
  const f = FORMATS[name]
  if (f === undefined) throw new Error(`internal: no format "${name}"`)
  return f
}

/**
 * What the row-group workers of a Parquet input use (threads): the input opened as the
 * loader opens it (openRecords: its footer, the columns, the shape), and a worker's own
 * reader of its file (openFile: the footer the loader read passed in, not read again).
 */
function parquetEntry () {
  const { openParquetRecords } = require('./parquet/input')
  const { ParquetFile } = require('./parquet/reader')
  const { fileBuffer } = require('./parquet/file-buffer')
  return {
    openRecords: openParquetRecords,
    openFile: (path, name, metadata) => fileBuffer(path, name).then(buffer => ParquetFile.of(name, buffer, metadata))
  }
}

// Each RowKind by name, loaded on first use.
const KINDS = {
  csv: () => require('./csv/row').rows,
  json: () => require('./json/row').rows,
  parquet: () => require('./parquet/row').rows
}

/**
 * The RowKind of the byte rows an input of this shape may give: the one its shape names
 * (`rows`: a Parquet input reading text rows, parquet/input.js); else those of a text input,
 * CSV rows where the shape has columns (a CSV or TSV input) and JSON rows (an NDJSON input's
 * flat lines) where it has none.
 * @param {{ rows?: string, columns?: string[]|null }|null|undefined} shape
 * @returns {import('./row').RowKind}
 */
function rowKindOf (shape) {
  const name = shape && shape.rows !== undefined ? shape.rows : shape && shape.columns !== undefined ? 'csv' : 'json'
  const load = KINDS[name]
  if (load === undefined) throw new Error(`internal: no row kind "${name}"`)
  return load()
}

/** The formats' names (`format`, `--format`); `stream`: those read as one byte stream (read/reader.js). */
const FORMAT_NAMES = Object.freeze(Object.keys(FORMATS))
const STREAM_FORMATS = Object.freeze(FORMAT_NAMES.filter(name => FORMATS[name].stream))

module.exports = { rowKindOf, formatOf, FORMAT_NAMES, STREAM_FORMATS }
