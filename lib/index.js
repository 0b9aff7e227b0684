'use strict'

const { load } = require('./load')
const { bench } = require('./bench')
const { PipeloadError, EXIT, CODES } = require('./errors')
const { DEFAULTS } = require('./options')

module.exports = { load, bench, PipeloadError, EXIT, CODES, DEFAULTS }
