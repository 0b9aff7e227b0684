'use strict'

// Numbers as written. pipeload writes text, so a JSON number's digits are its value: `1.10`,
// `1e3`, `-0` and `12345678901234567890` must reach Redis as those characters, not as
// String(JSON.parse(text)) ("1.1", "1000", "0", "12345678901234567000").
//
// A number whose text a JS number gives back unchanged stays a JS number (nearly all of them:
// the byte fast path of json/row.js takes only those). Any other becomes a JsonNumber, which
// keeps the text: written as that text, arithmetic through valueOf (rounded to a double, as
// JSON.parse would have), JSON text through exactJson.
//
// Finding them costs one regex test per record text: INEXACT matches where a number token
// (after `[`, `,`, `:` or at the start) could be one that does not survive a double; a match
// inside a string only sends that record through parseExact, which checks each number.

class JsonNumber {
  constructor (text) {
    this.text = text
  }

  valueOf () {
    return Number(this.text)
  }

  toString () {
    return this.text
  }

  // JSON.stringify cannot write raw text on Node 20 (no JSON.rawJSON): it writes the double,
  // and counts the call so that jsonText can tell a value holding JsonNumbers and write it again.
  toJSON () {
    stringified++
    return Number(this.text)
  }
}

let stringified = 0

// After an optional '-': 16 or more digits and dots, an exponent, a fraction ending in 0,
// below 1e-6 (JS prints an exponent); or -0. A number none of these match has at most 15
// significant digits, no trailing zero and no exponent: String(Number(t)) === t.
const SHAPE = String.raw`(?:-0(?![.\deE])|-?(?:\d[\d.]{15}|\d[\d.]*[eE]|\d+\.\d*0(?!\d)|0\.0{6}))`
// A number is a value: after '[', ',' or ':', or the whole text. (Two regexes: an
// alternative `^|[:,[]` makes the test ~1.6x slower.)
const INEXACT = new RegExp(String.raw`[:,[][ \t\n\r]*` + SHAPE)
const INEXACT_TOP = new RegExp(String.raw`^[ \t\n\r]*` + SHAPE)

/** May the JSON text hold a number that a JS number would change? (false: certainly not) */
function mayHoldInexact (text) {
  return INEXACT.test(text) || INEXACT_TOP.test(text)
}

/** The number token's value: a JS number where it gives the same text, else a JsonNumber. */
function numberOf (text) {
  const n = Number(text)
  return String(n) === text ? n : new JsonNumber(text)
}

/**
 * JSON.parse(text) with every number that a JS number would change kept as a JsonNumber.
 * `text` is valid JSON (JSON.parse has read it) nested at most MAX_DEPTH levels deep; objects
 * are built as JSON.parse builds them (a repeated key keeps the last value at the first one's
 * place, `__proto__` an own property).
 */
function parseExact (text) {
  return readValue({ text, i: 0 })
}

const SPACE = /[ \t\n\r]*/y
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y

function skip (p) {
  SPACE.lastIndex = p.i
  SPACE.test(p.text)
  p.i = SPACE.lastIndex
}

function readValue (p) {
  skip(p)
  const c = p.text.charCodeAt(p.i)
  if (c === 0x7b) return readObject(p)
  if (c === 0x5b) return readArray(p)
  if (c === 0x22) return readString(p)
  if (c === 0x74) { p.i += 4; return true }
  if (c === 0x66) { p.i += 5; return false }
  if (c === 0x6e) { p.i += 4; return null }
  NUMBER.lastIndex = p.i
  const m = NUMBER.exec(p.text)
  p.i = NUMBER.lastIndex
  return numberOf(m[0])
}

function readString (p) {
  const text = p.text
  const start = p.i
  let escaped = false
  let i = start + 1
  for (let c = text.charCodeAt(i); c !== 0x22; c = text.charCodeAt(++i)) {
    if (c === 0x5c) { i++; escaped = true }
  }
  p.i = i + 1
  return escaped ? JSON.parse(text.slice(start, i + 1)) : text.slice(start + 1, i)
}

function readArray (p) {
  const out = []
  p.i++
  skip(p)
  if (p.text.charCodeAt(p.i) === 0x5d) { p.i++; return out }
  for (;;) {
    out.push(readValue(p))
    skip(p)
    if (p.text.charCodeAt(p.i++) === 0x5d) return out // else ','
  }
}

function readObject (p) {
  const out = {}
  p.i++
  skip(p)
  if (p.text.charCodeAt(p.i) === 0x7d) { p.i++; return out }
  for (;;) {
    skip(p)
    const key = readString(p)
    skip(p)
    p.i++ // ':'
    const value = readValue(p)
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
    else out[key] = value
    skip(p)
    if (p.text.charCodeAt(p.i++) === 0x7d) return out // else ','
  }
}

/** JSON.parse(text), numbers as written. */
function parseJson (text) {
  const value = JSON.parse(text)
  return mayHoldInexact(text) ? parseExact(text) : value
}

/**
 * JSON.stringify(value), with JsonNumbers written as their text. Returns undefined where
 * JSON.stringify does (a function, a symbol); throws what it throws.
 */
function exactJson (value) {
  const before = stringified
  const text = JSON.stringify(value)
  return stringified === before ? text : writeExact(value, '')
}

/** JSON.stringify's walk (toJSON, skipped members, null for holes), JsonNumbers as text. */
function writeExact (v, key) {
  if (v instanceof JsonNumber) return v.text
  if (v !== null && typeof v === 'object' && typeof v.toJSON === 'function') v = v.toJSON(key)
  if (v === null || typeof v !== 'object') return JSON.stringify(v)
  if (v instanceof JsonNumber) return v.text
  if (Array.isArray(v)) {
    const parts = new Array(v.length)
    for (let i = 0; i < v.length; i++) parts[i] = writeExact(v[i], String(i)) ?? 'null'
    return `[${parts.join(',')}]`
  }
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return JSON.stringify(v)
  const parts = []
  for (const k of Object.keys(v)) {
    const s = writeExact(v[k], k)
    if (s !== undefined) parts.push(`${JSON.stringify(k)}:${s}`)
  }
  return `{${parts.join(',')}}`
}

module.exports = { JsonNumber, mayHoldInexact, parseExact, parseJson, exactJson, numberOf }
