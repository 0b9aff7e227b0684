'use strict'

// What the JSON.parse path (NDJSON lines that are not flat, JSON document elements) needs
// besides JSON.parse itself, so that a record reads the same as on the byte-range fast path:
//
// - Key order. A JS object lists integer-like keys ("2", "10") first, whatever their place
//   in the text; `*` must write pairs in input order. Only an object whose first key is
//   integer-like can have been reordered, so only its text is scanned again for the order,
//   which is kept under the KEY_ORDER symbol (symbol keys are invisible to for-in,
//   Object.keys and JSON.stringify). Measured on 300k NDJSON lines (--dry-run resp, 2-core
//   box): lines without integer-like keys 1.30 s -> 1.33 s; lines with them 1.05 s -> 1.41 s.
// - Depth. JSON.parse copes with any nesting, but writing a value back as JSON text (a
//   nested value in `*` or a {field}) recurses; deeper records are refused by the reader.
// - Numbers as written (json-number.js): a number whose text a JS number would change is
//   kept as a JsonNumber, read by a second, exact parse of the few texts that may hold one.
// - Lone surrogates. A `\ud800` escape without its pair parses to a string that has no UTF-8
//   form: written out it would silently become U+FFFD. Such a record is refused.

const { mayHoldInexact, parseExact } = require('../json-number')
const { KEY_ORDER, MAX_DEPTH, INDEX } = require('../row')
const { describeLoneSurrogate } = require('../utf8')

// A \uD800-\uDFFF escape: only text with one can hold a lone surrogate.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/

/** Does the object's (own, enumerable) key order start with an integer-like key? */
function startsWithIndex (obj) {
  for (const k in obj) return INDEX.test(k)
  return false
}

/**
 * Parse one record's JSON text into `{ value }`, or `{ refused }` with the reason it is
 * refused. Throws JSON.parse's SyntaxError for text that is not JSON. `depthKnown`: the
 * caller has checked the depth already (the JSON document scanner counts it).
 */
function parseRecord (text, depthKnown = false) {
  // Under MAX_DEPTH characters the text cannot nest deeper: most lines skip the scan.
  if (!depthKnown && text.length > MAX_DEPTH && tooDeep(text)) return { refused: `a value nested more than ${MAX_DEPTH} levels deep` }
  let value = JSON.parse(text) // validates, with JSON.parse's messages
  if (mayHoldInexact(text)) value = parseExact(text)
  if (text.includes('\\u') && SURROGATE_ESCAPE.test(text)) {
    const bad = loneSurrogate(value)
    if (bad !== null) return { refused: bad }
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && startsWithIndex(value)) {
    value[KEY_ORDER] = topLevelKeys(text)
  }
  return { value }
}

/** Is any point of the text nested deeper than MAX_DEPTH (brackets outside strings)? */
function tooDeep (text) {
  let depth = 0
  let inStr = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inStr) {
      if (c === 0x5c) i++ // the escaped character
      else if (c === 0x22) inStr = false
    } else if (c === 0x22) inStr = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_DEPTH) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/**
 * Why a string or key in the value cannot be written (it holds a lone surrogate), or null.
 * Iterative: the value may be 1000 levels deep.
 */
function loneSurrogate (root) {
  const stack = [root]
  while (stack.length !== 0) {
    const v = stack.pop()
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return found('a string value', v)
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (!k.isWellFormed()) return found(`key ${JSON.stringify(k)}`, k)
        stack.push(v[k])
      }
    }
  }
  return null
}

function found (what, s) {
  return `${what} holds ${describeLoneSurrogate(s)}, which has no UTF-8 form (it would be stored as U+FFFD)`
}

/**
 * The keys of the top-level object in `text`, in order of first appearance (where
 * JSON.parse puts a repeated key). `text` is known to be valid JSON with an object at the top.
 */
function topLevelKeys (text) {
  const keys = []
  const n = text.length
  let i = text.indexOf('{') + 1
  let repeated = false
  for (;;) {
    let c = text.charCodeAt(i)
    while (c !== 0x22 && c !== 0x7d) c = text.charCodeAt(++i) // whitespace or ',' before a key
    if (c === 0x7d) break
    const start = i + 1
    let escaped = false
    for (c = text.charCodeAt(++i); c !== 0x22; c = text.charCodeAt(++i)) {
      if (c === 0x5c) { i++; escaped = true }
    }
    const key = escaped ? JSON.parse(text.slice(start - 1, i + 1)) : text.slice(start, i)
    if (!repeated && keys.length < 64 && keys.includes(key)) repeated = true
    keys.push(key)
    i = skipValue(text, text.indexOf(':', i + 1) + 1)
    if (i >= n) break
  }
  // Object.keys of the same object would say it too, but costs an array per record.
  return repeated || keys.length >= 64 ? [...new Set(keys)] : keys
}

/** The index just past the value that starts at or after i (whitespace first). */
function skipValue (text, i) {
  const n = text.length
  let c = text.charCodeAt(i)
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++i)
  if (c === 0x22) return stringEnd(text, i + 1) + 1
  if (c !== 0x7b && c !== 0x5b) { // a number or literal: up to ',' or the object's '}'
    while (i < n && c !== 0x2c && c !== 0x7d) c = text.charCodeAt(++i)
    return i
  }
  let depth = 0
  for (; i < n; i++) {
    c = text.charCodeAt(i)
    if (c === 0x22) i = stringEnd(text, i + 1)
    else if (c === 0x7b || c === 0x5b) depth++
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1
  }
  return i
}

/** The index of the quote that closes the string whose contents start at i. */
function stringEnd (text, i) {
  for (let c = text.charCodeAt(i); c !== 0x22; c = text.charCodeAt(++i)) {
    if (c === 0x5c) i++
    if (i >= text.length) return i
  }
  return i
}

module.exports = { parseRecord, startsWithIndex }
