'use strict'

const { types } = require('node:util')
const { PipeloadError } = require('../errors')
const { JsonNumber, exactJson, parseJson } = require('../read/json-number')
const { FieldMissing } = require('../read/row') // a field the record lacks

// A record's values as command arguments (mapper.js): text as it is, numbers and booleans
// as their text, nested values as JSON text with numbers as written, binary values as their
// bytes; spread {x[]} and vector {x:f32} values as the arguments and bytes they stand for.
// A missing or null value throws a FieldMissing, which the loader turns into a failed
// record with its position; it never becomes an empty string.


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

module.exports = { FieldMissing, binaryOf, toArg, jsonText, writeValue, spreadArgs, vectorBytes }
