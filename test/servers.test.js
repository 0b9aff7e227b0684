'use strict'
/* global describe, it, expect */

// How the tests find the server binaries they run against (test/helpers/servers.js): Valkey
// from PIPELOAD_VALKEY_SERVER or ../shared/valkey/valkey-server, skipped with a reason where
// absent, an error where the variable names something that is not a working valkey-server.
const fs = require('node:fs')
const path = require('node:path')
const { findValkey, findRedis, describeKinds, VALKEY_ENV, DEFAULT_VALKEY, REPO_ROOT } = require('./helpers/servers')

const found = (() => { try { return findValkey() } catch { return { missing: 'error' } } })()

describe('server binaries for the tests', () => {
  it('the default Valkey path is ../shared/valkey/valkey-server beside the repository root', () => {
    expect(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).name).toBe('pipeload')
    expect(DEFAULT_VALKEY).toBe(path.join(path.dirname(REPO_ROOT), 'shared', 'valkey', 'valkey-server'))
  })

  it('no variable and no binary at the default path: skipped, the reason names the path and the variable', () => {
    const kind = findValkey({}, '/nonexistent/valkey-server')
    expect(kind).toMatchObject({ name: 'valkey', bin: null })
    expect(kind.missing).toBe(`no valkey-server at /nonexistent/valkey-server; set ${VALKEY_ENV} to one`)
  })

  it('a default path that is not a valkey-server (here: a plain file) is skipped too', () => {
    const kind = findValkey({}, path.join(REPO_ROOT, 'package.json'))
    expect(kind.bin).toBe(null)
    expect(kind.missing).toMatch(/no valkey-server at .*package\.json/)
  })

  it(`${VALKEY_ENV}=off: skipped, whatever is at the default path`, () => {
    expect(findValkey({ [VALKEY_ENV]: 'off' }).missing).toBe(`${VALKEY_ENV}=off`)
  })

  it(`${VALKEY_ENV} naming a binary that does not run is an error, not a silent skip`, () => {
    expect(() => findValkey({ [VALKEY_ENV]: '/nonexistent/valkey-server' })).toThrow(/PIPELOAD_VALKEY_SERVER=\/nonexistent\/valkey-server: that does not run/)
  })

  it(`${VALKEY_ENV} naming a redis-server is an error`, () => {
    expect(() => findValkey({ [VALKEY_ENV]: 'redis-server' })).toThrow(/is not a valkey-server \(`--version` says Redis 7\./)
  })

  it('redis-server is found on PATH with its version', () => {
    expect(findRedis()).toMatchObject({ name: 'redis', bin: 'redis-server', cli: 'redis-cli', missing: null })
    expect(findRedis().version).toMatch(/^\d+\.\d+\.\d+$/)
  })

  describe.skipIf(Boolean(found.missing))(`with a Valkey binary${found.missing ? ` [skipped: ${found.missing}]` : ''}`, () => {
    it(`${VALKEY_ENV}=<path>: that binary, its version, and the valkey-cli beside it`, () => {
      const kind = findValkey({ [VALKEY_ENV]: found.bin }, '/nonexistent/valkey-server')
      expect(kind).toMatchObject({ name: 'valkey', bin: found.bin, missing: null })
      expect(kind.version).toMatch(/^\d+\.\d+\.\d+$/)
      expect(kind.cli).toBe(path.join(path.dirname(found.bin), 'valkey-cli'))
      expect(describeKinds([findRedis(), kind])).toMatch(new RegExp(`^redis \\S+: redis-server \\(cli: redis-cli\\)\\nvalkey ${kind.version.replaceAll('.', '\\.')}: ${found.bin}`))
    })
  })
})
