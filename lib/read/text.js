'use strict'

const { constants } = require('node:buffer')
const { PipeloadError, where } = require('../errors')

// A record's bytes as a JS string. V8 holds at most MAX_STRING_LENGTH UTF-16 units (~512 MiB
// on 64-bit); a record over it (with --max-record-size above that) made Buffer#toString
// throw ERR_STRING_TOO_LONG out of a reader: an internal error (exit 70), whatever --on-error
// said. textOf gives null instead, and the reader fails that record like any other.

// The most UTF-16 units a string may have. Lowered by tests to reach this path without
// allocating 512 MiB: a string longer than it is taken as V8 refusing it.
const limit = { chars: constants.MAX_STRING_LENGTH }

/** buf[start, end) decoded as UTF-8, or null when it is longer than a string can be. */
function textOf (buf, start = 0, end = buf.length) {
  let s
  try {
    s = buf.toString('utf8', start, end)
  } catch (err) {
    if (err && err.code === 'ERR_STRING_TOO_LONG') return null
    throw err
  }
  return s.length > limit.chars ? null : s
}

/** Is `err` V8 refusing a string (thrown by code we do not own, such as csv-parse's)? */
function isStringTooLong (err) {
  return Boolean(err) && err.code === 'ERR_STRING_TOO_LONG'
}

/** The record failure for a record, at `at` ({ file, line, offset }), whose text cannot be a string. */
function stringTooLong (at, what, bytes) {
  const { file, line, offset } = at
  return new PipeloadError('PIPELOAD_RECORD_TOO_LARGE',
    `${where(file, line)}: ${what}${bytes != null ? ` of ${bytes} bytes` : ''} is longer than a JavaScript string can be (${limit.chars} characters, V8's limit), whatever --max-record-size allows`,
    { file, line, offset })
}

module.exports = { textOf, isStringTooLong, stringTooLong, limit }
