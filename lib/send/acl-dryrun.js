'use strict'

const { PipeloadError } = require('../errors')
const { bounded } = require('./connection')

// May this user run these commands? Asked with ACL DRYRUN (Redis 7+, Valkey), which runs
// nothing and logs nothing. Used before anything is written: by bench (lib/bench/rights.js,
// every command a run needs) and by the import (lib/run/rights.js, --replace's DEL).

/**
 * The commands ACL DRYRUN refuses, as [{ command, reason }] ([] when all are allowed); null
 * when this user may not ask (no +acl) or the server has no DRYRUN (before Redis 7).
 * `commands`: argument arrays, each with example keys; `bound`: { ms, signal } per question.
 */
async function dryRun (control, commands, bound) {
  try {
    const user = await bounded(() => control.call('ACL', 'WHOAMI'), { ...bound, stage: 'while asking ACL WHOAMI' })
    const refused = []
    for (const args of commands) {
      const reply = String(await bounded(() => control.call('ACL', 'DRYRUN', user, ...args), { ...bound, stage: 'while asking ACL DRYRUN' }))
      if (reply !== 'OK') refused.push({ command: args[0], reason: reply })
    }
    return refused
  } catch (err) {
    if (err instanceof PipeloadError) throw err
    return null
  }
}

module.exports = { dryRun }
