'use strict'

// The fidelity suite (test/helpers/fidelity-suite.js), parsing in the encode worker, against
// every server kind found (Redis 7.0 and 8.0, Valkey 8.0 and 9.1: test/helpers/servers.js;
// one not found is skipped with the reason).
const { fidelitySuite } = require('./helpers/fidelity-suite')
const { describeEachServer } = require('./helpers/servers')

describeEachServer('fidelity, encode worker', server => fidelitySuite({ worker: true, server }))
