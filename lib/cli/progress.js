'use strict'

const { formatProgress } = require('../run/reporter')
const { parseDuration } = require('../run/option-values')
const { DEFAULTS } = require('../run/option-table')
const { outputError } = require('../send/dry-run')
const { durationFlag } = require('./duration-flag')

// import's progress on stderr. A terminal gets one line redrawn in place, as before. Any other
// stderr (a Kubernetes Job's log, nohup, a file) gets plain lines, one per interval: without
// --progress every 30 s (not with --quiet or --json), so a run shorter than that prints what
// it always printed. The line is load()'s onProgress snapshot as formatProgress words it, the
// redrawn line's text.

const LOG_INTERVAL_MS = 30_000

/**
 * How the run shows progress: null (none), { lines: false, ms } (the terminal's redrawn line)
 * or { lines: true, ms } (a plain line every ms). --progress given (0: none) or --no-progress
 * wins over --quiet, --json and the terminal.
 */
function progressMode (flags, isTTY) {
  if (flags.progress === false) return null
  if (flags.progress !== undefined) {
    const ms = parseDuration(durationFlag(flags.progress, '--progress'), 'progress')
    return ms === 0 ? null : { lines: true, ms: Math.max(1, Math.round(ms)) }
  }
  // --json leaves stderr to errors, as --quiet does (no reconnect notices either).
  if (flags.quiet || flags.json) return null
  return isTTY ? { lines: false, ms: DEFAULTS.progressInterval } : { lines: true, ms: LOG_INTERVAL_MS }
}

/**
 * The load() options and the end of the run for `mode` on `stderr`: { options, end() };
 * `format` words a snapshot (export's differ from import's).
 * A line that cannot be written (a terminal or pipe gone) stops the run with a code, rather
 * than an 'error' event nobody handles.
 */
function progressOutput (mode, stderr, format = formatProgress) {
  if (mode === null) return { options: {}, end () {} }
  let failed = null
  const onError = err => { failed = failed || err }
  stderr.on('error', onError)
  const write = mode.lines ? plainLines(mode.ms, stderr, format) : p => stderr.write('\r\x1b[K' + format(p))
  const onProgress = p => {
    if (failed) throw outputError(failed, 'stderr')
    write(p)
  }
  return {
    options: { onProgress, progressInterval: mode.ms },
    end () {
      stderr.off('error', onError)
      if (!mode.lines && !failed) stderr.write('\r\x1b[K')
    }
  }
}

/**
 * A line per `ms` of the run: load() calls onProgress once more as it ends, which prints
 * nothing when the last line (or the start) is less than `ms` ago; the summary follows.
 */
function plainLines (ms, stderr, format) {
  let last = 0
  return p => {
    if (p.elapsedMs - last < ms - 0.001) return // (less a rounding error of the subtraction)
    last = p.elapsedMs
    stderr.write(`progress: ${format(p)}\n`)
  }
}

module.exports = { progressMode, progressOutput, LOG_INTERVAL_MS }
