'use strict'

const { PipeloadError } = require('../errors')

// Duration flags (--timeout, --retry-timeout, --connect-timeout, bench's --rtt, --jitter,
// --max-row-time) say their unit. A plain number is refused, not read: redis-cli's -t 30 and
// our own --ttl 30 are seconds, --timeout 30 used to be milliseconds, and reading it as
// seconds now would turn an old script's --timeout 30000 (30 s) into 8 hours. 0 is the same
// in every unit and stays allowed (--max-row-time 0: never). The library keeps numbers as
// milliseconds, as JavaScript's timers do.

const PLAIN_NUMBER = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*$/

/** The flag's value, unchanged, for load()/bench() to read; a plain number other than 0 is a usage error. */
function durationFlag (value, flag) {
  if (value === undefined || value === null) return value
  const m = PLAIN_NUMBER.exec(String(value))
  if (!m || Number(m[1]) === 0) return value
  const n = m[1].trim()
  throw new PipeloadError('PIPELOAD_OPTION_INVALID',
    `${flag} ${n}: a duration needs a unit: ${n}s for seconds, ${n}ms for milliseconds (also m, h, d); a plain number is refused, as it is seconds in redis-cli and --ttl but was milliseconds here`,
    { option: flag })
}

module.exports = { durationFlag }
