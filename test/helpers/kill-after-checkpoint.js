'use strict'

// Preloaded (node --require) into a pipeload process by test/parquet-resume.test.js (and the
// other kill -9 tests: resume-into, restore, export-resume): it SIGKILLs
// the process right after the first checkpoint it writes (renamed into place) that counts more
// than KILL_AFTER_RECORDS records and is not complete, so that "killed mid-load, past a given
// row" happens every time, however fast the machine, without polling the file.
//
//   KILL_CHECKPOINT     the --checkpoint path
//   KILL_AFTER_RECORDS  the records the checkpoint must count past

// The checkpoint is written at most every 500 ms: a load that ends within one interval past
// the row writes no such checkpoint and is not killed (seen on Node 24: 300,000 rows in under
// 700 ms). So the hook also slows this process's event loop, 8 ms busy in every 10, making the
// load span several writes however fast the machine; the timer is unref'd.
const busy = setInterval(() => {
  const until = Date.now() + 8
  while (Date.now() < until) { /* spin */ }
}, 10)
busy.unref()

const fs = require('node:fs')
const path = require('node:path')

const CP = path.resolve(process.env.KILL_CHECKPOINT)
const AFTER = Number(process.env.KILL_AFTER_RECORDS)
const rename = fs.renameSync

fs.renameSync = function (from, to, ...rest) {
  const done = rename.call(fs, from, to, ...rest)
  if (path.resolve(String(to)) === CP) {
    const state = JSON.parse(fs.readFileSync(CP, 'utf8'))
    // An import's checkpoint counts records; an export's (test/export-resume.test.js) keys.
    if ((state.records ?? state.keys) > AFTER && !state.complete) process.kill(process.pid, 'SIGKILL')
  }
  return done
}
