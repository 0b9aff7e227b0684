'use strict'

const { types } = require('node:util')
const { getKeyIndexes, exists: knownCommand } = require('@ioredis/commands')
const { PipeloadError } = require('../errors')
const { parseTemplate, FIELD } = require('./template')
const { bulkBytes, utf8Bytes } = require('./writer')
const { CsvRow } = require('../read/csv-row')
const { JsonRow } = require('../read/json-row')
const { ParquetRow, headOf } = require('../read/parquet-row')
const { keysOf, INDEX, MEMBER_KEY } = require('../read/json-value')
const { JsonNumber, exactJson, parseJson } = require('../read/json-number')

// Binds parsed templates to the shape of the input (CSV columns or JSON objects) and
// compiles them once into a mapper that writes a record's commands as RESP bytes.
// A field the record lacks throws a FieldMissing, which the loader turns into a failed
// record with its position; it never becomes an empty string.
// Fields are own properties only: `{constructor}` or `{toString}` of a record without such a
// key is missing, not the value an object inherits.

class FieldMissing extends PipeloadError {
  constructor (field, reason) {
    super('PIPELOAD_FIELD_MISSING', reason || `field "${field}" is missing`, { field })
  }
}

/**
 * The bytes of a binary value, or null: a Buffer, any typed array or DataView (the bytes
 * it views, in memory order), an ArrayBuffer or SharedArrayBuffer. They go out as they are.
 */
function binaryOf (v) {
  if (Buffer.isBuffer(v)) return v
  if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength)
  if (types.isAnyArrayBuffer(v)) return Buffer.from(v)
  return null
}

/**
 * A record's value as one command argument: text (nested JSON as JSON text), or a Buffer
 * for a binary value; null and undefined are missing.
 */
function toArg (value, name) {
  switch (typeof value) {
    case 'string': return value
    case 'number': case 'bigint': case 'boolean': return String(value)
    case 'undefined': throw new FieldMissing(name)
    default:
      if (value === null) throw new FieldMissing(name, `field "${name}" is null`)
      if (value instanceof JsonNumber) return value.text // the input's digits
      return binaryOf(value) ?? jsonText(value, name)
  }
}

/** A nested value as JSON text (numbers as written); what JSON cannot write fails the record with a code. */
function jsonText (value, name) {
  let text
  try {
    text = exactJson(value)
  } catch (err) {
    const why = err instanceof RangeError ? 'is nested too deeply to write as JSON text' : `cannot be written as JSON (${err.message})`
    throw new PipeloadError('PIPELOAD_RECORD_INVALID', `field "${name}" ${why}`, { field: name })
  }
  if (text === undefined) { // a function or a symbol
    throw new PipeloadError('PIPELOAD_RECORD_INVALID', `field "${name}" is a ${typeof value}, which has no text`, { field: name })
  }
  return text
}

/** toArg(value) into a writer; strings and whole numbers without an intermediate string. */
function writeValue (v, name, w) {
  if (typeof v === 'string') w.bulk(v)
  else if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && !Object.is(v, -0)) w.bulkInt(v)
  else w.arg(toArg(v, name))
}

/**
 * A record's own property `key`, or undefined. Arrays have only their elements as fields
 * ({0}, not {length}); strings and other primitives have no fields.
 */
function ownField (rec, key) {
  if (rec === null || typeof rec !== 'object') return undefined
  const v = rec[key]
  if (v === undefined) return undefined
  if (Array.isArray(rec)) return INDEX.test(key) ? v : undefined
  return Object.hasOwn(rec, key) ? v : undefined
}

/** A getter for one field: by column index for CSV arrays, by (dotted) path for objects. */
function fieldGetter (name, shape, template) {
  if (shape.columns !== undefined) return columnGetter(name, shape, template)
  if (name === '$key') return memberKey
  const path = name.split('.')
  if (path.length === 1) return rec => ownField(rec, name)
  return rec => {
    const whole = ownField(rec, name) // a key that contains dots
    if (whole !== undefined) return whole
    let v = rec
    for (let i = 0; i < path.length && v !== undefined; i++) v = ownField(v, path[i])
    return v
  }
}

/**
 * {$key}: the key of a record read from a JSON object keyed by id (the reader keeps it under
 * MEMBER_KEY); a field really named "$key" wins.
 */
function memberKey (rec) {
  const own = ownField(rec, '$key')
  if (own !== undefined) return own
  const key = rec !== null && typeof rec === 'object' ? rec[MEMBER_KEY] : undefined
  if (key === undefined) throw new FieldMissing('$key', '{$key} is missing: it is the key of each member of a JSON document (or --json-path) that is an object keyed by id')
  return key
}

function columnGetter (name, shape, template) {
  const idx = columnIndex(name, shape, template)
  return rec => rec[idx]
}

function columnIndex (name, shape, template) {
  const columns = shape.columns
  let idx = columns ? columns.indexOf(name) : -1
  if (idx === -1 && /^\d+$/.test(name)) idx = Number(name)
  if (idx === -1) {
    const known = columns ? `columns are: ${columns.join(', ')}` : 'the input has no header: use {0}, {1}, …'
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID',
      `template "${template}" uses {${name}}, which is not a column of ${shape.file || 'the input'} (${known})${delimiterHint(columns)}`,
      { template, field: name })
  }
  return idx
}

// Other delimiters a header read with the wrong one shows inside its column names.
const DELIMITER_HINTS = [
  [';', "; the header contains ';': try --delimiter ';'"],
  ['\t', "; the header contains a tab: try --delimiter '\\t' or --format tsv"],
  ['|', "; the header contains '|': try --delimiter '|'"],
  [',', "; the header contains ',': try --delimiter ','"]
]

/** A hint when the header looks split on the wrong delimiter: a column name holds another one. */
function delimiterHint (columns) {
  if (!columns) return ''
  for (const [d, hint] of DELIMITER_HINTS) if (columns.some(c => typeof c === 'string' && c.includes(d))) return hint
  return ''
}

/**
 * Compile one word (literal text with {field} parts) into { value(rec) -> string,
 * write(rec, w), writeRow(csvRow, w), writeJson(jsonRow, w) }; the writes put the word's
 * bulk string into a ByteWriter (writeRow/writeJson are null for the other shape).
 */
function compileWord (word, shape, template) {
  if (word.parts.some(p => p.alt)) return compileExtendedWord(word, shape, template)
  const parts = word.parts.map(p => p.type === FIELD
    ? { name: p.name, get: fieldGetter(p.name, shape, template) }
    : p.text)
  if (parts.length === 1 && typeof parts[0] === 'string') {
    const text = parts[0]
    const bytes = bulkBytes(text)
    const write = (rec, w) => w.bytes(bytes)
    return { constant: text, value: () => text, write, writeRow: write, writeJson: write, writeParquet: write }
  }
  const rowWrite = shape.columns !== undefined ? compileSpanWord(word, rowLocators(word, shape, template)) : null
  const jsonWrite = shape.columns === undefined ? compileSpanWord(word, jsonLocators(word)) : null
  const parquetWrite = shape.parquetColumns ? compileColumnWord(word, shape.parquetColumns) : null
  if (parts.length === 1) {
    const { name, get } = parts[0]
    return {
      value: rec => toArg(get(rec), name),
      write: (rec, w) => writeValue(get(rec), name, w),
      writeRow: rowWrite,
      writeJson: jsonWrite,
      writeParquet: parquetWrite
    }
  }
  const scratch = new Array(parts.length)
  // The parts as strings, or as Buffers when a value is binary (`k:{blob}`: its bytes as they are).
  const fill = rec => {
    let binary = false
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]
      const v = typeof p === 'string' ? p : toArg(p.get(rec), p.name)
      if (typeof v !== 'string') binary = true
      scratch[i] = v
    }
    return binary
  }
  const joined = binary => binary
    ? Buffer.concat(scratch.map(v => typeof v === 'string' ? utf8Bytes(v) : v))
    : scratch.join('')
  return {
    value: rec => joined(fill(rec)),
    write: (rec, w) => fill(rec) ? w.arg(joined(true)) : w.bulkParts(scratch, parts.length),
    writeRow: rowWrite,
    writeJson: jsonWrite,
    writeParquet: parquetWrite
  }
}

/**
 * A word with {$…}, spread or vector parts: `{ extended, spread, value(rec, ctx) }` on plain
 * records only (a CsvRow or JsonRow is made an array or object first). value() gives the
 * word's argument, or for a spread word an array of arguments.
 */
function compileExtendedWord (word, shape, template) {
  const parts = word.parts.map(p => p.type === FIELD
    ? { name: p.name, get: p.alt ? altGetter(p, shape, template) : fieldGetter(p.name, shape, template) }
    : p.text)
  if (parts.length === 1 && word.parts[0].alt.kind === 'spread') {
    return { extended: true, spread: true, value: parts[0].get }
  }
  const value = (rec, ctx) => {
    let binary = false
    const vals = parts.map(p => {
      const v = typeof p === 'string' ? p : toArg(p.get(rec, ctx), p.name)
      if (typeof v !== 'string') binary = true
      return v
    })
    if (vals.length === 1) return vals[0]
    return binary ? Buffer.concat(vals.map(v => typeof v === 'string' ? utf8Bytes(v) : v)) : vals.join('')
  }
  return { extended: true, spread: false, value }
}

/**
 * A getter for a part with another reading. The field of that whole name wins where the input
 * has one (a column, decided once; an object's own key, per record), unless {=…} forced it.
 */
function altGetter (p, shape, template) {
  if (!p.forced && shape.columns && shape.columns.includes(p.name)) {
    const get = columnGetter(p.name, shape, template)
    return p.alt.kind === 'spread' ? rec => [get(rec)] : get
  }
  const alt = altValue(p.alt, shape, template)
  if (p.forced || shape.columns !== undefined) return alt
  const own = fieldGetter(p.name, shape, template)
  const wrap = p.alt.kind === 'spread' ? v => [toArg(v, p.name)] : v => v
  return (rec, ctx) => {
    const v = own(rec)
    return v === undefined ? alt(rec, ctx) : wrap(v)
  }
}

function altValue (alt, shape, template) {
  if (alt.kind === 'meta') {
    switch (alt.which) {
      case 'n':
        if (shape.shard) throw noRecordNumber('{$n}', template)
        return (rec, ctx) => String(ctx.n)
      case 'line': return lineGetter(shape, template)
      case 'file': return () => shape.file == null ? missingMeta('$file') : String(shape.file)
      default: return recordJson(shape)
    }
  }
  const get = fieldGetter(alt.name, shape, template)
  if (alt.kind === 'spread') {
    return rec => {
      const v = get(rec)
      if (v == null) toArg(v, alt.name) // missing or null: throws as for any field
      return spreadArgs(v, alt.name, alt.sep)
    }
  }
  return rec => vectorBytes(get(rec), alt.name, alt.type, alt.dim)
}

/**
 * A shard skips the records before its share without reading them, so their count, and a
 * record's number over the whole input, is not known to it.
 */
function noRecordNumber (what, template) {
  return new PipeloadError('PIPELOAD_OPTION_INVALID',
    `shard cannot be used with ${what}: a shard does not know how many records come before its share. Use {$line} (and {$file}) for a number unique in the input, or load without --shard`,
    { option: 'shard', template })
}

/**
 * {$line}: the record's input line. Two records on one line (a JSON document on one line)
 * would get the same key, each overwriting the one before: refused (exit 2) at the second,
 * before the reader batch holding both is sent. The same record again (a --ttl key) is no repeat.
 */
function lineGetter (shape, template) {
  let lastLine = null
  let lastRec = null
  return (rec, ctx) => {
    if (ctx.line == null) return missingMeta('$line')
    if (ctx.line === lastLine && rec !== lastRec) {
      throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID',
        `template "${template}" uses {$line}, but ${shape.file || 'the input'}:${ctx.line} holds more than one record (a JSON document on one line), so every record there would get the same {$line}: use {$n}, the record's number, for a value unique to each record`,
        { template, file: shape.file })
    }
    lastLine = ctx.line
    lastRec = rec
    return String(ctx.line)
  }
}

function missingMeta (name) {
  throw new FieldMissing(name, `{${name}} is not known for this input`)
}

/** {$}: the record as compact JSON; a CSV row with a header as an object of column → text. */
function recordJson (shape) {
  const columns = shape.columns
  if (columns) {
    return rec => {
      const o = {}
      for (let i = 0; i < rec.length; i++) o[i < columns.length ? columns[i] : String(i)] = rec[i]
      return JSON.stringify(o)
    }
  }
  return rec => jsonText(rec, '$')
}

/** {x[]} an array (or a text holding a JSON array) as arguments; {x[sep]} a text split on sep. */
function spreadArgs (v, name, sep) {
  if (typeof v === 'string' && sep !== '') return v === '' ? [] : v.split(sep)
  if (typeof v === 'string') {
    if (v.trim() === '') return []
    if (v.trimStart().startsWith('[')) {
      try { v = parseJson(v) } catch {} // numbers as written
    }
    if (typeof v === 'string') {
      throw new PipeloadError('PIPELOAD_RECORD_INVALID', `field "${name}" is text, not an array: {${name}[]} spreads an array; use {${name}[,]} to split text on ","`, { field: name })
    }
  }
  if (!Array.isArray(v)) {
    throw new PipeloadError('PIPELOAD_RECORD_INVALID', `field "${name}" is ${typeof v === 'object' ? 'an object' : 'a ' + typeof v}, not an array to spread`, { field: name })
  }
  return v.map((x, i) => toArg(x, `${name}[${i}]`))
}

/** A JSON array of numbers (or a text holding one) as little-endian float32/float64 bytes. */
function vectorBytes (v, name, type, dim) {
  if (v == null) toArg(v, name)
  const given = binaryOf(v)
  if (given) return given
  const invalid = why => new PipeloadError('PIPELOAD_RECORD_INVALID', `field "${name}" ${why}`, { field: name })
  let arr = v
  if (typeof v === 'string') {
    try { arr = JSON.parse(v) } catch { throw invalid(`is not a JSON array of numbers (for ${type} bytes): ${JSON.stringify(v.slice(0, 40))}`) }
  }
  if (!Array.isArray(arr)) throw invalid(`is not an array of numbers (for ${type} bytes)`)
  if (dim !== null && arr.length !== dim) throw invalid(`has ${arr.length} numbers, {${name}:${type}:${dim}} expects ${dim}`)
  const size = type === 'f32' ? 4 : 8
  const out = Buffer.allocUnsafe(arr.length * size)
  for (let i = 0; i < arr.length; i++) {
    const x = arr[i] instanceof JsonNumber ? arr[i].valueOf() : arr[i] // a float holds what a double does, rounded
    if (typeof x !== 'number') throw invalid(`element ${i} is ${JSON.stringify(x)}, not a number (for ${type} bytes)`)
    if (size === 4) out.writeFloatLE(x, i * 4)
    else out.writeDoubleLE(x, i * 8)
  }
  return out
}

/**
 * write() for a CsvRow or JsonRow: the word's fields copied as spans of the row's bytes.
 * `locators[m](row)` gives where in row.b the m-th field's [start, end) is, or throws
 * for a missing field; null locators (a JSON dotted path) give null.
 */
function compileSpanWord (word, locators) {
  if (locators === null) return null
  if (word.parts.length === 1) {
    const at = locators[0]
    return (row, w) => {
      const j = at(row)
      w.span(row.buf, row.b[j], row.b[j + 1])
    }
  }
  const parts = word.parts.map(p => p.type === FIELD ? null : Buffer.from(p.text))
  const spans = new Int32Array(2 * locators.length)
  return (row, w) => {
    for (let m = 0; m < locators.length; m++) {
      const j = locators[m](row)
      spans[2 * m] = row.b[j]
      spans[2 * m + 1] = row.b[j + 1]
    }
    w.spanParts(parts, row.buf, spans)
  }
}

/** CsvRow fields by column; a headerless {n} past the row's end is missing. */
function rowLocators (word, shape, template) {
  return word.parts.filter(p => p.type === FIELD).map(p => {
    const k = columnIndex(p.name, shape, template)
    return row => {
      if (k >= row.n) throw new FieldMissing(p.name)
      return row.i + 2 * k
    }
  })
}

/** JsonRow values by key; null when a name is a dotted path (the record is then made an object first). */
function jsonLocators (word) {
  const fields = word.parts.filter(p => p.type === FIELD)
  if (fields.some(p => p.name.includes('.'))) return null
  return fields.map(p => {
    const bytes = Buffer.from(p.name)
    return row => valueAt(row, bytes, p.name) + 2
  })
}

/** Where in row.b the pair named `bytes` starts; a missing or null value throws, as toArg does. */
function valueAt (row, bytes, name) {
  const k = row.find(bytes)
  if (k === -1) throw new FieldMissing(name)
  const j = row.i + 4 * k
  if (row.b[j + 2] === -1) throw new FieldMissing(name, `field "${name}" is null`)
  return j
}

/**
 * write() for a ParquetRow (read/parquet-row.js, the text rows of a Parquet input whose
 * `columns` the shape names): the word's fields copied from the row's column batches. A null
 * is missing, as a record's null field is. null when a field is no column (the record is
 * then made an object first, and fails as it would).
 */
function compileColumnWord (word, columns) {
  const fields = word.parts.filter(p => p.type === FIELD)
  const ks = fields.map(p => columns.indexOf(p.name))
  if (ks.includes(-1)) return null
  if (word.parts.length === 1) {
    const k = ks[0]
    const name = fields[0].name
    return (row, w) => {
      const c = row.cols[k]
      const r = row.r
      const s = presentAt(c, r, name)
      const e = c.spans[2 * r + 1]
      w.raw(c.buf, headOf(s, e), e + 2) // the value's bulk string
    }
  }
  const parts = word.parts.map(p => p.type === FIELD ? null : Buffer.from(p.text))
  if (ks.length === 1) { // `flight:{id}`: constant text around one column's value
    const at = parts.indexOf(null)
    const before = Buffer.concat(parts.slice(0, at))
    const after = Buffer.concat(parts.slice(at + 1))
    const k = ks[0]
    const name = fields[0].name
    return (row, w) => {
      const c = row.cols[k]
      const r = row.r
      w.spanBetween(before, c.buf, presentAt(c, r, name), c.spans[2 * r + 1], after)
    }
  }
  const srcs = new Array(ks.length)
  const spans = new Int32Array(2 * ks.length)
  return (row, w) => {
    for (let m = 0; m < ks.length; m++) {
      const c = row.cols[ks[m]]
      srcs[m] = c.buf
      spans[2 * m] = presentAt(c, row.r, fields[m].name)
      spans[2 * m + 1] = c.spans[2 * row.r + 1]
    }
    w.spanParts(parts, srcs, spans)
  }
}

/** Where row r's value starts in a Parquet ColumnBatch; a null fails the record, as a record's null field does. */
function presentAt (c, r, name) {
  const s = c.spans[2 * r]
  if (s === -1) throw new FieldMissing(name, `field "${name}" is null`)
  return s
}

/** `*`: every field/value pair. Column names are encoded once; objects skip null values. */
function compileStar (shape) {
  if (shape.columns !== undefined) {
    const names = shape.columns || null
    const nameOf = i => names ? names[i] : String(i)
    const nameBytes = []
    return {
      count: rec => rec.length * 2,
      pairs: rec => rec.flatMap((v, i) => [nameOf(i), v]),
      write (rec, w) {
        for (let i = 0; i < rec.length; i++) {
          w.bytes(nameBytes[i] ?? (nameBytes[i] = bulkBytes(nameOf(i))))
          w.bulk(rec[i])
        }
      },
      countRow: row => row.n * 2,
      writeRow (row, w) {
        const b = row.b
        for (let k = 0, j = row.i; k < row.n; k++, j += 2) {
          w.bytes(nameBytes[k] ?? (nameBytes[k] = bulkBytes(nameOf(k))))
          w.span(row.buf, b[j], b[j + 1])
        }
      }
    }
  }
  const checkObject = rec => {
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
      throw new FieldMissing('*', '"*" needs a record that is an object, got ' + (Array.isArray(rec) ? 'an array' : JSON.stringify(rec)))
    }
  }
  // Own enumerable keys in input order (keysOf): not what a class instance inherits, and
  // not JS's integer-keys-first order for a record that came through JSON.parse.
  const entries = rec => {
    checkObject(rec)
    const out = []
    for (const k of keysOf(rec)) {
      const v = rec[k]
      if (v !== null && v !== undefined) out.push(k, toArg(v, k))
    }
    return out
  }
  let counted = null // count()'s record and keys, for the write() that follows it
  let countedKeys = null
  // Property names repeat from record to record: encode each once (up to a bound, so
  // records with ever-new keys cannot grow the cache without limit).
  const keyBytes = new Map()
  const keyBulk = k => {
    let b = keyBytes.get(k)
    if (b === undefined) {
      b = bulkBytes(k)
      if (keyBytes.size < 10000) keyBytes.set(k, b)
    }
    return b
  }
  return {
    pairs: entries,
    countParquet (row) {
      let n = 0
      for (let k = 0; k < row.cols.length; k++) if (row.cols[k].spans[2 * row.r] !== -1) n += 2
      return n
    },
    // Rows read for `*` carry each column's name before its value (read/parquet-input.js); others go as objects.
    writeParquet: shape.parquetNames ? (row, w) => w.columnPairs(row.cols, row.r) : undefined,
    countJson (row) {
      let n = 0
      for (let k = 0, j = row.i; k < row.n; k++, j += 4) if (row.b[j + 2] !== -1) n += 2
      return n
    },
    writeJson (row, w) {
      const b = row.b
      for (let k = 0, j = row.i; k < row.n; k++, j += 4) {
        if (b[j + 2] === -1) continue
        w.span(row.buf, b[j], b[j + 1])
        w.span(row.buf, b[j + 2], b[j + 3])
      }
    },
    /** Pairs written straight into the writer; count() first, for the array header. */
    count (rec) {
      checkObject(rec)
      const keys = keysOf(rec)
      counted = rec
      countedKeys = keys
      let n = 0
      for (let i = 0; i < keys.length; i++) if (rec[keys[i]] !== null && rec[keys[i]] !== undefined) n += 2
      return n
    },
    write (rec, w) {
      const keys = rec === counted ? countedKeys : keysOf(rec)
      counted = countedKeys = null
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]
        const v = rec[k]
        if (v === null || v === undefined) continue
        w.bytes(keyBulk(k))
        writeValue(v, k, w)
      }
    }
  }
}

/** Compile one parsed template for a shape into { args(rec), write(rec, w), key }. */
function compileCommand (parsed, shape, vectors) {
  const words = parsed.words.map(w => w.star ? { star: compileStar(shape) } : Object.assign(compileWord(w, shape, parsed.source), { id: wordId(w) }))
  const starAt = words.findIndex(w => w.star)
  if (words.findIndex((w, i) => w.star && i > starAt) !== -1) {
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `template "${parsed.source}" uses * more than once (it already writes every field)`, { template: parsed.source })
  }
  if (words.some(w => w.extended) || (starAt !== -1 && vectors.size)) return { ...extendedCommand(words, starAt, shape, vectors), words, source: parsed.source }
  const fixed = words.filter(w => !w.star).length
  const head = Buffer.concat([Buffer.from(`*${fixed}\r\n`), bulkBytes(words[0].constant)])
  const name = bulkBytes(words[0].constant)
  const args = rec => {
    const out = []
    for (const w of words) {
      if (w.star) pushAll(out, w.star.pairs(rec))
      else out.push(w.value(rec))
    }
    return out
  }
  // One writer per kind of record (plain, CsvRow, JsonRow, ParquetRow), from its words' writers of that kind.
  const writers = kind => words.slice(1).map(w => w[kind])
  let rowWriter
  if (starAt === -1) {
    rowWriter = kind => {
      const ws = writers(kind)
      return (rec, w) => {
        w.bytes(head)
        for (let i = 0; i < ws.length; i++) ws[i](rec, w)
      }
    }
  } else {
    // The pair count is known only from the record (CSV rows have a fixed length; objects vary).
    const star = words[starAt].star
    Object.assign(words[starAt], { write: star.write, writeRow: star.writeRow, writeJson: star.writeJson, writeParquet: star.writeParquet })
    const counts = { write: star.count, writeRow: star.countRow, writeJson: star.countJson, writeParquet: star.countParquet }
    rowWriter = kind => {
      const ws = writers(kind)
      const count = counts[kind]
      return (rec, w) => {
        w.arrayHeader(fixed + count(rec))
        w.bytes(name)
        for (let i = 0; i < ws.length; i++) ws[i](rec, w)
      }
    }
  }
  const write = rowWriter('write')
  const writeRow = shape.columns !== undefined ? rowWriter('writeRow') : null
  // A dotted path has no JsonRow writer, a field that is no column no ParquetRow one: the record is made an object first.
  const viaObject = kind => words.some(w => !w[kind]) ? (row, w) => write(row.toObject(), w) : rowWriter(kind)
  const writeJson = shape.columns === undefined ? viaObject('writeJson') : null
  const writeParquet = shape.parquetColumns ? viaObject('writeParquet') : null
  return { args, write, writeRow, writeJson, writeParquet, key: words.length > 1 && !words[1].star ? words[1] : null, words, source: parsed.source }
}

/** out.push(...items) without spreading them as call arguments: `*` of 200k keys overflows the stack. */
function pushAll (out, items) {
  for (let i = 0; i < items.length; i++) out.push(items[i])
}

/** The same text for words that write the same argument (`u:{id}` in two templates). */
function wordId (word) {
  return JSON.stringify(word.parts.map(p => p.type === FIELD ? [p.name] : p.text))
}

/**
 * The argument positions (0 = the first after the name) of a command's keys, as
 * @ioredis/commands says; a command it does not know (a module's: JSON.SET, TS.ADD…) has its
 * first argument as its key, as lib/cluster-slots.js reads it.
 */
function keyIndexes (name, args) {
  const lower = String(name).toLowerCase()
  if (!knownCommand(lower)) return args.length ? [0] : []
  try {
    return getKeyIndexes(lower, args)
  } catch {
    return args.length ? [0] : []
  }
}

/**
 * ttlKeys 'all': the key words of every template (compiled commands), each once. Positions
 * come from the template's constant words ('' for a {field}); a key at or after `*` is refused.
 */
function templateKeyWords (commands) {
  const out = []
  const seen = new Set()
  for (const c of commands) {
    const name = c.words[0].constant
    const starAt = c.words.findIndex(w => w.star)
    const args = c.words.slice(1).map(w => w.constant ?? '')
    for (const i of keyIndexes(name, starAt === -1 ? args : args.slice(0, starAt - 1))) {
      const word = c.words[i + 1]
      // A spread before the key moves it by a count only the record knows.
      if (c.words.slice(1, i + 1).some(w => w.spread)) {
        throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `ttlKeys "all" cannot tell the keys of "${c.source}": a key comes after a spread {x[]}`, { template: c.source })
      }
      if (!word || word.star || word.spread) {
        throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `ttlKeys "all" cannot tell the keys of "${c.source}": a key comes after *`, { template: c.source })
      }
      const id = word.id
      if (seen.has(id)) continue
      seen.add(id)
      out.push(word)
    }
  }
  return out
}

/**
 * A command with {$…}, spread or vector words, or a `*` with --vector fields, built per
 * record from a plain record: `write(rec, w, ctx)` returns 1, or 0 when the command's spread
 * words all came out empty (nothing to add, so the command is skipped for that record).
 */
function extendedCommand (words, starAt, shape, vectors) {
  const pairs = starAt === -1 ? null : vectors.size ? vectorPairs(words[starAt].star, shape, vectors) : words[starAt].star.pairs
  const args = (rec, ctx) => {
    const out = []
    let spreads = 0
    let spread = 0
    for (const w of words) {
      if (w.star) pushAll(out, pairs(rec))
      else if (w.spread) {
        const a = w.value(rec, ctx)
        spreads++
        if (a.length) spread++
        for (const x of a) out.push(x)
      } else out.push(w.value(rec, ctx))
    }
    return spreads !== 0 && spread === 0 ? null : out
  }
  const write = (rec, w, ctx) => {
    const a = args(rec, ctx)
    if (a === null) return 0
    w.arrayHeader(a.length)
    for (let i = 0; i < a.length; i++) w.arg(a[i])
    return 1
  }
  return { extended: true, args, write, key: words.length > 1 && !words[1].star ? words[1] : null }
}

/** `*` pairs with the --vector fields' values as float bytes. */
function vectorPairs (star, shape, vectors) {
  return rec => {
    const out = star.pairs(rec)
    for (let i = 0; i < out.length; i += 2) {
      const v = vectors.get(out[i])
      if (v) out[i + 1] = vectorBytes(out[i + 1], out[i], v.type, v.dim)
    }
    return out
  }
}

/**
 * Build the mapper for the user's templates or map function:
 *   mapper.write(record, w, n, line) -> number of commands written into ByteWriter w (the hot
 *                                       path), or SKIP when map() returned null
 *   mapper.args(record, n, line)     -> [[cmd, arg, ...], ...] (dry-run text, tests), or SKIP
 * n is the record's number over the whole run and line its input line ({$n}, {$line}, map()'s ctx).
 * A record that cannot be mapped throws (FieldMissing for a missing field); the caller
 * rolls the writer back to where the record started.
 * @param {object} o { templates: string[], ttl?: number, map?: fn, shape: { columns?: string[]|null, file } }
 */
function createMapper ({ templates, ttl, ttlKeys = 'first', replace = false, map, shape, vectors }) {
  if (map) return mapFunctionMapper(map, { ttl, ttlKeys, replace, columns: shape && shape.columns, file: shape && shape.file, shard: Boolean(shape && shape.shard) })
  const vectorMap = new Map((vectors || []).map(v => [v.name, v]))
  const commands = templates.map(t => compileCommand(parseTemplate(t), shape, vectorMap))
  const first = commands[0]
  if (ttl != null) {
    const keys = ttlKeys === 'all' ? templateKeyWords(commands) : [firstKey(first, templates[0], '--ttl')]
    for (const key of keys) commands.push(keyCommand(['EXPIRE', key, String(ttl)]))
  }
  // --replace: the record's first key goes first, so what the record writes is all it holds.
  if (replace) commands.unshift(keyCommand(['DEL', firstKey(first, templates[0], '--replace')]))
  const n = commands.length
  if (commands.some(c => c.extended)) {
    // New word kinds: every command works on the plain record, with the record's context.
    return {
      args (rec, num, line) {
        const r = plain(rec)
        const ctx = { n: num, line }
        return commands.map(c => c.args(r, ctx)).filter(a => a !== null)
      },
      write (rec, w, num, line) {
        const r = plain(rec)
        const ctx = { n: num, line }
        let count = 0
        for (let i = 0; i < n; i++) {
          const c = commands[i]
          if (c.extended) count += c.write(r, w, ctx)
          else { c.write(r, w, ctx); count++ }
        }
        return count
      }
    }
  }
  return {
    args (rec) {
      const r = plain(rec)
      return commands.map(c => c.args(r))
    },
    write (rec, w) {
      if (rec instanceof CsvRow) {
        for (let i = 0; i < n; i++) commands[i].writeRow(rec, w)
      } else if (rec instanceof JsonRow) {
        for (let i = 0; i < n; i++) commands[i].writeJson(rec, w)
      } else if (rec instanceof ParquetRow) {
        for (let i = 0; i < n; i++) commands[i].writeParquet(rec, w)
      } else {
        for (let i = 0; i < n; i++) commands[i].write(rec, w)
      }
      return n
    }
  }
}

/** A fast-path record as the reader would otherwise give it: string array or object. */
function plain (rec) {
  if (rec instanceof CsvRow) return rec.toArray()
  if (rec instanceof JsonRow || rec instanceof ParquetRow) return rec.toObject()
  return rec
}

function firstKey (first, template, option) {
  if (!first.key) {
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `${option} needs a key as the first argument of "${template}"`, { template })
  }
  if (first.key.spread) {
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `${option} needs one key as the first argument of "${template}", not a spread`, { template })
  }
  return first.key
}

/** `[NAME, keyWord, ...constant texts]` (EXPIRE key ttl, DEL key) compiled like a template. */
function keyCommand ([name, key, ...rest]) {
  const head = Buffer.concat([Buffer.from(`*${2 + rest.length}\r\n`), bulkBytes(name)])
  const tail = Buffer.concat(rest.map(t => bulkBytes(t)))
  if (key.extended) {
    // A key with {$n}, {$line}, {$file}, {$} or a vector: built from the plain record and its context.
    return {
      extended: true,
      args: (rec, ctx) => [name, key.value(rec, ctx), ...rest],
      write (rec, w, ctx) {
        w.bytes(head)
        w.arg(key.value(rec, ctx))
        w.bytes(tail)
        return 1
      }
    }
  }
  return {
    args: rec => [name, key.value(rec), ...rest],
    write (rec, w) {
      w.bytes(head)
      key.write(rec, w)
      w.bytes(tail)
    },
    writeRow (row, w) {
      w.bytes(head)
      key.writeRow(row, w)
      w.bytes(tail)
    },
    writeJson (row, w) {
      if (!key.writeJson) return this.write(row.toObject(), w)
      w.bytes(head)
      key.writeJson(row, w)
      w.bytes(tail)
    },
    writeParquet (row, w) {
      if (!key.writeParquet) return this.write(row.toObject(), w)
      w.bytes(head)
      key.writeParquet(row, w)
      w.bytes(tail)
    }
  }
}

/**
 * map() gets a CSV row with a header as an object of column → text, as docs/templates.md's
 * `r.id` reads it (a bare array would make `r.id` undefined and every key `k:undefined`);
 * without a header, the array. fromEntries defines own properties, so a column named
 * `__proto__` is a field like any other.
 */
function recordForMap (columns) {
  if (!columns) return plain
  return rec => {
    const row = plain(rec)
    return Array.isArray(row) ? Object.fromEntries(columns.map((c, i) => [c, row[i]])) : row
  }
}

function mapFunctionMapper (map, { ttl, ttlKeys, replace, columns, file, shard }) {
  const toRecord = recordForMap(columns)
  // map(record, ctx): n is the record's number over the whole run (stable across --resume);
  // a shard does not know it, and reading ctx.n there fails the record with why.
  const context = shard
    ? (num, line) => ({ get n () { throw noRecordNumber("map()'s ctx.n") }, line, file })
    : (num, line) => ({ n: num, line, file })
  const args = (rec, num, line) => {
    const ctx = context(num, line)
    let cmds
    try {
      cmds = map(toRecord(rec), ctx)
    } catch (err) {
      throw new PipeloadError('PIPELOAD_RECORD_INVALID', `map() threw: ${err && err.message !== undefined ? err.message : String(err)}`)
    }
    if (cmds === null) return SKIP
    if (isThenable(cmds)) throw promiseRefused(cmds)
    if (!Array.isArray(cmds) || cmds.some(c => !Array.isArray(c) || c.length === 0)) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'map(record) must return an array of commands, each an array like ["SET", key, value], or null to skip the record')
    }
    const out = cmds.map(c => c.map((a, i) => toArg(a, `map()[${i}]`)))
    if ((ttl != null || replace) && out.length !== 0) { // no commands, no key to expire or delete
      if (out[0].length < 2) {
        const option = ttl != null ? '--ttl' : '--replace'
        throw new PipeloadError('PIPELOAD_RECORD_INVALID', `${option} needs a key as the first argument of map()'s first command, got only ${JSON.stringify(String(out[0][0]))}`)
      }
      const first = out[0][1]
      if (ttl != null) {
        const keys = ttlKeys === 'all' ? mapKeys(out) : [first]
        for (const k of keys) out.push(['EXPIRE', k, String(ttl)])
      }
      if (replace) out.unshift(['DEL', first])
    }
    return out
  }
  return {
    args,
    write (rec, w, num, line) {
      const cmds = args(rec, num, line)
      if (cmds === SKIP) return SKIP
      for (const c of cmds) {
        w.arrayHeader(c.length)
        for (let i = 0; i < c.length; i++) w.arg(c[i])
      }
      return cmds.length
    }
  }
}

/** Does `v` look like a Promise (anything with a then method)? */
function isThenable (v) {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function'
}

/**
 * map() returned a Promise: that record fails, as a map() that throws does. pipeload does not
 * await it: the encode loop writes each record's commands into the batch as it goes, and an
 * await per record would hold the whole pipeline (and Ctrl-C: a promise that never settles)
 * on map(). Its rejection is handled here, so it cannot end the host process as an
 * unhandled rejection.
 */
function promiseRefused (p) {
  try {
    p.then(undefined, () => {})
  } catch { /* a then that throws: nothing was started to handle */ }
  return new PipeloadError('PIPELOAD_RECORD_INVALID',
    'map() returned a Promise, which pipeload does not wait for: return the commands themselves (an array of commands, or null to skip the record); fetch what map() needs before the load')
}

/** ttlKeys 'all' for map(): every key of every command, each once (Buffers by their bytes). */
function mapKeys (cmds) {
  const seen = new Set()
  const out = []
  for (const c of cmds) {
    for (const i of keyIndexes(c[0], c.slice(1))) {
      const k = c[i + 1]
      if (k === undefined) continue
      const id = typeof k === 'string' ? 's' + k : 'b' + k.toString('latin1')
      if (seen.has(id)) continue
      seen.add(id)
      out.push(k)
    }
  }
  return out
}

/** What map() returning null gives: the record is skipped (counted, not failed, nothing sent). */
const SKIP = Symbol('skip')

/** The mapper load()'s options `o` ask for (`map` does not cross into worker threads: templates there). */
function mapperFor (o, shape) {
  return createMapper({ templates: o.templates, map: o.map, ttl: o.ttl, ttlKeys: o.ttlKeys, replace: o.replace, vectors: o.vectors, shape })
}

module.exports = { createMapper, mapperFor, FieldMissing, toArg, vectorBytes, SKIP }
