'use strict'

// The fidelity suite (test/helpers/fidelity-suite.js), parsing on the main thread, against
// every server kind found (redis-server; valkey-server where found, else skipped with the reason).
const { fidelitySuite } = require('./helpers/fidelity-suite')
const { describeEachServer } = require('./helpers/servers')

describeEachServer('fidelity, main thread', server => fidelitySuite({ worker: false, server }))
