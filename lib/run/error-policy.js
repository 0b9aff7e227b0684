'use strict'

const { PipeloadError } = require('../errors')
const { formatFailure, count } = require('./reporter')

// The error policy of a run (onError, maxErrors): whether a failed record stops it, which
// failure did, and the error load() then rejects with. Records already in flight when it
// stops still get their replies (run.js).

class ErrorPolicy {
  /** @param {{ onError: 'skip'|'abort', maxErrors: number|null }} o */
  constructor ({ onError, maxErrors }) {
    this.onError = onError
    this.maxErrors = maxErrors
    this.stop = null // the failure that stops the run
  }

  get stopped () {
    return this.stop !== null
  }

  /** A record failed, `errors` so far in this run: the first failure past the policy stops it. */
  failed (failure, errors) {
    if (this.stop === null && (this.onError === 'abort' || (this.maxErrors !== null && errors > this.maxErrors))) this.stop = failure
  }

  /** Why the run stopped early, as the error load() rejects with; `errors`: this run's failed records. */
  error (errors) {
    const f = this.stop
    if (this.onError === 'abort') {
      // alsoFailed: records of the batches already in flight that failed after it (this run's).
      return new PipeloadError('PIPELOAD_RECORD_FAILED', `${formatFailure(f)} (stopped: on-error abort)`,
        { file: f.file, line: f.line, offset: f.offset, failure: f, alsoFailed: Math.max(0, errors - 1) })
    }
    return new PipeloadError('PIPELOAD_TOO_MANY_ERRORS', `more than ${count(this.maxErrors, 'record')} failed (max-errors ${this.maxErrors}); the last: ${formatFailure(f)}`,
      { file: f.file, line: f.line, offset: f.offset, failure: f })
  }
}

module.exports = { ErrorPolicy }
