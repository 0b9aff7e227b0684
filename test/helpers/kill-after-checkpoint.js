'use strict'

// Preloaded (node --require) into a pipeload process by test/parquet-resume.test.js: it SIGKILLs
// the process right after the first checkpoint it writes (renamed into place) that counts more
// than KILL_AFTER_RECORDS records and is not complete, so that "killed mid-load, past a given
// row" happens every time, however fast the machine, without polling the file.
//
//   KILL_CHECKPOINT     the --checkpoint path
//   KILL_AFTER_RECORDS  the records the checkpoint must count past

const fs = require('node:fs')
const path = require('node:path')

const CP = path.resolve(process.env.KILL_CHECKPOINT)
const AFTER = Number(process.env.KILL_AFTER_RECORDS)
const rename = fs.renameSync

fs.renameSync = function (from, to, ...rest) {
  const done = rename.call(fs, from, to, ...rest)
  if (path.resolve(String(to)) === CP) {
    const state = JSON.parse(fs.readFileSync(CP, 'utf8'))
    if (state.records > AFTER && !state.complete) process.kill(process.pid, 'SIGKILL')
  }
  return done
}
