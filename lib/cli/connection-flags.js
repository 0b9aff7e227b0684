'use strict'

const { PipeloadError } = require('../errors')
const { tlsFromFlags } = require('../send/tls')
const { urlHasPassword, checkPort } = require('../send/connection')
const { durationFlag } = require('./duration-flag')
const { addFlags, COMMON_FLAGS } = require('./table-flags')

// The connection flags both commands take (redis-cli's names, declared in the option table), and their reading into
// load()/bench() options: import and bench share this file instead of importing each other.

const PASSWORD_WARNING = "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."

/** Connection flags shared by the commands (redis-cli names), from the option table. */
function addConnectionOptions (cmd) {
  return addFlags(cmd, COMMON_FLAGS)
}

/**
 * Connection options for load() from flags and environment; never logs secrets.
 * The password: what the command line says (-a, then a password in -u) wins over the
 * environment (REDISCLI_AUTH, then REDIS_PASSWORD), which wins over a password in
 * $REDIS_URL — like redis-cli, where -a and -u beat REDISCLI_AUTH.
 */
function connectionOptions (flags, env, warn) {
  const o = {}
  const url = flags.url ?? env.REDIS_URL
  if (url) o.url = url
  if (flags.connectTimeout !== undefined) o.connectTimeout = durationFlag(flags.connectTimeout, '--connect-timeout')
  if (flags.host) o.host = flags.host
  if (flags.port !== undefined) o.port = portFlag(flags.port)
  if (flags.db !== undefined) o.db = intFlag('--db', flags.db, 0)
  if (flags.user) o.username = flags.user
  if (flags.pass !== undefined) {
    warn(PASSWORD_WARNING)
    o.password = flags.pass
  } else if (!(flags.url && urlHasPassword(flags.url))) {
    if (env.REDISCLI_AUTH) o.password = env.REDISCLI_AUTH
    else if (env.REDIS_PASSWORD) o.password = env.REDIS_PASSWORD
  }
  if (flags.url && urlHasPassword(flags.url)) warn(PASSWORD_WARNING)
  const tls = tlsFromFlags(flags, warn)
  if (tls) o.tls = tls
  if ((flags.sentinel && flags.sentinel.length) || flags.masterName) {
    if (!flags.sentinel || !flags.sentinel.length) throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--master-name needs --sentinel <host:port>', { option: '--master-name' })
    if (!flags.masterName) throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--sentinel needs --master-name <name>: the master the sentinels monitor', { option: '--sentinel' })
    if (flags.host || flags.port !== undefined) throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--sentinel finds the master itself: drop --host/--port', { option: '--sentinel' })
    o.sentinels = flags.sentinel
    o.masterName = flags.masterName
  }
  return o
}

function intFlag (name, value, min = 1) {
  if (!/^\d+$/.test(String(value)) || Number(value) < min) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `${name} must be a whole number${min ? ' ≥ ' + min : ''}, got "${value}"`, { option: name })
  }
  return Number(value)
}

/** -p: a TCP port, 1 to 65535, checked as the library checks `port` (checkPort). */
function portFlag (value) {
  checkPort(value, '--port')
  return Number(value)
}

module.exports = { intFlag, portFlag, addConnectionOptions, connectionOptions, PASSWORD_WARNING }
