'use strict'

const path = require('node:path')

/**
 * Exit codes of the CLI, one per kind of failure. Stable: documented in docs/errors.md.
 */
const EXIT = Object.freeze({
  OK: 0,
  RECORD_ERRORS: 1, // some records failed (error replies, missing fields; bad rows in skip mode)
  USAGE: 2, // bad flags or options
  INPUT: 3, // malformed input, unreadable file
  CONNECTION: 4, // server unreachable, auth failed, connection lost
  OUTPUT: 74, // an output cannot be written: stdout, --rejects, --checkpoint (sysexits EX_IOERR)
  INTERNAL: 70, // a bug: everything not covered above
  SIGINT: 130,
  SIGTERM: 143
})

/** Error codes and the exit code each maps to. */
const CODES = Object.freeze({
  PIPELOAD_OPTION_INVALID: EXIT.USAGE,
  PIPELOAD_TEMPLATE_INVALID: EXIT.USAGE,
  PIPELOAD_FORMAT_UNKNOWN: EXIT.USAGE,
  PIPELOAD_INPUT_NOT_FOUND: EXIT.INPUT,
  PIPELOAD_INPUT_INVALID: EXIT.INPUT,
  PIPELOAD_INPUT_FAILED: EXIT.INPUT, // a stream or iterable input threw while it was read
  PIPELOAD_RECORD_TOO_LARGE: EXIT.INPUT,
  PIPELOAD_EXPORT_TYPE_UNSUPPORTED: EXIT.INPUT, // export: a key of a type the output format does not write (CSV: hashes; Parquet: hashes and strings)
  PIPELOAD_EXPORT_FIELD_UNKNOWN: EXIT.INPUT, // export to CSV/Parquet: a hash field that is not among the columns (--fields, or the first keys' fields)
  PIPELOAD_EXPORT_NOT_TEXT: EXIT.INPUT, // export to CSV (any byte) or Parquet (a field name): bytes that are not valid UTF-8
  PIPELOAD_FIELD_MISSING: EXIT.RECORD_ERRORS, // per record, in failures
  PIPELOAD_RECORD_INVALID: EXIT.RECORD_ERRORS, // per record: the mapper could not encode it
  PIPELOAD_CROSSSLOT: EXIT.RECORD_ERRORS, // per record, cluster mode: a command's keys are in different hash slots
  PIPELOAD_RECORD_FAILED: EXIT.RECORD_ERRORS, // onError abort: a record failed (error reply, missing field)
  PIPELOAD_TOO_MANY_ERRORS: EXIT.RECORD_ERRORS, // onError skip: more than maxErrors records failed
  PIPELOAD_CHECKPOINT_INVALID: EXIT.USAGE,
  PIPELOAD_CHECKPOINT_NOT_FOUND: EXIT.USAGE, // resume: true and no checkpoint at the path (a typo would restart from record 1)
  PIPELOAD_CHECKPOINT_UNFINISHED: EXIT.USAGE, // no resume, and the path holds an unfinished run's checkpoint
  PIPELOAD_CONNECTION_FAILED: EXIT.CONNECTION,
  PIPELOAD_CONNECTION_LOST: EXIT.CONNECTION,
  PIPELOAD_CLUSTER_REDIRECT: EXIT.CONNECTION, // cluster mode: a command redirected more than 16 times (a redirect loop), or a MOVED/ASK with a bad slot or address
  PIPELOAD_AUTH_FAILED: EXIT.CONNECTION,
  PIPELOAD_TLS_FAILED: EXIT.CONNECTION, // the TLS handshake failed: untrusted or wrong-name certificate, client certificate wanted
  PIPELOAD_TIMEOUT: EXIT.CONNECTION,
  PIPELOAD_PERMISSION_DENIED: EXIT.CONNECTION, // the ACL user may not run a command bench needs (checked before writing), or one export reads with
  PIPELOAD_READ_FAILED: EXIT.CONNECTION, // export: a server answered a read (SCAN, TYPE, a page) with an error other than NOPERM and WRONGTYPE
  PIPELOAD_ABORTED: EXIT.SIGINT,
  PIPELOAD_OUTPUT_CLOSED: EXIT.OK,
  PIPELOAD_OUTPUT_FAILED: EXIT.OUTPUT,
  PIPELOAD_CALLBACK_FAILED: EXIT.INTERNAL, // a library caller's callback (onProgress, onFailure, …) threw: `callback` names it, `cause` is what it threw
  PIPELOAD_INTERNAL: EXIT.INTERNAL // --json's code for an error that is no PipeloadError: a bug (a TypeError in a parse worker, say)
})

/**
 * The one error class pipeload throws on paths a user can reach.
 * `code` is stable; context (file, line, offset, command, reply) rides along as properties.
 */
class PipeloadError extends Error {
  constructor (code, message, context) {
    super(message)
    this.name = 'PipeloadError'
    this.code = code
    if (context) Object.assign(this, context)
  }

  get exitCode () {
    return CODES[this.code] ?? EXIT.INTERNAL
  }
}

/**
 * What a caller's callback threw, as the error load()/bench() reject with: a PipeloadError
 * it threw on purpose (the CLI's progress line: stderr gone) goes through as it is.
 */
function callbackError (name, err) {
  if (err instanceof PipeloadError) return err
  return new PipeloadError('PIPELOAD_CALLBACK_FAILED', `the ${name} callback threw: ${err && err.message ? err.message : String(err)}`, { callback: name, cause: err })
}

/** `file:line` (or `file@byte`) for messages. */
function where (file, line, offset) {
  const name = file || '<input>'
  if (line != null) return `${name}:${line}`
  if (offset != null) return `${name}@${offset}`
  return name
}

/** An fs error on `file` as a few words for a message (no errno noise, no stack). */
function fsReason (err, file) {
  switch (err && err.code) {
    case 'ENOENT': return `the directory ${path.dirname(file)} does not exist`
    case 'ENOTDIR': return `a part of ${path.dirname(file)} is a file, not a directory`
    case 'EACCES': case 'EPERM': return 'permission denied'
    case 'EISDIR': return 'it is a directory'
    case 'EROFS': return 'read-only file system'
    case 'ENOSPC': return 'no space left on the device'
    case 'EDQUOT': return 'disk quota exceeded'
    default: return err && err.message
  }
}

module.exports = { PipeloadError, EXIT, CODES, where, fsReason, callbackError }
