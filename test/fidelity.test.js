'use strict'

// The fidelity suite (test/helpers/fidelity-suite.js), parsing on the main thread.
require('./helpers/fidelity-suite').fidelitySuite({ worker: false })
