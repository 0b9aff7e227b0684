'use strict'

const { PipeloadError } = require('../errors')
const { DEFAULTS } = require('../run/options')
const { tlsFromFlags } = require('../send/tls')
const { urlHasPassword, checkPort } = require('../send/connection')
const { durationFlag } = require('./duration-flag')

// The connection flags both commands take (redis-cli's names), and their reading into
// load()/bench() options: import and bench share this file instead of importing each other.

const PASSWORD_WARNING = "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."

function collect (value, previous) {
  return previous.concat([value])
}

/** Connection flags shared by the commands (redis-cli names). */
function addConnectionOptions (cmd) {
  return cmd
    .option('-u, --url <url>', 'server URL, redis://[user:password@]host:port[/db] (default: $REDIS_URL or 127.0.0.1:6379)')
    .option('-h, --host <host>', 'server host (redis-cli style); a bare -h shows this help')
    .option('-p, --port <port>', 'server port')
    .option('-a, --pass <password>', 'password (prefer $REDISCLI_AUTH or $REDIS_PASSWORD: the command line is visible to other users)')
    .option('--user <username>', 'ACL user name')
    .option('-n, --db <number>', 'database number')
    .option('--tls', 'connect with TLS (implied by rediss:// and by every --tls-* flag)')
    .option('--tls-ca <file>', 'PEM file of the CA(s) to trust for the server certificate (default: the system CAs)')
    .option('--tls-cert <file>', 'PEM client certificate, for servers with tls-auth-clients')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option('--tls-servername <name>', 'the name to check the server certificate against and send as SNI (default: the host)')
    .option('--tls-insecure', 'do not verify the server certificate (prints a warning)')
    .option('--sentinel <host:port>', 'ask this Redis Sentinel for the master (repeatable; with --master-name)', collect, [])
    .option('--master-name <name>', 'the master name the sentinels monitor')
    .option('--connect-timeout <duration>', 'give up setting up a connection (connect, TLS, AUTH, SELECT, cluster and sentinel discovery) after this long, each step', `${DEFAULTS.connectTimeout / 1000}s`)
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

module.exports = { collect, intFlag, portFlag, addConnectionOptions, connectionOptions, PASSWORD_WARNING }
