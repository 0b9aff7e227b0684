'use strict'

const { bulkBytes } = require('./writer')
const { FieldMissing, toArg, writeValue, vectorBytes } = require('./values')
const { keysOf } = require('../read/row')

// A template's `*` (mapper.js) over a plain record (read/row.js): every field as name/value
// pairs, with the count the command's array header needs first; a byte row's `*` is its
// RowKind's.

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

module.exports = { compileStar, vectorPairs }
