'use strict'

const { PipeloadError } = require('../errors')

// Values of options as people write them: durations, counts, sizes, TTLs, shards. Each
// parser names the option it reads in its error (PIPELOAD_OPTION_INVALID); the CLI and the
// library share them (docs/options.md "Units").

function invalid (name, expected, got) {
  const shown = typeof got === 'string' ? JSON.stringify(got) : String(got)
  return new PipeloadError('PIPELOAD_OPTION_INVALID', `${name} must be ${expected}, got ${shown}`, { option: name })
}

const UNITS = { us: 0.001, µs: 0.001, μs: 0.001, ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 }

// The longest delay setTimeout/setInterval hold: beyond it Node fires after 1 ms instead
// (with a TimeoutOverflowWarning), so --connect-timeout 30d would fail every connect at once.
const MAX_DURATION_MS = 2 ** 31 - 1

/** `250ms`, `0.25s`, `1m`, `2h`, `1d`, `0`, or a number of ms → milliseconds, at most MAX_DURATION_MS. */
function parseDuration (value, name) {
  let ms = value
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw invalid(name, 'a duration ≥ 0 such as "250ms" or "1.5s"', value)
  } else {
    const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(us|µs|μs|ms|s|m|h|d)?\s*$/.exec(String(value))
    if (!m) throw invalid(name, 'a duration such as "250ms" or "1.5s"', value)
    // A string without a unit ("30" from an environment variable) is refused, as on the
    // command line: read as milliseconds it made a 30 s timeout 30 ms. 0 needs none.
    if (m[2] === undefined && Number(m[1]) !== 0) throw invalid(name, `a duration with a unit, "${m[1]}s" or "${m[1]}ms" (also m, h, d), or a number of milliseconds`, value)
    ms = Number(m[1]) * UNITS[m[2] ?? 'ms']
  }
  if (ms > MAX_DURATION_MS) throw invalid(name, `at most ${MAX_DURATION_MS} ms (24.8 days, the longest timer Node.js can set), such as "24d"`, value)
  return ms
}

/**
 * The duration options given in `o` as their messages echo them: the text as given ("2m" stays
 * "2m", not 120000 ms), a number as the milliseconds it is ("1500 ms"). Options not given are
 * left out: a message then says the default in its own words.
 */
function saidDurations (o, names) {
  const said = {}
  for (const name of names) {
    const v = o[name]
    if (typeof v === 'string') said[name] = v.trim()
    else if (typeof v === 'number') said[name] = `${v} ms`
  }
  return Object.freeze(said)
}

/** A duration that must be over 0: a connect timeout of 0 would give up before trying. */
function positiveDuration (value, name, fallback) {
  if (value === undefined || value === null) return fallback
  const ms = parseDuration(value, name)
  if (!(ms >= 1)) throw invalid(name, 'a duration of at least 1 ms such as "5s"', value)
  return ms
}

const COUNT_UNITS = { '': 1, k: 1e3, m: 1e6, g: 1e9 }

/**
 * A count: a number, or text such as "5000", "5k", "2.5k", "1m", "1_000_000". k, m and g are
 * 1000-based (counts, not bytes); the result must be whole ("1.5" is refused, "1.5k" is 1500).
 * Returns NaN for text that is no count, so each caller says what it expected.
 */
function parseCount (v) {
  if (typeof v === 'number') return v
  if (typeof v !== 'string') return NaN
  const m = /^\s*(\d[\d_]*(?:\.\d+)?)\s*([kmg]?)\s*$/i.exec(v)
  if (!m || /_$|__/.test(m[1])) return NaN
  return Math.round(Number(m[1].replace(/_/g, '')) * COUNT_UNITS[m[2].toLowerCase()] * 1e6) / 1e6
}

/** A count ≥ 1 (see parseCount); `name` is the option in the message, `example` values that fit it. */
function positiveCount (v, name, example = '5000 or "5k"') {
  const n = parseCount(v)
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(name, `a positive integer such as ${example}`, v)
  return n
}

const SIZE_UNITS = { b: 1, kib: 1024, kb: 1024, mib: 1024 ** 2, mb: 1024 ** 2, gib: 1024 ** 3, gb: 1024 ** 3 }

/**
 * A size in bytes → bytes: a number, or text such as "1048576", "64MiB", "64 MiB", "512kb".
 * KB, MB and GB are 1024-based, as in redis.conf; plain k/m/g are refused (redis.conf reads
 * 1m as 1,000,000 bytes, so they would be ambiguous). `name` is the option in the message.
 */
function parseSize (v, name) {
  if (typeof v !== 'string') return positiveCount(v, name)
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v)
  const unit = m ? SIZE_UNITS[(m[2] || 'b').toLowerCase()] : undefined
  const n = unit ? Math.floor(Number(m[1]) * unit) : NaN
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(name, 'a size in bytes ≥ 1, such as 1048576 or "64MiB"', v)
  return n
}

/**
 * A TTL in whole seconds (EXPIRE's unit): a number of seconds, "3600", or a duration with a
 * unit: "90s", "30m", "1h", "7d" (one unit: write 90m, not 1h30m). A plain number is
 * seconds here, unlike the library's durations (ms), because EXPIRE counts seconds.
 */
function parseTtl (v, name = 'ttl') {
  let n = v
  if (typeof v === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(v)
    n = m ? Number(m[1]) * (m[2] ? UNITS[m[2]] / 1000 : 1) : NaN
  }
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(name, 'a whole number of seconds ≥ 1, such as 3600, "90s", "1h" or "7d"', v)
  return n
}

/**
 * shard: 'i/n' or { index, count }, 0 ≤ i < n → { index, count }, or null for none. One
 * shard of one (0/1) is the whole input: null, so it reads, numbers and checkpoints as a
 * run without --shard does. `name` says where the value came from (PIPELOAD_SHARD).
 */
function parseShard (v, name = 'shard') {
  if (v === undefined || v === null) return null
  let index, count
  if (typeof v === 'string') {
    const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(v)
    if (m) [index, count] = [Number(m[1]), Number(m[2])]
  } else if (typeof v === 'object') {
    ({ index, count } = v)
  }
  const expected = 'i/n with 0 ≤ i < n, such as "0/4" (the first of 4 shards) or { index: 0, count: 4 }'
  if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(index) || index < 0) {
    throw invalid(name, expected, typeof v === 'object' ? JSON.stringify(v) : v)
  }
  if (index >= count) {
    const hint = index === count ? ` (shards count from 0: the last of ${count} is ${count - 1}/${count}; from a 1-based number k, write $((k-1))/${count})` : ''
    throw invalid(name, expected + hint, typeof v === 'object' ? JSON.stringify(v) : v)
  }
  return count === 1 ? null : Object.freeze({ index, count })
}

module.exports = { invalid, parseDuration, positiveDuration, saidDurations, parseCount, positiveCount, parseSize, parseTtl, parseShard, UNITS, MAX_DURATION_MS }
