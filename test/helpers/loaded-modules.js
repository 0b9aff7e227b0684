'use strict'

// Preloaded (`node -r`) into a pipeload process by test/loaded-modules.test.js: the modules of
// lib/ in require.cache (paths relative to lib/, with "/"), written as a JSON array to the file
// PIPELOAD_LOADED_MODULES names when the process exits. A parse worker (which `-r` preloads too)
// is ended with its process, without an exit event: it writes its own list to that name plus
// `.thread-<id>` each time it posts to the loader, so the last list is what it had loaded by its
// last batch.

const fs = require('node:fs')
const path = require('node:path')
const { isMainThread, parentPort, threadId } = require('node:worker_threads')

const LIB = path.join(__dirname, '..', '..', 'lib') + path.sep
const out = process.env.PIPELOAD_LOADED_MODULES

function writeLoaded (file) {
  const loaded = Object.keys(require.cache)
    .filter(f => f.startsWith(LIB))
    .map(f => f.slice(LIB.length).split(path.sep).join('/'))
    .sort()
  fs.writeFileSync(file, JSON.stringify(loaded))
}

if (isMainThread) {
  process.on('exit', () => writeLoaded(out))
} else if (parentPort !== null) {
  const post = parentPort.postMessage
  parentPort.postMessage = function (...args) {
    writeLoaded(`${out}.thread-${threadId}`)
    return post.apply(this, args)
  }
}
