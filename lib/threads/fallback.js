'use strict'

const { where } = require('../errors')

// Why n parse workers (./chunks.js) handed an input over to the sequential reader of the
// loader's thread, as the summary tells it (each input's `fallback` in `files`, a line of the
// CLI's summary: lib/run/reporter.js). Only bad input, or what cannot be cut, leads there;
// any other error of a worker or of the cutting is a bug and fails the run.

/** The input's bytes could not be read (not a failure of the cutting). */
class SourceFailed {
  constructor (cause) {
    this.cause = cause
  }
}

/**
 * A worker's message about a chunk names its line as counted from the chunk's start
 * (`file:3: …`): kept as `{ line, rest }`, made the input's once the lines before the chunk
 * are known (describeFallback). A message without it stays as it is.
 */
function chunkReason (reason, name) {
  const m = typeof reason === 'string' ? /^(.*?):(\d+): /.exec(reason) : null
  if (m === null || m[1] !== (name || '<input>')) return reason
  return { line: Number(m[2]), rest: reason.slice(m[0].length) }
}

/**
 * The summary's `fallback` of an input: `n` workers had it, the sequential reader took over at
 * `from` ({ offset, line }: the first line of the chunk at fault) for `reason` (a message, or
 * chunkReason's `{ line, rest }`); null when it did not, or had nothing to tell (an empty input).
 */
function describeFallback (name, n, from, reason) {
  if (from === null || reason === null) return null
  const text = typeof reason === 'string' ? reason : `${where(name, from.line - 1 + reason.line)}: ${reason.rest}`
  return { from: n, line: from.line, offset: from.offset, reason: text }
}

module.exports = { SourceFailed, chunkReason, describeFallback }
