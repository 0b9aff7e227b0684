'use strict'

const { load } = require('./load')
const { PipeloadError, EXIT, CODES } = require('./errors')
const { DEFAULTS } = require('./options')

module.exports = { load, PipeloadError, EXIT, CODES, DEFAULTS }
