'use strict'

// Errors across threads. postMessage clones an Error as a plain Error: its class and its
// own properties (code, file, line) are lost, and the loader would report a user's error
// (a bad record, a bad template) as an internal one. A worker sends the fields; the
// loader makes a PipeloadError of them again.

const { PipeloadError } = require('../errors')

/** What of an error crosses to the loader. */
function serializeError (err) {
  return { name: err.name, code: err.code, message: err.message, file: err.file, line: err.line, offset: err.offset, compressedOffset: err.compressedOffset, rowGroup: err.rowGroup, column: err.column, raw: err.raw, stack: err.stack }
}

/** The loader's error for a worker's serialized one (or a worker's 'error' event). */
function reviveError (e) {
  if (typeof e.code === 'string' && e.code.startsWith('PIPELOAD_')) {
    const context = { file: e.file, line: e.line, offset: e.offset, raw: e.raw }
    // A gzip error names its compressed offset in the message: keep the property too.
    if (e.compressedOffset !== undefined) context.compressedOffset = e.compressedOffset
    if (e.rowGroup !== undefined) Object.assign(context, { rowGroup: e.rowGroup, column: e.column }) // a Parquet row group's
    return new PipeloadError(e.code, e.message, context)
  }
  const err = new Error(e.message)
  err.stack = e.stack
  return err
}

module.exports = { serializeError, reviveError }
