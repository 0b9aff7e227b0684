'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// How the tests find the server binaries they run against (test/helpers/servers.js), and the
// closing lines of a run (test/helpers/servers-report.js). Fake binaries (shell scripts that
// answer --version) stand in for the real ones, so every rule is checked on any machine.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { KINDS, NEWEST, findServer, findValkey, findRedis, describeKinds, serverKinds, chosenKinds, withChoice, VALKEY_ENV, DEFAULT_VALKEY, REPO_ROOT } = require('./helpers/servers')
const serversReport = require('./helpers/servers-report')

const spec = (id) => KINDS.find(k => k.id === id)
let tmp
/** An executable that prints `out` for --version (exit `code`). */
function fake (name, out, code = 0) {
  const dir = fs.mkdtempSync(path.join(tmp, 'bin-'))
  const file = path.join(dir, name)
  fs.writeFileSync(file, `#!/bin/sh\necho '${out}'\nexit ${code}\n`, { mode: 0o755 })
  return file
}
const REDIS8 = 'Redis server v=8.0.6 sha=00000000:1 malloc=jemalloc-5.3.0 bits=64 build=1'
const VALKEY9 = 'Valkey server v=9.1.2 sha=00000000:1 malloc=jemalloc-5.3.0 bits=64 build=1'

beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-servers-test-')) })
afterAll(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }) })

describe('server binaries for the tests: where each kind is looked for', () => {
  it('four kinds, each with its variable and default: redis-server on PATH, the rest under ../shared beside the repository root', () => {
    expect(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).name).toBe('pipeload')
    const shared = path.join(path.dirname(REPO_ROOT), 'shared')
    expect(KINDS.map(k => [k.id, k.env, k.bin])).toEqual([
      ['redis7', 'PIPELOAD_REDIS_SERVER', 'redis-server'],
      ['redis8', 'PIPELOAD_REDIS8_SERVER', path.join(shared, 'redis8', 'redis-server')],
      ['valkey8', 'PIPELOAD_VALKEY_SERVER', path.join(shared, 'valkey', 'valkey-server')],
      ['valkey9', 'PIPELOAD_VALKEY9_SERVER', path.join(shared, 'valkey9', 'valkey-server')]
    ])
    expect(DEFAULT_VALKEY).toBe(path.join(shared, 'valkey', 'valkey-server'))
    expect(VALKEY_ENV).toBe('PIPELOAD_VALKEY_SERVER')
    expect(NEWEST).toEqual(['redis7', 'redis8', 'valkey9'])
    expect(serverKinds(NEWEST).map(k => k.id)).toEqual(NEWEST)
    expect(() => serverKinds(['redis6'])).toThrow(/unknown server kind redis6: one of redis7, redis8, valkey8, valkey9/)
  })

  it('the default binary present: found, with its version, label and the cli beside it', () => {
    const bin = fake('redis-server', REDIS8)
    fs.writeFileSync(path.join(path.dirname(bin), 'redis-cli'), '', { mode: 0o755 })
    const kind = findServer({ ...spec('redis8'), bin }, {})
    expect(kind).toMatchObject({ id: 'redis8', name: 'redis', label: 'Redis 8.0.6', bin, version: '8.0.6', missing: null, present: true })
    expect(kind.cli).toBe(path.join(path.dirname(bin), 'redis-cli'))
    expect(describeKinds([kind])).toBe(`redis8: Redis 8.0.6: ${bin} (cli: ${kind.cli})`)
  })

  it('no binary at the default path: skipped, the reason names the path and the variable; not present', () => {
    const kind = findServer({ ...spec('valkey9'), bin: '/nonexistent/valkey-server' }, {})
    expect(kind).toMatchObject({ id: 'valkey9', name: 'valkey', bin: null, present: false })
    expect(kind.missing).toBe('no valkey-server at /nonexistent/valkey-server; set PIPELOAD_VALKEY9_SERVER to one')
    expect(describeKinds([kind])).toBe(`valkey9: not found (${kind.missing}): its runs are skipped`)
  })

  it('a default binary of the other product, or one that does not run, is skipped', () => {
    expect(findServer({ ...spec('valkey9'), bin: fake('valkey-server', REDIS8) }, {}).missing).toMatch(/does not run as a valkey-server \(Redis 8\.0\.6\)/)
    expect(findServer({ ...spec('redis8'), bin: fake('redis-server', REDIS8, 1) }, {}).missing).toMatch(/does not run as a redis-server \(--version failed\)/)
    expect(findValkey({}, path.join(REPO_ROOT, 'package.json')).missing).toMatch(/no valkey-server at .*package\.json/)
  })

  it('VAR=off: skipped whatever is at the default path, and `present` says whether a binary is there', () => {
    const bin = fake('valkey-server', VALKEY9)
    const off = findServer({ ...spec('valkey9'), bin }, { PIPELOAD_VALKEY9_SERVER: 'off' })
    expect(off).toMatchObject({ bin: null, missing: 'PIPELOAD_VALKEY9_SERVER=off', present: true })
    expect(findServer({ ...spec('valkey9'), bin: '/nonexistent/valkey-server' }, { PIPELOAD_VALKEY9_SERVER: 'OFF' }).present).toBe(false)
    expect(findValkey({ [VALKEY_ENV]: 'off' }).missing).toBe(`${VALKEY_ENV}=off`)
  })

  it('VAR=<path>: that binary, whatever is at the default path', () => {
    const bin = fake('valkey-server', VALKEY9)
    const kind = findServer({ ...spec('valkey9'), bin: '/nonexistent/valkey-server' }, { PIPELOAD_VALKEY9_SERVER: bin })
    expect(kind).toMatchObject({ bin, version: '9.1.2', label: 'Valkey 9.1.2', missing: null, cli: 'redis-cli' })
  })

  it('VAR naming a binary that does not run, or one of the other product, is an error, not a silent skip', () => {
    expect(() => findServer(spec('redis8'), { PIPELOAD_REDIS8_SERVER: '/nonexistent/redis-server' }))
      .toThrow(/^PIPELOAD_REDIS8_SERVER=\/nonexistent\/redis-server: that does not run/)
    expect(() => findServer(spec('redis8'), { PIPELOAD_REDIS8_SERVER: fake('redis-server', VALKEY9) }))
      .toThrow(/is not a redis-server \(`--version` says Valkey 9\.1\.2\)/)
    expect(() => findValkey({ [VALKEY_ENV]: fake('valkey-server', REDIS8) })).toThrow(/is not a valkey-server \(`--version` says Redis 8\.0\.6\)/)
  })

  it('redis7: redis-server on PATH, or PIPELOAD_REDIS_SERVER; `off` leaves the default for the tests not run per kind', () => {
    expect(findRedis({})).toMatchObject({ id: 'redis7', name: 'redis', bin: 'redis-server', cli: 'redis-cli', missing: null })
    expect(findRedis({}).version).toMatch(/^\d+\.\d+\.\d+$/)
    expect(findRedis({ PIPELOAD_REDIS_SERVER: 'off' })).toMatchObject({ bin: 'redis-server', missing: null })
    expect(findServer(spec('redis7'), { PIPELOAD_REDIS_SERVER: 'off' })).toMatchObject({ missing: 'PIPELOAD_REDIS_SERVER=off', present: true })
    const bin = fake('redis-server', REDIS8)
    expect(findRedis({ PIPELOAD_REDIS_SERVER: bin })).toMatchObject({ bin, version: '8.0.6' })
    expect(findServer({ ...spec('redis7'), bin: 'no-such-redis-server' }, {}).missing).toBe('no no-such-redis-server on PATH; set PIPELOAD_REDIS_SERVER to one')
  })
})

describe('PIPELOAD_SERVER_KINDS: the per-kind suites for some kinds only', () => {
  const found = (id) => ({ id, bin: `/x/${id}`, missing: null, present: true })

  it('unset or empty: every kind; a list: those; an unknown kind is an error', () => {
    expect([...chosenKinds({})]).toEqual(['redis7', 'redis8', 'valkey8', 'valkey9'])
    expect([...chosenKinds({ PIPELOAD_SERVER_KINDS: ' ' })]).toEqual(['redis7', 'redis8', 'valkey8', 'valkey9'])
    expect([...chosenKinds({ PIPELOAD_SERVER_KINDS: 'redis7, valkey9' })]).toEqual(['redis7', 'valkey9'])
    expect(() => chosenKinds({ PIPELOAD_SERVER_KINDS: 'redis7,valkey10' })).toThrow('PIPELOAD_SERVER_KINDS=redis7,valkey10: unknown kind valkey10; one of redis7, redis8, valkey8, valkey9')
  })

  it('a kind found but not chosen is skipped and marked left; a chosen or missing one is as found', () => {
    const env = { PIPELOAD_SERVER_KINDS: 'redis7' }
    expect(withChoice(found('redis8'), env)).toEqual({ id: 'redis8', bin: null, present: true, missing: 'not in PIPELOAD_SERVER_KINDS=redis7', left: true })
    expect(withChoice(found('redis7'), env)).toEqual(found('redis7'))
    const absent = { id: 'valkey9', bin: null, present: false, missing: 'no valkey-server at /x' }
    expect(withChoice(absent, env)).toBe(absent)
    expect(withChoice(found('valkey8'), {})).toEqual(found('valkey8'))
  })
})

describe('the closing lines of a run (servers-report.js)', () => {
  const kind = (id, fields) => ({ id, label: id.replace(/\d$/, ' x'), present: true, missing: null, ...fields })
  const kinds = [kind('redis7'), kind('redis8'), kind('valkey8', { present: false, missing: 'no valkey-server at /x' }), kind('valkey9', { missing: 'PIPELOAD_VALKEY9_SERVER=off' })]
  const log = [
    'want\tredis7\t1\ttest/fidelity.test.js', 'want\tredis8\t1\ttest/fidelity.test.js', 'want\tvalkey8\t0\ttest/fidelity.test.js', 'want\tvalkey9\t1\ttest/fidelity.test.js',
    'ran\tredis7\t1\ttest/fidelity.test.js', 'ran\tredis7\t1\ttest/harness.test.js', 'ran\tredis8\t1\ttest/fidelity.test.js', ''
  ].join('\n')

  it('say which kinds ran in which test files, and why the others did not', () => {
    const { text, failures } = serversReport.report(log, kinds)
    expect(text.split('\n')).toEqual([
      `servers tested (Node ${process.version}):`,
      '  redis7   redis x       2 test files: fidelity, harness',
      '  redis8   redis x       1 test file: fidelity',
      '  valkey8  not tested: no valkey-server at /x',
      '  valkey9  not tested: PIPELOAD_VALKEY9_SERVER=off'
    ])
    expect(failures).toEqual([])
  })

  it('CI=true: a kind asked for whose binary is present and that did not run is a failure; an absent one is not', () => {
    expect(serversReport.report(log, kinds, { ci: true }).failures).toEqual(['valkey9: its binary is present but no test ran it (PIPELOAD_VALKEY9_SERVER=off)'])
    const notStarted = serversReport.report(log.replace('ran\tredis8\t1\ttest/fidelity.test.js', ''), kinds, { ci: true })
    expect(notStarted.failures).toContain('redis8: its binary is present but no test ran it')
    expect(notStarted.text).toContain('  redis8   not tested: found, but no test started it')
    // A kind left to another pass by PIPELOAD_SERVER_KINDS is not a failure; its line says why.
    const left = kinds.map(k => k.id === 'valkey9' ? { ...k, missing: 'not in PIPELOAD_SERVER_KINDS=redis7,redis8', left: true } : k)
    const second = serversReport.report(log, left, { ci: true })
    expect(second.failures).toEqual([])
    expect(second.text).toContain('  valkey9  not tested: not in PIPELOAD_SERVER_KINDS=redis7,redis8')
    // A run whose files ask for no kind (the unit tests alone) fails nothing.
    expect(serversReport.report('ran\tredis7\t1\ttest/harness.test.js\n', kinds, { ci: true }).failures).toEqual([])
  })

  it('the teardown prints them and, with CI=true, sets a failing exit code (vitest exits 0 on a teardown that throws)', () => {
    const saved = { ci: process.env.CI, log: process.env.PIPELOAD_SERVERS_LOG, code: process.exitCode }
    const printed = []
    const { log: consoleLog, error: consoleError } = console
    console.log = console.error = (s) => printed.push(s)
    try {
      process.env.CI = 'true'
      const teardown = serversReport()
      const present = serverKinds().find(k => !k.missing)
      fs.appendFileSync(process.env.PIPELOAD_SERVERS_LOG, `want\t${present.id}\t1\ttest/x.test.js\n`)
      teardown()
      expect(printed.join('\n')).toMatch(new RegExp(`servers tested \\(Node [^)]+\\):[^]*${present.id} +not tested: found, but no test started it[^]*CI=true: a server binary that is present was not tested:\\n  ${present.id}: its binary is present`))
      expect(process.exitCode).toBe(1)
      expect(process.env.PIPELOAD_SERVERS_LOG).toBe(undefined)
    } finally {
      console.log = consoleLog
      console.error = consoleError
      process.exitCode = saved.code
      for (const [k, v] of [['CI', saved.ci], ['PIPELOAD_SERVERS_LOG', saved.log]]) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  })
})
