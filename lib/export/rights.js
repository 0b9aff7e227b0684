'use strict'

const { PipeloadError } = require('../errors')
const { dryRun } = require('../send/acl-dryrun')
const { PAGES, TYPES } = require('./pages')

// Before the export writes anything: may this user run the commands it reads with? Asked
// with ACL DRYRUN (Redis 7+, Valkey), as import asks for --replace's DEL (lib/run/rights.js);
// a user who may not ask (no +acl), or a server without DRYRUN, is not checked: a NOPERM
// reply to a read then stops the export (PIPELOAD_PERMISSION_DENIED, ./master.js).
// Any key: a refusal of the key (outside the user's ~patterns) is left to the reads, which
// name their keys; only a refusal of a command itself says the export cannot work.

const KEY = 'pipeload:rights-check'

/** The commands an export of `types` (undefined: every type) sends, each with example arguments. */
function commandsOf (types) {
  const read = (types ?? TYPES).flatMap(t => PAGES[t].later === undefined
    ? [PAGES[t].command(KEY, null, 1)]
    : [PAGES[t].command(KEY, null, 1), PAGES[t].command(KEY, PAGES[t].later, 1)])
  return [['SCAN', '0'], ['DBSIZE'], ['TYPE', KEY], ['PTTL', KEY], ...read]
}

/** Throws PIPELOAD_PERMISSION_DENIED naming the commands the ACL user may not run. */
async function checkExportRights (control, { types, connectTimeout, said, signal }) {
  const refused = await dryRun(control, commandsOf(types), { ms: connectTimeout, said: said?.connectTimeout, signal })
  const commands = (refused ?? []).filter(r => /command/i.test(r.reason) && !/ key\b/i.test(r.reason))
  if (commands.length === 0) return
  const user = control.options?.username || 'default'
  const names = commands.map(r => r.command.toUpperCase())
  throw new PipeloadError('PIPELOAD_PERMISSION_DENIED',
    `the ACL user "${user}" may not run ${names.join(', ')}, which export reads with (${commands[0].reason}); ` +
    `allow ${names.length === 1 ? 'it' : 'them'} (ACL SETUSER ${user} ${names.map(n => '+' + n.toLowerCase()).join(' ')}); nothing was written`,
    { commands: names, user, checkedWith: 'acl-dryrun' })
}

module.exports = { checkExportRights, commandsOf }
