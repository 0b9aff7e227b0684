'use strict'

// The fidelity suite (test/helpers/fidelity-suite.js), parsing in the encode worker.
require('./helpers/fidelity-suite').fidelitySuite({ worker: true })
