'use strict'

const { load } = require('./run/load')
const { bench } = require('./bench')
const { PipeloadError, EXIT, CODES } = require('./errors')
const { DEFAULTS } = require('./run/options')
const { JsonNumber } = require('./read/json-number')

module.exports = { load, bench, PipeloadError, EXIT, CODES, DEFAULTS, JsonNumber }
