'use strict'

// Preloaded into a spawned CLI (NODE_OPTIONS=--require) by tests of what `--workers auto`
// decides on a machine with many cores, which the 2-core CI machine is not.
require('node:os').availableParallelism = () => 16
