'use strict'

// Which server binaries the integration tests run against. Four kinds, each looked up from an
// environment variable, else a default:
//
//   id       variable                  default
//   redis7   PIPELOAD_REDIS_SERVER     redis-server on PATH (Debian 12: Redis 7.0)
//   redis8   PIPELOAD_REDIS8_SERVER    ../shared/redis8/redis-server beside the repository root
//   valkey8  PIPELOAD_VALKEY_SERVER    ../shared/valkey/valkey-server
//   valkey9  PIPELOAD_VALKEY9_SERVER   ../shared/valkey9/valkey-server
//
// For each:  VAR=/path/to/binary  that binary (a bare name is looked up on PATH); one that does
//                                 not run, or runs as the other product (a valkey-server for a
//                                 Redis kind), is an error, not a skip, so a typo cannot
//                                 silently drop a server's runs
//            VAR=off              that kind's runs are skipped
//            unset                the default, skipped (with the reason) where it is absent
//
// PIPELOAD_SERVER_KINDS=redis7,valkey9 runs the per-kind suites for those kinds only (unset:
// all four); the others are skipped with that reason, and CI=true does not fail on them: it is
// how .ci/run's second pass (Node 24) leaves the matrix to its first (docs/testing.md).
//
// The fidelity, cluster and fault suites run once per kind (serverKinds()); TLS, ACL and
// Sentinel once per kind of NEWEST (Redis 7.0 as every other test, plus the newest Redis and
// the newest Valkey). A kind not found is a skipped describe whose title says why. Every
// other test starts the redis7 binary (REDIS in ./redis-server.js), `redis-server` on PATH
// unless PIPELOAD_REDIS_SERVER names another; `off` leaves it the default for those tests.
// ./servers-report.js says at the end of the run which kinds ran, and with CI=true fails the
// run where a kind whose binary is present did not.
//
// No dependencies, so .ci/run can print what it found before `npm ci`:
//   node test/helpers/servers.js

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const REPO_ROOT = path.resolve(__dirname, '..', '..')
const SHARED = path.resolve(REPO_ROOT, '..', 'shared')

/** Every kind, oldest first within a product; `bin` is the default binary. */
const KINDS = Object.freeze([
  { id: 'redis7', product: 'Redis', env: 'PIPELOAD_REDIS_SERVER', bin: 'redis-server', cli: 'redis-cli' },
  { id: 'redis8', product: 'Redis', env: 'PIPELOAD_REDIS8_SERVER', bin: path.join(SHARED, 'redis8', 'redis-server'), cli: 'redis-cli' },
  { id: 'valkey8', product: 'Valkey', env: 'PIPELOAD_VALKEY_SERVER', bin: path.join(SHARED, 'valkey', 'valkey-server'), cli: 'valkey-cli' },
  { id: 'valkey9', product: 'Valkey', env: 'PIPELOAD_VALKEY9_SERVER', bin: path.join(SHARED, 'valkey9', 'valkey-server'), cli: 'valkey-cli' }
].map(Object.freeze))

/** Redis 7.0 (as every other test), the newest Redis and the newest Valkey: TLS, ACL, Sentinel. */
const NEWEST = Object.freeze(['redis7', 'redis8', 'valkey9'])

// Kept for the tests and scripts that name them.
const VALKEY_ENV = 'PIPELOAD_VALKEY_SERVER'
const DEFAULT_VALKEY = KINDS[2].bin

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
 * One kind ({ id, product, env, bin: default, cli }) looked up in `env`. Returns a frozen
 * server kind: { id, name: 'redis' | 'valkey' (what INFO server says), label, bin, cli,
 * version, env, missing: the reason to skip, or null, present: whether a binary is there,
 * `off` or not (with CI=true a present kind that does not run fails the run) }. Throws where
 * the variable names a binary that is not a working server of that product.
 */
function findServer (spec, env = process.env) {
  const name = spec.product.toLowerCase()
  const kind = (fields) => Object.freeze({
    id: spec.id, name, label: spec.id, env: spec.env, cli: 'redis-cli', version: null, missing: null, present: true, ...fields
  })
  const found = (bin, v) => kind({ bin, label: `${spec.product} ${v.version}`, cli: cliBeside(bin, spec.cli), version: v.version })
  const isDefault = (v) => Boolean(v) && v.product === spec.product
  const onPath = !spec.bin.includes('/')
  const given = env[spec.env]
  if (given !== undefined && given.trim().toLowerCase() === 'off') {
    return kind({ bin: null, missing: `${spec.env}=off`, present: onPath ? isDefault(versionOf(spec.bin)) : isExecutable(spec.bin) })
  }
  if (given !== undefined && given.trim() !== '') {
    const bin = given.includes('/') ? path.resolve(given) : given
    const v = versionOf(bin)
    if (!v) throw new Error(`${spec.env}=${given}: that does not run (\`${bin} --version\` failed); unset it to use ${spec.bin}, or set it to "off"`)
    if (v.product !== spec.product) throw new Error(`${spec.env}=${given} is not a ${name}-server (\`--version\` says ${v.product} ${v.version})`)
    return found(bin, v)
  }
  if (onPath) {
    const v = versionOf(spec.bin)
    if (!v) return kind({ bin: null, present: false, missing: `no ${spec.bin} on PATH; set ${spec.env} to one` })
    if (v.product !== spec.product) return kind({ bin: null, present: false, missing: `${spec.bin} on PATH is ${v.product} ${v.version}, not ${spec.product}; set ${spec.env} to one` })
    return found(spec.bin, v)
  }
  if (!isExecutable(spec.bin)) {
    return kind({ bin: null, present: false, missing: `no ${name}-server at ${spec.bin}; set ${spec.env} to one` })
  }
  const v = versionOf(spec.bin)
  if (!isDefault(v)) {
    return kind({ bin: null, present: false, missing: `${spec.bin} does not run as a ${name}-server (${v ? `${v.product} ${v.version}` : '--version failed'})` })
  }
  return found(spec.bin, v)
}

const specOf = (id) => KINDS.find(k => k.id === id)

/**
 * redis7 from PIPELOAD_REDIS_SERVER, else redis-server on PATH: the server of every test that
 * is not run per kind. `off` skips only the per-kind runs, so here it means the default.
 */
function findRedis (env = process.env) {
  const spec = specOf('redis7')
  const off = (env[spec.env] || '').trim().toLowerCase() === 'off'
  return findServer(spec, off ? {} : env)
}

/** valkey8 from PIPELOAD_VALKEY_SERVER (else defaultBin). */
function findValkey (env = process.env, defaultBin = DEFAULT_VALKEY) {
  return findServer({ ...specOf('valkey8'), bin: defaultBin }, env)
}

const cached = new Map()
/**
 * The server kinds of `ids` (default: all four), each looked up once per process; a lookup
 * error (a variable naming a binary that does not work) is thrown here, so the test file
 * that asks fails with it.
 */
function serverKinds (ids = KINDS.map(k => k.id)) {
  return ids.map(id => {
    if (!cached.has(id)) {
      const spec = specOf(id)
      if (!spec) throw new Error(`unknown server kind ${id}: one of ${KINDS.map(k => k.id).join(', ')}`)
      cached.set(id, withChoice(findServer(spec)))
    }
    return cached.get(id)
  })
}

/**
 * A kind found but not named by PIPELOAD_SERVER_KINDS: skipped with that reason and marked
 * `left` (left to another pass, so CI=true does not count it as a present kind not run).
 */
function withChoice (kind, env = process.env) {
  if (kind.missing || chosenKinds(env).has(kind.id)) return kind
  return Object.freeze({ ...kind, bin: null, missing: `not in PIPELOAD_SERVER_KINDS=${env.PIPELOAD_SERVER_KINDS}`, left: true })
}

/** The kinds PIPELOAD_SERVER_KINDS names (all when unset); an unknown one is an error. */
function chosenKinds (env = process.env) {
  const list = (env.PIPELOAD_SERVER_KINDS || '').split(',').map(s => s.trim()).filter(Boolean)
  if (!list.length) return new Set(KINDS.map(k => k.id))
  const unknown = list.filter(id => !specOf(id))
  if (unknown.length) throw new Error(`PIPELOAD_SERVER_KINDS=${env.PIPELOAD_SERVER_KINDS}: unknown kind ${unknown.join(', ')}; one of ${KINDS.map(k => k.id).join(', ')}`)
  return new Set(list)
}

/** One line per kind, for CI logs. */
function describeKinds (kinds) {
  return kinds.map(k => k.missing
    ? `${k.id}: ${k.left ? 'left out' : 'not found'} (${k.missing}): its runs are skipped`
    : `${k.id}: ${k.label}: ${k.bin} (cli: ${k.cli})`).join('\n')
}

/**
 * describe(title) once per server kind, `fn(kind)` defining its tests and hooks inside. A kind
 * whose binary is missing is a skipped describe whose title says why. Each kind asked for is
 * noted for ./servers-report.js (`want`), so the end of the run can tell which did not run.
 * `concurrent: true`: the kinds' describes run side by side (for suites that mostly wait on
 * their servers, e.g. a Sentinel's timers); `fn` must then put its tests in a
 * describe.sequential, or they would inherit the concurrency and run side by side too.
 */
function describeEachServer (title, fn, kinds = serverKinds(), { concurrent = false } = {}) {
  for (const kind of kinds) {
    note('want', kind)
    const label = kind.missing ? `${title} [${kind.id}: skipped: ${kind.missing}]` : `${title} [${kind.label}]`
    describe.skipIf(Boolean(kind.missing))(label, { concurrent }, () => fn(kind)) // eslint-disable-line no-undef
  }
}

/**
 * Appends `event<TAB>id<TAB>present<TAB>test file` to the run's log (PIPELOAD_SERVERS_LOG, set
 * by ./servers-report.js; nothing outside a vitest run). `ran` is noted when a server of that
 * kind answered PING (./redis-server.js).
 */
const noted = new Set()
function note (event, kind) {
  const log = process.env.PIPELOAD_SERVERS_LOG
  if (!log || !kind.id) return
  const file = path.relative(REPO_ROOT, globalThis.expect?.getState?.().testPath || '')
  const line = `${event}\t${kind.id}\t${kind.present ? 1 : 0}\t${file}\n`
  if (noted.has(line)) return
  noted.add(line)
  fs.appendFileSync(log, line)
}

module.exports = {
  KINDS, NEWEST, serverKinds, chosenKinds, withChoice, describeEachServer, findServer, findRedis, findValkey, describeKinds, note,
  VALKEY_ENV, DEFAULT_VALKEY, REPO_ROOT
}

if (require.main === module) {
  try {
    console.log(describeKinds(serverKinds()))
  } catch (err) {
    console.error(err.message)
    process.exitCode = 1
  }
}
