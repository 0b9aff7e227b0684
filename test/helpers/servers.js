'use strict'

// Which server binaries the integration tests run against. Redis (`redis-server` on PATH) is
// required; Valkey is optional: the fidelity, cluster and fault suites run once per kind found
// here, and the Valkey run is skipped, with the reason in its title, where no Valkey binary is.
//
// Valkey is looked up as:
//   PIPELOAD_VALKEY_SERVER=/path/to/valkey-server  that binary (a bare name is looked up on PATH);
//                                                   one that does not run is an error, not a skip,
//                                                   so a typo cannot silently drop the Valkey runs
//   PIPELOAD_VALKEY_SERVER=off                      no Valkey runs
//   unset                                           ../shared/valkey/valkey-server next to the
//                                                   repository root, skipped where it is absent
//
// No dependencies, so .ci/run can print what it found before `npm ci`:
//   node test/helpers/servers.js

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const VALKEY_ENV = 'PIPELOAD_VALKEY_SERVER'
const REPO_ROOT = path.resolve(__dirname, '..', '..')
const DEFAULT_VALKEY = path.resolve(REPO_ROOT, '..', 'shared', 'valkey', 'valkey-server')

/** `<bin> --version` → { product: 'Redis' | 'Valkey', version }, or null when it does not run. */
function versionOf (bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 })
  if (r.error || r.status !== 0) return null
  const m = /^(\w+) server v=(\S+)/.exec(r.stdout)
  return m ? { product: m[1], version: m[2] } : { product: 'unknown', version: r.stdout.trim() }
}

/** The cli that sits next to a server binary (valkey-cli beside valkey-server), else redis-cli. */
function cliBeside (bin, name) {
  if (bin.includes(path.sep)) {
    const beside = path.join(path.dirname(bin), name)
    if (isExecutable(beside)) return beside
  } else if (versionOf(name)) {
    return name
  }
  return 'redis-cli'
}

function isExecutable (file) {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * Redis: always expected (the suite needs it); `version` is null where it does not run, and
 * the tests then fail when they start it, as they always did.
 */
function findRedis () {
  const v = versionOf('redis-server')
  return Object.freeze({ name: 'redis', bin: 'redis-server', cli: 'redis-cli', version: v && v.version, missing: null })
}

/**
 * Valkey from the environment or the default path. Returns a server kind; `missing` is the
 * reason to skip (null when found). Throws when the environment names a binary that is not a
 * working valkey-server.
 */
function findValkey (env = process.env, defaultBin = DEFAULT_VALKEY) {
  const kind = (fields) => Object.freeze({ name: 'valkey', cli: 'redis-cli', version: null, missing: null, ...fields })
  const given = env[VALKEY_ENV]
  if (given !== undefined && given.trim().toLowerCase() === 'off') {
    return kind({ bin: null, missing: `${VALKEY_ENV}=off` })
  }
  if (given !== undefined && given.trim() !== '') {
    const bin = given.includes('/') ? path.resolve(given) : given
    const v = versionOf(bin)
    if (!v) throw new Error(`${VALKEY_ENV}=${given}: that does not run (\`${bin} --version\` failed); unset it to use ${defaultBin}, or set it to "off"`)
    if (v.product !== 'Valkey') throw new Error(`${VALKEY_ENV}=${given} is not a valkey-server (\`--version\` says ${v.product} ${v.version})`)
    return kind({ bin, cli: cliBeside(bin, 'valkey-cli'), version: v.version })
  }
  if (!isExecutable(defaultBin)) {
    return kind({ bin: null, missing: `no valkey-server at ${defaultBin}; set ${VALKEY_ENV} to one` })
  }
  const v = versionOf(defaultBin)
  if (!v || v.product !== 'Valkey') {
    return kind({ bin: null, missing: `${defaultBin} does not run as a valkey-server (${v ? `${v.product} ${v.version}` : '--version failed'})` })
  }
  return kind({ bin: defaultBin, cli: cliBeside(defaultBin, 'valkey-cli'), version: v.version })
}

let cached = null
/** [redis, valkey]: every server kind the parametrised suites run against (looked up once). */
function serverKinds () {
  if (!cached) cached = Object.freeze([findRedis(), findValkey()])
  return cached
}

/** One line per kind, for CI logs. */
function describeKinds (kinds) {
  return kinds.map(k => k.missing
    ? `${k.name}: not found (${k.missing}): its runs of the fidelity, cluster and fault tests are skipped`
    : `${k.name} ${k.version || '(version unknown)'}: ${k.bin} (cli: ${k.cli})`).join('\n')
}

/**
 * describe(title) once per server kind, `fn(kind)` defining its tests and hooks inside. A kind
 * whose binary is missing is a skipped describe whose title says why, and the reason is printed
 * once per file, so a run without Valkey passes and says what it left out.
 */
function describeEachServer (title, fn, kinds = serverKinds()) {
  for (const kind of kinds) {
    if (kind.missing) console.warn(`${title} [${kind.name}]: skipped: ${kind.missing}`)
    const label = kind.missing ? `${title} [${kind.name}: skipped: ${kind.missing}]` : `${title} [${kind.name}]`
    describe.skipIf(Boolean(kind.missing))(label, () => fn(kind)) // eslint-disable-line no-undef
  }
}

module.exports = { serverKinds, describeEachServer, findRedis, findValkey, describeKinds, VALKEY_ENV, DEFAULT_VALKEY, REPO_ROOT }

if (require.main === module) {
  try {
    console.log(describeKinds(serverKinds()))
  } catch (err) {
    console.error(err.message)
    process.exitCode = 1
  }
}
