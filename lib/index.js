'use strict'

const { load } = require('./run/load')
const { PipeloadError, EXIT, CODES } = require('./errors')
const { DEFAULTS } = require('./run/options')
const { JsonNumber } = require('./read/json-number')

module.exports = {
  load,
  // The timing mode (lib/bench/), loaded when `bench` is first read: a program that only loads
  // data never loads it.
  get bench () { return require('./bench').bench },
  // Export (lib/export/), loaded when first read, as bench is.
  get exportKeys () { return require('./export/export').exportKeys },
  PipeloadError,
  EXIT,
  CODES,
  DEFAULTS,
  JsonNumber
}
