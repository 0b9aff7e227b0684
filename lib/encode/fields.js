'use strict'

const { PipeloadError } = require('../errors')
const { FieldMissing, toArg, jsonText, spreadArgs, vectorBytes } = require('./values')
const { INDEX, MEMBER_KEY } = require('../read/row')
const { rowKindOf } = require('../read/formats')

// A template's {field} parts as getters on a plain record (mapper.js, read/row.js): by column
// for a tabular row (an array), by key or dotted path for an object, and the parts with another reading:
// {$n}, {$line}, {$file}, {$}, {$key}, spreads {x[]} and vectors {x:f32}. A column the
// input lacks is refused once, when the template is compiled.
// Fields are own properties only: `{constructor}` or `{toString}` of a record without such a
// key is missing, not the value an object inherits.

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

/** A getter for one field: by column index for tabular rows (arrays), by (dotted) path for objects. */
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
  const idx = rowKindOf(shape).columnIndex(name, shape, template) // refuses a name that is no column
  return rec => rec[idx]
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

/** {$}: the record as compact JSON; a tabular row with a header as an object of column → text. */
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

/**
 * The plain record (read/row.js) of any record an input of this shape gives: a byte row made
 * plain by its RowKind, a plain record as it is.
 */
function plainFor (shape) {
  const Row = rowKindOf(shape).Row
  return rec => rec instanceof Row ? rec.toPlain() : rec
}

module.exports = { fieldGetter, altGetter, noRecordNumber, plainFor }
