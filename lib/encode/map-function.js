'use strict'

const { PipeloadError } = require('../errors')
const { toArg } = require('./values')
const { noRecordNumber } = require('./fields')
const { mapKeyCommands } = require('./ttl-replace')

// The mapper for a map(record, ctx) function instead of templates (mapper.js): it gets the
// record and its context and returns the record's commands, or null to skip the record.

/** What map() returning null gives: the record is skipped (counted, not failed, nothing sent). */
const SKIP = Symbol('skip')

/**
 * map() gets a CSV row with a header as an object of column → text, as docs/templates.md's
 * `r.id` reads it (a bare array would make `r.id` undefined and every key `k:undefined`);
 * without a header, the array. fromEntries defines own properties, so a column named
 * `__proto__` is a field like any other. `plain`: the input's record as plain data (fields.js plainFor).
 */
function recordForMap (columns, plain) {
  if (!columns) return plain
  return rec => {
    const row = plain(rec)
    return Array.isArray(row) ? Object.fromEntries(columns.map((c, i) => [c, row[i]])) : row
  }
}

function mapFunctionMapper (map, { ttl, ttlKeys, replace, columns, file, shard, plain }) {
  const toRecord = recordForMap(columns, plain)
  const keyCommands = mapKeyCommands({ ttl, ttlKeys, replace })
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
    const wrong = notCommands(cmds)
    if (wrong) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `map(record) must return an array of commands, each an array like ["SET", key, value], or null to skip the record; it returned ${wrong}`)
    }
    const out = cmds.map(c => c.map((a, i) => toArg(a, `map()[${i}]`)))
    if (keyCommands !== null && out.length !== 0) keyCommands(out) // no commands, no key to expire or delete
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

/**
 * What is wrong with map()'s return value, in words (null when it is an array of non-empty
 * arrays). undefined is named as such: a function that forgot to return on some path.
 */
function notCommands (v) {
  if (v === undefined) return 'undefined (a path without a return statement?)'
  if (!Array.isArray(v)) return shown(v)
  const i = v.findIndex(c => !Array.isArray(c) || c.length === 0)
  return i === -1 ? null : `an array whose element [${i}] is ${shown(v[i])}`
}

/** A value as a message names it: its text for a short primitive, else its kind. */
function shown (v) {
  if (v === undefined) return 'undefined'
  if (Array.isArray(v)) return v.length === 0 ? 'an empty array' : 'an array'
  if (typeof v === 'string') return v.length <= 40 ? JSON.stringify(v) : 'a string'
  if (typeof v === 'object' && v !== null) return 'an object'
  if (typeof v === 'function') return 'a function'
  return String(v)
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

module.exports = { mapFunctionMapper, SKIP }
