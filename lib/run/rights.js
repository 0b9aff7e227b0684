'use strict'

const { PipeloadError } = require('../errors')
const { dryRun } = require('../send/acl-dryrun')

// Before the import writes anything: may this user run the commands pipeload adds to the
// templates' own? --replace sends DEL before each record's commands; a user allowed HSET but
// not DEL would otherwise see every record fail (NOPERM) once loading has begun. Asked with
// ACL DRYRUN, as bench asks (lib/bench/rights.js); a user who may not ask, or a server without
// DRYRUN (before Redis 7), is not checked: the DEL's NOPERM then fails its record as any error
// reply does. The templates' commands are not asked about: their NOPERM is per record, with
// file:line, and the key of a record is not known before it is read.

// Any key: a refusal of the key (outside the user's ~patterns) is left to the records, which
// name their keys; only a refusal of the command itself says --replace cannot work.
const EXAMPLE = ['DEL', 'pipeload:rights-check']

/** Throws PIPELOAD_PERMISSION_DENIED when `o.replace` and the ACL user may not run DEL. */
async function checkReplaceRight (control, o) {
  if (!o.replace) return
  const refused = await dryRun(control, [EXAMPLE], { ms: o.connectTimeout, said: o.said.connectTimeout, signal: o.signal })
  const del = refused?.find(r => /'del' command/i.test(r.reason))
  if (!del) return
  const user = control.options?.username || 'default'
  throw new PipeloadError('PIPELOAD_PERMISSION_DENIED',
    `the ACL user "${user}" may not run DEL, which --replace sends before each record's commands (${del.reason}); ` +
    `allow it (ACL SETUSER ${user} +del) or load without --replace; nothing was written`,
    { commands: ['DEL'], user, checkedWith: 'acl-dryrun' })
}

module.exports = { checkReplaceRight }
