'use strict'

const { isUtf8 } = require('node:buffer')
const { JsonNumber } = require('../json-number')
const { invalidAt } = require('../utf8')
const { ROW_GROUP } = require('../row') // a record's row group, kept there for the encoder: a CSV run loads no Parquet module

// Parquet values as the record values the mapper writes, one rule per physical and logical
// type (docs/parquet.md has the table). Nothing is rounded: hyparquet's own conversions are
// switched off for every leaf but strings (see strippedSchema in reader.js), so the values
// arrive here as the file stores them (INT64 as BigInt, DECIMAL as its unscaled integer,
// timestamps as counts of their unit) and are turned into text here.
//
// A value is a JS number where its text is String(number) (int32, doubles, float32 as the
// double of its shortest text), a JsonNumber where the text is no JS number's (64-bit integers
// past 2^53, decimals, -0): written as its text, as a number in {$}; a string for text types,
// a Buffer for bytes, a boolean, null for null. Columns are converted a whole row group's
// column at a time (convertColumn); nested values (structs, lists) element by element.

const DAY = 86400

/**
 * obj[key] = value as an own property: `__proto__` too, which assigned would set the object's
 * prototype instead (a column or struct field named so became `{}`, or vanished).
 */
function setField (obj, key, value) {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
  else obj[key] = value
}

/** The shortest decimal text whose float32 is `x`, as the double that prints it; -0 as "-0". */
function float32Value (x) {
  if (x === 0) return Object.is(x, -0) ? NEGATIVE_ZERO : 0
  if (!Number.isFinite(x)) return x
  // The shortest precision that reads back: p digits reading back means p + 1 do too.
  let lo = 1
  let hi = 9
  while (lo < hi) {
    const p = (lo + hi) >> 1
    if (Math.fround(Number(x.toPrecision(p))) === x) hi = p
    else lo = p + 1
  }
  return Number(lo < 9 && isTie(x, lo) ? evenOf(x, lo) : x.toPrecision(lo))
}

/** Is x exactly halfway between two decimals of p significant digits (it has p + 1, the last a 5)? */
function isTie (x, p) {
  const longer = x.toExponential(p)
  return longer.split('e')[0].endsWith('5') && Number(longer) === x
}

/**
 * Of the two p-digit decimals x lies halfway between, the one with an even last digit (as JS
 * prints doubles), where it reads back; toPrecision rounds a tie away from zero.
 */
function evenOf (x, p) {
  const [mantissa, exp] = x.toExponential(p - 1).split('e')
  const m = BigInt(mantissa.replace('.', ''))
  if (m % 2n === 0n) return `${m}e${Number(exp) - (p - 1)}`
  const other = `${m > 0n ? m - 1n : m + 1n}e${Number(exp) - (p - 1)}`
  return Math.fround(Number(other)) === x ? other : x.toPrecision(p)
}

const NEGATIVE_ZERO = new JsonNumber('-0')

function doubleValue (x) {
  return x === 0 && Object.is(x, -0) ? NEGATIVE_ZERO : x
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** A 64-bit integer: a JS number when it is one exactly, else its digits. */
function int64Value (v) {
  return v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : new JsonNumber(v.toString())
}

/** Big-endian two's complement bytes (DECIMAL in FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY) as a BigInt. */
function bytesToBigInt (bytes) {
  if (bytes.length === 0) return 0n
  let v = 0n
  for (let i = 0; i < bytes.length; i++) v = (v << 8n) | BigInt(bytes[i])
  return bytes[0] & 0x80 ? v - (1n << BigInt(bytes.length * 8)) : v
}

/** An unscaled decimal integer with `scale` digits after the point, as its text: -5, 2 → "-0.05". */
function decimalText (unscaled, scale) {
  let digits = unscaled.toString()
  if (scale <= 0) return scale === 0 || digits === '0' ? digits : digits + '0'.repeat(-scale)
  const negative = digits[0] === '-'
  if (negative) digits = digits.slice(1)
  if (digits.length <= scale) digits = '0'.repeat(scale - digits.length + 1) + digits
  const point = digits.length - scale
  return (negative ? '-' : '') + digits.slice(0, point) + '.' + digits.slice(point)
}

function pad (n, width) {
  const s = String(n)
  return s.length >= width ? s : '0'.repeat(width - s.length) + s
}

/** Days since 1970-01-01 as YYYY-MM-DD (proleptic Gregorian; years past 9999 or before 0 as ±YYYYYY). */
function dateText (days) {
  // Howard Hinnant's civil_from_days.
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0)
  const year = y >= 0 && y <= 9999 ? pad(y, 4) : (y < 0 ? '-' : '+') + pad(Math.abs(y), 6)
  return `${year}-${pad(m, 2)}-${pad(d, 2)}`
}

/** Seconds since midnight and a fraction of `digits` digits as HH:MM:SS[.fff…]. */
function clockText (secs, frac, digits) {
  const h = Math.floor(secs / 3600)
  const m = Math.floor(secs / 60) % 60
  const s = secs % 60
  const base = `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}`
  return digits === 0 ? base : base + '.' + pad(frac, digits)
}

const UNITS = Object.freeze({ MILLIS: 1000, MICROS: 1000000, NANOS: 1000000000 })
const DIGITS = Object.freeze({ MILLIS: 3, MICROS: 6, NANOS: 9 })

/** A count of `unit`s into whole seconds (floored) and the units past them. */
function splitUnits (v, perSecond) {
  const n = Number(v)
  if (Number.isSafeInteger(n)) {
    const secs = Math.floor(n / perSecond)
    return [secs, n - secs * perSecond]
  }
  const big = BigInt(v)
  const per = BigInt(perSecond)
  let secs = big / per
  let frac = big - secs * per
  if (frac < 0n) { secs -= 1n; frac += per }
  return [Number(secs), Number(frac)]
}

/** A timestamp as ISO 8601 with the unit's digits; `Z` for an instant (adjusted to UTC). */
function timestampText (v, unit, utc) {
  const [secs, frac] = splitUnits(v, UNITS[unit])
  const days = Math.floor(secs / DAY)
  return `${dateText(days)}T${clockText(secs - days * DAY, frac, DIGITS[unit])}${utc ? 'Z' : ''}`
}

function timeText (v, unit, utc) {
  const [secs, frac] = splitUnits(v, UNITS[unit])
  return clockText(secs, frac, DIGITS[unit]) + (utc ? 'Z' : '')
}

/**
 * INT96 (legacy Impala/Spark timestamps, instants): hyparquet gives nanoseconds since the
 * epoch (its timestampFromNanoseconds parser is the identity here, see RAW_PARSERS).
 */
function int96Text (nanos) {
  return timestampText(nanos, 'NANOS', true)
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

function uuidText (b) {
  let s = ''
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-'
    s += HEX[b[i]]
  }
  return s
}

/** INTERVAL (months, days, milliseconds, each a little-endian uint32) as an ISO 8601 duration. */
function intervalText (b) {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const months = view.getUint32(0, true)
  const days = view.getUint32(4, true)
  const ms = view.getUint32(8, true)
  const secs = ms % 1000 === 0 ? String(ms / 1000) : decimalText(BigInt(ms), 3).replace(/0+$/, '')
  return `P${months}M${days}DT${secs}S`
}

function bufferOf (b) {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength)
}

const utf8 = new TextDecoder()

/**
 * A string column's stored bytes as text: refused where they are not UTF-8, which a
 * TextDecoder would turn into U+FFFD, and Redis would store so (docs/errors.md: invalid
 * UTF-8 is refused, in every format).
 */
function utf8Text (bytes) {
  if (!isUtf8(bytes)) throw notUtf8(bytes)
  return utf8.decode(bytes)
}

/** The error for a string value that is not UTF-8: where in the value, and what to do. */
function notUtf8 (bytes) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const at = invalidAt(b, b.length)[0] ?? 0
  return new Error(`a string value is not UTF-8 (its byte ${at + 1} of ${b.length} is 0x${b[at].toString(16).padStart(2, '0')}), which Redis would get as U+FFFD: write the column as UTF-8, or as bytes (BYTE_ARRAY without a STRING type), which are sent as they are`)
}

/**
 * The rule a leaf's stored values follow, from its original schema element (physical type,
 * converted and logical type): `{ rule, … }` with the rule's parameters. leafValue makes the
 * rule's function; the Parquet text rows (text.js) write the common rules' text
 * straight from the page.
 */
function leafRule (element) {
  const { type, converted_type: ctype } = element
  const ltype = element.logical_type || {}
  if (ctype === 'DECIMAL' || ltype.type === 'DECIMAL') {
    const scale = element.scale ?? ltype.scale ?? 0
    return { rule: type === 'INT32' || type === 'INT64' ? 'decimal-int' : 'decimal-bytes', scale }
  }
  if (ctype === 'DATE' || ltype.type === 'DATE') return { rule: 'date' }
  if (ltype.type === 'TIMESTAMP') return { rule: 'timestamp', unit: ltype.unit, utc: ltype.isAdjustedToUTC }
  // The converted types alone: instants in UTC, as the format says.
  if (ctype === 'TIMESTAMP_MILLIS') return { rule: 'timestamp', unit: 'MILLIS', utc: true }
  if (ctype === 'TIMESTAMP_MICROS') return { rule: 'timestamp', unit: 'MICROS', utc: true }
  if (ltype.type === 'TIME') return { rule: 'time', unit: ltype.unit, utc: ltype.isAdjustedToUTC }
  if (ctype === 'TIME_MILLIS') return { rule: 'time', unit: 'MILLIS', utc: true }
  if (ctype === 'TIME_MICROS') return { rule: 'time', unit: 'MICROS', utc: true }
  if (ltype.type === 'UUID') return { rule: 'uuid' }
  if (ctype === 'INTERVAL') return { rule: 'interval' }
  if (ctype === 'JSON' || ltype.type === 'JSON' || ctype === 'ENUM' || ltype.type === 'ENUM') return { rule: 'text' }
  if (ctype === 'UTF8' || ltype.type === 'STRING') return { rule: 'string' }
  if (ltype.type === 'FLOAT16') return { rule: 'double' } // hyparquet's number is the half's exact value
  switch (type) {
    case 'BOOLEAN': return { rule: 'boolean' }
    case 'INT32':
      if (ctype === 'UINT_32' || (ltype.type === 'INTEGER' && ltype.bitWidth === 32 && !ltype.isSigned)) return { rule: 'uint32' }
      return { rule: 'int32' }
    case 'INT64':
      if (ctype === 'UINT_64' || (ltype.type === 'INTEGER' && !ltype.isSigned)) return { rule: 'uint64' }
      return { rule: 'int64' }
    case 'INT96': return { rule: 'int96' }
    case 'FLOAT': return { rule: 'float' }
    case 'DOUBLE': return { rule: 'double' }
    default: return { rule: 'bytes' } // BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY: bytes as they are
  }
}

const identity = v => v

/** Each rule's function of one stored value (not null) to its record value. */
const RULES = Object.freeze({
  'decimal-int': ({ scale }) => v => new JsonNumber(decimalText(BigInt(v), scale)),
  'decimal-bytes': ({ scale }) => v => new JsonNumber(decimalText(bytesToBigInt(v), scale)),
  date: () => dateText,
  timestamp: ({ unit, utc }) => v => timestampText(v, unit, utc),
  time: ({ unit, utc }) => v => timeText(v, unit, utc),
  uuid: () => uuidText,
  interval: () => intervalText,
  text: () => utf8Text,
  string: () => identity, // decoded by hyparquet, a dictionary's once
  boolean: () => identity,
  int32: () => identity,
  uint32: () => v => v >>> 0,
  int64: () => int64Value,
  uint64: () => v => int64Value(BigInt.asUintN(64, v)),
  int96: () => int96Text,
  float: () => float32Value,
  double: () => doubleValue,
  bytes: () => bufferOf
})

/** The function turning one stored value of a leaf into its record value (leafRule's rule). null stays null. */
function leafValue (element) {
  const r = leafRule(element)
  return RULES[r.rule](r)
}

/** The schema elements' annotations hyparquet must keep: strings, which it decodes (a dictionary once). */
function keepsAnnotation (element) {
  const l = element.logical_type
  return element.converted_type === 'UTF8' || (l && l.type === 'STRING') || (l && l.type === 'FLOAT16')
}

/**
 * The function turning a top-level column's assembled value into its record value, from its
 * schema tree node (hyparquet's parquetSchema): a leaf, a list (an array), a map (an object,
 * as hyparquet assembles it) or a struct (an object of its fields). `nested`: a leaf within a
 * list or struct, where hyparquet's assembly leaves undefined for a value its page does not
 * hold (a dictionary index past the dictionary: it looks the index up unchecked), refused
 * here rather than sent as null.
 */
function nodeValue (node, nested = false) {
  if (node.children.length === 0) {
    const leaf = leafValue(node.element)
    if (nested) return v => v === undefined ? noValue() : v === null ? null : leaf(v)
    return v => v == null ? null : leaf(v)
  }
  const ctype = node.element.converted_type
  const ltype = node.element.logical_type && node.element.logical_type.type
  if (ctype === 'LIST' || ltype === 'LIST') {
    const item = nodeValue(listElement(node), true)
    return v => v == null ? null : v.map(item)
  }
  if (ctype === 'MAP' || ctype === 'MAP_KEY_VALUE' || ltype === 'MAP') {
    const entry = node.children[0]
    const value = entry.children.length > 1 ? nodeValue(entry.children[1]) : v => v
    return v => {
      if (v == null) return null
      const out = {}
      for (const k of Object.keys(v)) setField(out, k, value(v[k]))
      return out
    }
  }
  // hyparquet assembles a struct field under its name, but `__proto__` under STRUCT_PROTO (strippedMetadata).
  const fields = node.children.map(c => [c.element.name, c.element.name === '__proto__' ? STRUCT_PROTO : c.element.name, nodeValue(c, true)])
  return v => {
    if (v == null) return null
    const out = {}
    for (const [name, stored, value] of fields) setField(out, name, value(v[stored]))
    return out
  }
}

function noValue () {
  throw new Error('a value its page does not hold (a dictionary index past the dictionary, or fewer values than its levels say)')
}

/**
 * A LIST's element node: list.element in the standard 3-level layout; in the older 2-level
 * ones, the repeated field itself (a leaf, or a group named "array" or "<name>_tuple", or of
 * several fields: a struct).
 */
function listElement (node) {
  const repeated = node.children[0]
  const legacy = repeated.children.length !== 1 || repeated.element.name === 'array' || repeated.element.name === `${node.element.name}_tuple`
  return legacy ? repeated : repeated.children[0]
}

/** A column's values (a row group's, as hyparquet gives them) converted into a new array. */
function convertColumn (data, value) {
  const n = data.length
  const out = new Array(n)
  for (let i = 0; i < n; i++) out[i] = value(data[i])
  return out
}

/**
 * The name a struct field named `__proto__` is read under (hyparquet would assign it, setting
 * the prototype of its struct): one no writer gives (a NUL first).
 */
const STRUCT_PROTO = '\u0000__proto__'

module.exports = {
  ROW_GROUP,
  STRUCT_PROTO,
  setField,
  utf8Text,
  notUtf8,
  leafRule,
  leafValue,
  int64Value,
  doubleValue,
  NEGATIVE_ZERO,
  nodeValue,
  keepsAnnotation,
  convertColumn,
  float32Value,
  decimalText,
  dateText,
  timestampText,
  timeText,
  int96Text,
  bytesToBigInt
}
