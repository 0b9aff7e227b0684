'use strict'

const { PipeloadError } = require('../errors')
const { DEFAULTS: LOAD_DEFAULTS, CONNECTION_OPTIONS, checkKnownOptions, invalid, parseDuration, positiveDuration, parseCount } = require('../run/options')
const { BENCH_SHARED, optionEntry } = require('../run/option-table')
const { saidDurations } = require('../run/option-values')
const { defaultCount } = require('./plan')
const { templateSources, checkSources, refuseSameKey } = require('../encode/template-checks')
const { prefixedTemplates } = require('./file')

/** Defaults for bench(); the CLI's --help shows the same values. */
const BENCH_DEFAULTS = Object.freeze({
  workload: 'incr',
  // The least: grown with the largest batch size and the window (see plan.js defaultCount).
  count: 100000,
  // Powers of ten, and the import's own default batch size: the figure users most want to
  // compare against (taken from lib/run/option-table.js, so the two cannot drift apart).
  batchSizes: Object.freeze([...new Set([1, 10, 100, 1000, 10000, 100000, LOAD_DEFAULTS.batchSize])].sort((a, b) => a - b)),
  window: LOAD_DEFAULTS.window,
  repeat: 1,
  baseline: true, // the in-a-row row first
  rttMs: 0,
  jitterMs: 0,
  // A row stops sending after this long: 2000 commands one at a time over a 250 ms link
  // would take 500 s. ops/s stays comparable; the row says how many commands it sent.
  maxRowTimeMs: 10000,
  sampleIntervalMs: 10,
  connectTimeout: LOAD_DEFAULTS.connectTimeout
})

const WORKLOADS = ['incr', 'set', 'hset', 'ping']

// The recommendation: the smallest batch size whose ops/s is within this fraction of the
// fastest: nearly the same speed, less memory on both ends.
const GOOD_ENOUGH = 0.9

/**
 * Every option bench() takes (see checkKnownOptions); index.d.ts lists the same. Those of
 * load() it shares (a file's, the window) are marked in lib/run/option-table.js.
 */
const BENCH_OPTIONS = Object.freeze([...CONNECTION_OPTIONS, ...BENCH_SHARED, 'workload', 'count', 'batchSizes', 'repeat', 'baseline', 'rtt', 'rttMs',
  'jitter', 'jitterMs', 'maxRowTime', 'maxRowTimeMs', 'sampleIntervalMs', 'signal', 'onProgress', 'connections'])
// load() options bench refuses with a reason of its own, below.
const REFUSED = ['map', 'dryRun']

function positiveInt (value, name, fallback) {
  if (value === undefined || value === null) return fallback
  const n = parseCount(value)
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(name, 'a positive whole number such as 1000 or "1m"', value)
  return n
}

function batchSizesOf (value) {
  if (value === undefined || value === null) return BENCH_DEFAULTS.batchSizes
  const list = typeof value === 'string' ? value.split(',').map(s => s.trim()).filter(Boolean) : value
  if (!Array.isArray(list) || list.length === 0) throw invalid('batchSizes', 'a list of positive whole numbers such as "1,10,100"', value)
  const sizes = list.map(v => positiveInt(v, 'batchSizes', undefined))
  return Object.freeze([...new Set(sizes)].sort((a, b) => a - b))
}

/**
 * connections: a count, "auto" or a list of them ("1,2,4", [1, 2, 4]); null when not given
 * (rows as before, one connection). Each value is checked as load() checks its own (the same
 * message); the numbers sorted, each once, "auto" (resolved once connected) last.
 */
function connectionsListOf (value) {
  if (value === undefined || value === null) return null
  const list = typeof value === 'string' ? value.split(',').map(s => s.trim()).filter(Boolean) : (Array.isArray(value) ? value : [value])
  if (list.length === 0) throw invalid('connections', 'a list of connection counts such as "1,2,4" (or "auto")', value)
  const counts = list.map(v => optionEntry('connections').check({ connections: v }))
  const numbers = [...new Set(counts.filter(c => c !== 'auto'))].sort((a, b) => a - b)
  return Object.freeze(counts.includes('auto') ? [...numbers, 'auto'] : numbers)
}

/** Validate bench() options once; everything downstream trusts the result. */
function normalizeBenchOptions (o = {}) {
  if (o === null || typeof o !== 'object') throw invalid('options', 'an object', o)
  checkKnownOptions(o, [...BENCH_OPTIONS, ...REFUSED])
  const file = o.input !== undefined && o.input !== null
  if (file && typeof o.input !== 'string') throw invalid('input', 'a file path', typeof o.input)
  const workload = file ? 'file' : (o.workload ?? BENCH_DEFAULTS.workload)
  if (!file && !WORKLOADS.includes(workload)) throw invalid('workload', `one of ${WORKLOADS.join(', ')} (or an input file)`, workload)
  if (file && o.workload !== undefined && o.workload !== 'file') throw invalid('workload', 'left out when an input file is given', o.workload)
  if (!file && ['key', 'command', 'commands'].some(k => o[k] !== undefined)) {
    throw invalid('key/command', 'given only with an input file', 'a template')
  }
  if (file && ['key', 'command', 'commands'].every(k => o[k] === undefined)) {
    throw invalid('key, command or commands', 'given with an input file (what to write for each record)', 'none')
  }
  if (o.sameKey !== undefined && o.sameKey !== null && typeof o.sameKey !== 'boolean') throw invalid('sameKey', 'true or false', o.sameKey)
  if (file) {
    // A file's templates before connecting: those bench cannot keep under its prefix
    // (./file.js), then as load() checks them.
    prefixedTemplates(o, '')
    refuseSameKey(checkSources(templateSources(o)), { sameKey: o.sameKey })
  }
  if (file && o.count !== undefined) throw invalid('count', 'left out when an input file is given (the whole file is timed)', o.count)
  if (o.map !== undefined) throw invalid('map', 'left out: bench needs templates to keep keys under its prefix', 'a function')
  if (o.dryRun !== undefined && o.dryRun !== null) throw invalid('dryRun', 'left out: bench sends to a server', o.dryRun)
  if (o.signal !== undefined && !(o.signal && typeof o.signal.aborted === 'boolean')) throw invalid('signal', 'an AbortSignal', o.signal)
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw invalid('onProgress', 'a function', typeof o.onProgress)
  const rttMs = o.rtt !== undefined ? parseDuration(o.rtt, 'rtt') : (o.rttMs !== undefined ? parseDuration(o.rttMs, 'rttMs') : 0)
  const jitterMs = o.jitter !== undefined ? parseDuration(o.jitter, 'jitter') : (o.jitterMs !== undefined ? parseDuration(o.jitterMs, 'jitterMs') : 0)
  if (jitterMs > 0 && rttMs === 0) throw invalid('jitter', 'used with rtt (a simulated link)', o.jitter ?? o.jitterMs)
  if (o.baseline !== undefined && typeof o.baseline !== 'boolean') throw invalid('baseline', 'true or false', o.baseline)
  const maxRowTime = o.maxRowTime ?? o.maxRowTimeMs
  const batchSizes = batchSizesOf(o.batchSizes)
  // The window's refusal as load() words it: a few batches, not a batch size.
  const window = o.window === null ? BENCH_DEFAULTS.window : optionEntry('window').check(o)
  const countGiven = o.count !== undefined && o.count !== null
  return Object.freeze({
    ...o,
    workload,
    count: countGiven ? positiveInt(o.count, 'count') : defaultCount(BENCH_DEFAULTS.count, window, batchSizes),
    countGiven,
    batchSizes,
    window,
    connections: connectionsListOf(o.connections),
    repeat: positiveInt(o.repeat, 'repeat', BENCH_DEFAULTS.repeat),
    baseline: o.baseline ?? BENCH_DEFAULTS.baseline,
    rttMs,
    jitterMs,
    maxRowTimeMs: maxRowTime === undefined ? BENCH_DEFAULTS.maxRowTimeMs : parseDuration(maxRowTime, 'maxRowTime'),
    sampleIntervalMs: positiveInt(o.sampleIntervalMs, 'sampleIntervalMs', BENCH_DEFAULTS.sampleIntervalMs),
    connectTimeout: positiveDuration(o.connectTimeout, 'connectTimeout', BENCH_DEFAULTS.connectTimeout),
    // How messages echo the connect timeout: as given ("300ms" stays "300ms").
    said: saidDurations(o, ['connectTimeout'])
  })
}

module.exports = { normalizeBenchOptions, parseDuration, BENCH_DEFAULTS, BENCH_OPTIONS, WORKLOADS, GOOD_ENOUGH }
