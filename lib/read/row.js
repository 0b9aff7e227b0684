'use strict'

const { PipeloadError } = require('../errors')

// The row interface: what the mapper (encode/) sees of a record, whatever format it came from.
// A reader yields each record as one of two things:
//
// - a plain record: an array of strings (a CSV/TSV row, its column names in the input's shape)
//   or an object (a JSON value, a Parquet row read as values), its numbers as JS numbers or,
//   where a double would change them, JsonNumbers (json-number.js: the input's digits), its
//   binary values as Buffers. Fields are read by name, by column or by dotted path; `*` takes
//   keysOf(record); `{$}` is the record as JSON text with numbers as written.
// - a byte row of the input's format (read/csv/row.js, read/json/row.js, read/parquet/row.js):
//   the record as byte ranges of what was read, no string per field. Its format's RowKind
//   compiles a template word into a writer that copies those bytes into RESP, and gives the
//   plain record back (toPlain()) for what the bytes cannot say (a dotted path, {$}, map()).
//
// Which byte rows an input gives follows from its shape and is resolved once through the
// format registry (formats.js rowKindOf): nothing above read/ loads a format's module or asks
// which format it was, and a CSV run loads no Parquet code.
//
// A record's position is one object (Position), read from a batch by positionAt.

/**
 * What a byte row gives, whatever its format.
 * @typedef {object} Row
 * @property {() => (string[]|object)} toPlain the plain record, as the format's value reader gives it
 */

/**
 * A sink for RESP bytes (encode/writer.js ByteWriter), as a RowKind's writers use it: they see
 * only these methods. `span` copies bytes [s, e) of `src` as one bulk string; `spanParts` one
 * bulk string of constant parts (Buffers) and spans (each null part takes the next [s, e) of
 * `spans`, from `src`, one Buffer or one per span); `spanBetween` around.before + [s, e) + around.after;
 * `raw` bytes that are a bulk string already; `rawView` the same from a DataView, 4 bytes at a
 * time; `bulkHead(len)` `$len\r\n` with room for len bytes after it (at `buf`[`pos`]), `crlf()`
 * its end; `bytes` pre-encoded bytes (a column name's bulk string).
 * @typedef {object} Sink
 * @property {(src: Buffer, s: number, e: number) => void} span
 * @property {(parts: (Buffer|null)[], src: Buffer|Buffer[], spans: Int32Array) => void} spanParts
 * @property {(around: {before: Buffer, after: Buffer}, src: Buffer, s: number, e: number) => void} spanBetween
 * @property {(src: Buffer, s: number, e: number) => void} raw
 * @property {(view: DataView, s: number, e: number) => void} rawView
 * @property {(len: number) => void} bulkHead
 * @property {() => void} crlf
 * @property {(b: Buffer) => void} bytes
 * @property {Buffer} buf the buffer bulkHead made room in
 * @property {number} pos where the next byte goes in it (a writer that fills the room sets it)
 */

/**
 * A template word's parts as a RowKind is given them: literal texts, and { name } for a field.
 * @typedef {(string|{ name: string })[]} WordParts
 */

/**
 * The byte rows of one format, compiled against once per input (formats.js rowKindOf).
 * @typedef {object} RowKind
 * @property {string} name
 * @property {Function} Row the class of its rows (`rec instanceof kind.Row`)
 * @property {(parts: WordParts, shape: object, template: string) => (((row: Row, w: Sink) => void)|null)} word
 *   the writer of a word's bulk string from a row's bytes; null where the row cannot give it
 *   (the record is then made plain first); throws FieldMissing for a field the row lacks
 * @property {(shape: object, nameBytes: (name: string) => Buffer) => ({ count: (row: Row) => number, write: (row: Row, w: Sink) => void }|null)} star
 *   `*`: the number of arguments (names and values) and their bytes (`nameBytes`: a name's
 *   bulk string, for names the row does not hold as one); null: the record is made plain first
 * @property {(name: string, shape: object, template: string) => number} [columnIndex]
 *   a tabular input's column of a field name (refuses, once, a name that is no column)
 */

/**
 * Where a record is in its input, as a failure names it (positionAt). A reader gives it as the
 * batch's lines and offsets and, where those do not say all, a mark on the record (ELEMENT,
 * ROW_GROUP) that the encoder keeps in the batch's `marks` (markOf); the stages above know a
 * batch's positions only through positionAt.
 * @typedef {object} Position
 * @property {string} [file] the input's name
 * @property {number|null} line the record's first line (a Parquet row: its row number)
 * @property {number|undefined} offset the byte offset of its first byte (undefined: not known)
 * @property {number|undefined} element a JSON document's element number, where the line does not say it
 * @property {number|undefined} rowGroup a Parquet row's row group
 */

/** A Parquet record's row group (a symbol property: not a field, not in `*` or {$}), named in failures. */
const ROW_GROUP = Symbol('pipeload row group')

// The element number of a record of a JSON document that shares its line with another (a
// one-line, minified document), where the line alone does not say which record it is: failures
// name it, `file:1: element [4711] (byte 90210): …`. A symbol, like ROW_GROUP.
const ELEMENT = Symbol('pipeload element')

// A record's keys in input order where a JS object would list them otherwise (integer-like keys
// come first in a JS object, wherever they were in the text): `*` writes pairs in input order.
const KEY_ORDER = Symbol('pipeload key order')

// The key of a record read from a JSON object keyed by id ({"AD": {…}, "AE": {…}}): {$key} in
// templates. A symbol, like KEY_ORDER, so that `*` and JSON text never show it.
const MEMBER_KEY = Symbol('pipeload member key')

// How deep a record may nest: 1000 levels is far beyond real data and far below what
// JSON.stringify can write back.
const MAX_DEPTH = 1000

/** An array index as a field name ({0}). */
const INDEX = /^(?:0|[1-9]\d*)$/

/** The own enumerable keys of a plain record in input order. */
function keysOf (rec) {
  return rec[KEY_ORDER] || Object.keys(rec)
}

/**
 * What a record's position has besides its line and offset ({ element } or { rowGroup }), or
 * null. `last`: the mark of the record before, given back when it says the same (the rows of
 * a row group share one: no object per row).
 */
function markOf (rec, last) {
  if (rec === null || typeof rec !== 'object') return null
  const group = rec[ROW_GROUP]
  if (group !== undefined) return last !== null && last.rowGroup === group ? last : { rowGroup: group }
  const element = rec[ELEMENT]
  return element !== undefined ? { element } : null
}

/** The Position of record i of a batch ({ lines, offsets, marks? }) of input `file`. */
function positionAt (batch, i, file) {
  const mark = batch.marks ? batch.marks[i] : null
  return {
    file,
    line: batch.lines[i],
    offset: batch.offsets?.[i] ?? undefined,
    element: mark ? mark.element : undefined,
    rowGroup: mark ? mark.rowGroup : undefined
  }
}

/** A field the record lacks (or holds null): the record fails with its position, never an empty string. */
class FieldMissing extends PipeloadError {
  constructor (field, reason) {
    super('PIPELOAD_FIELD_MISSING', reason || `field "${field}" is missing`, { field })
  }
}

module.exports = { ROW_GROUP, ELEMENT, KEY_ORDER, MEMBER_KEY, MAX_DEPTH, INDEX, keysOf, markOf, positionAt, FieldMissing }
