'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Least-privilege ACL users: a user allowed only the commands and key pattern of one
// import can run it (no INFO, no CLIENT needed on either connection); keys outside the
// pattern and commands outside the list are per-record NOPERM failures with file:line.
// Run once per kind of NEWEST (Redis 7.0, the newest Redis, the newest Valkey:
// test/helpers/servers.js): ACL rules, NOPERM and WRONGPASS replies are the server's.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startRedis } = require('./helpers/redis-server')
const { describeEachServer, serverKinds, NEWEST } = require('./helpers/servers')
const { spawn } = require('node:child_process')
const { runCli, BIN, ROOT, BASE_ENV } = require('./helpers/run-cli')
const { load } = require('..')
const { scaledMs } = require('./helpers/wait')

const PW = 'loader-pw-acl-test'
describeEachServer('acl', server => {
  let srv
  let admin
  let tmp
  let csv
  let mixed

  beforeAll(async () => {
    srv = await startRedis({ server })
    admin = srv.client()
    // The import: HSET user:{id} * and EXPIRE. Nothing else: no +info, no +client, no +ping.
    await admin.call('ACL', 'SETUSER', 'loader', 'on', `>${PW}`, '~user:*', '+hset', '+expire')
    await admin.call('ACL', 'SETUSER', 'bencher', 'on', `>${PW}`, '~pipeload:bench:*', '+set', '+get', '+ping', '+scan', '+unlink')
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-acl-'))
    csv = path.join(tmp, 'users.csv')
    fs.writeFileSync(csv, 'id,name\n1,ada\n2,grace\n3,edsger\n')
    mixed = path.join(tmp, 'mixed.csv')
    fs.writeFileSync(mixed, 'kind,id,name\nuser,1,ada\nadmin,2,root\nuser,3,edsger\nadmin,4,toor\nuser,5,barbara\n')
  })

  afterAll(async () => {
    await srv?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  const asLoader = { REDISCLI_AUTH: PW }

  describe('acl: a user restricted to one import', () => {
    it('runs the import (HSET + EXPIRE on user:*): exit 0, every key written', async () => {
      await admin.call('ACL', 'LOG', 'RESET')
      const res = await runCli(['import', csv, '--key', 'user:{id}', '--ttl', '600', '-p', String(srv.port), '--user', 'loader'], { env: asLoader })
      expect(res.code, res.stderr).toBe(0)
      expect(res.stderr).toMatch(/loaded 3 of 3 records/)
      expect(res.stderr).not.toMatch(/WARN|ready check/i)
      expect(await admin.hgetall('user:2')).toEqual({ id: '2', name: 'grace' })
      expect(await admin.ttl('user:3')).toBeGreaterThan(500)
      // What was refused are probes whose refusal is tolerated: CLIENT SETNAME (connection
      // names) and INFO cluster (cluster detection); no ready check INFO, no CLIENT SETINFO.
      const denied = (await admin.call('ACL', 'LOG')).map(e => e[e.indexOf('object') + 1])
      expect(denied).toContain('client|setname')
      expect(denied.every(c => c === 'client|setname' || c === 'info')).toBe(true)
    })

    it('keys outside ~user:*: NOPERM per record with file:line; --on-error skip loads the rest', async () => {
      const res = await runCli(['import', mixed, '-c', 'HSET {kind}:{id} name {name}', '--on-error', 'skip', '-p', String(srv.port), '--user', 'loader'], { env: asLoader })
      expect(res.code, res.stderr).toBe(1)
      expect(res.stderr).toContain(`${mixed}:3: NOPERM`)
      expect(res.stderr).toContain(`${mixed}:5: NOPERM`)
      expect(res.stderr).toMatch(/loaded 3 of 5 records/)
      expect(await admin.hget('user:5', 'name')).toBe('barbara')
      expect(await admin.exists('admin:2', 'admin:4')).toBe(0)
    })

    it('keys outside the pattern with the default error policy (abort): stops at the first, exit 1', async () => {
      const res = await runCli(['import', mixed, '-c', 'HSET {kind}:{id} name {name}', '-p', String(srv.port), '--user', 'loader'], { env: asLoader })
      expect(res.code, res.stderr).toBe(1)
      expect(res.stderr).toMatch(new RegExp(`^pipeload: ${mixed.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3: NOPERM .*\\(stopped: on-error abort\\)`))
    })

    it('a command the user may not run: NOPERM per record', async () => {
      const res = await runCli(['import', csv, '-c', 'SADD user:set {id}', '--same-key', '--on-error', 'skip', '--json', '-p', String(srv.port), '--user', 'loader'], { env: asLoader })
      expect(res.code, res.stderr).toBe(1)
      const summary = JSON.parse(res.stdout)
      expect(summary.errors).toBe(3)
      expect(summary.failures.map(f => [f.line, f.code])).toEqual([[2, 'NOPERM'], [3, 'NOPERM'], [4, 'NOPERM']])
      // Where the servers differ: Redis 7.0 says "NOPERM this user has no permissions to run
      // the 'sadd' command", Redis 8 and Valkey "NOPERM User loader has no permissions to run
      // the 'sadd' command" (and for a key: "… to access one of the keys used as arguments" /
      // "No permissions to access a key"); pipeload keeps the text and looks at the code only.
      expect(summary.failures[0].message).toMatch(/NOPERM .*'sadd'/)
    })

    it('--db without +select is refused at connect time: exit 4, one line', async () => {
      const res = await runCli(['import', csv, '--key', 'user:{id}', '-n', '1', '-p', String(srv.port), '--user', 'loader'], { env: asLoader })
      expect(res.code, res.stderr).toBe(4)
      expect(res.stderr.trim().split('\n')).toHaveLength(1)
      expect(res.stderr).toMatch(/NOPERM.*select/i)
    })

    it('a wrong password for the user: exit 4', async () => {
      const res = await runCli(['import', csv, '--key', 'user:{id}', '-p', String(srv.port), '--user', 'loader'], { env: { REDISCLI_AUTH: 'nope' } })
      expect(res.code, res.stderr).toBe(4)
      expect(res.stderr).toMatch(/^pipeload: authentication to Redis at 127\.0\.0\.1:\d+ failed: WRONGPASS/)
    })

    it('library: username/password, NOPERM failures carry line and code', async () => {
      const failures = []
      const summary = await load({
        port: srv.port,
        username: 'loader',
        password: PW,
        input: mixed,
        command: 'HSET {kind}:{id} name {name}',
        onError: 'skip',
        onFailure: f => failures.push(f)
      })
      expect(summary.loaded).toBe(3)
      expect(failures.map(f => [f.file, f.line, f.code, f.source])).toEqual([[mixed, 3, 'NOPERM', 'reply'], [mixed, 5, 'NOPERM', 'reply']])
    })
  })

  describe('acl: bench without CLIENT rights', () => {
    it('runs and reports server memory as n/a', async () => {
      const res = await runCli(['bench', '--workload', 'set', '--count', '200', '--batch-sizes', '10,100', '-p', String(srv.port), '--user', 'bencher'], { env: asLoader })
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout).toMatch(/n\/a/)
      await admin.config('RESETSTAT')
      const json = await runCli(['bench', '--workload', 'set', '--count', '200', '--batch-sizes', '10', '--json', '-p', String(srv.port), '--user', 'bencher'], { env: asLoader })
      expect(json.code, json.stderr).toBe(0)
      const out = JSON.parse(json.stdout)
      // What the server ran, not bench's own flag: 200 SETs in a row and 200 in batches of 10,
      // none refused (the user may run SET on its prefix only).
      const stats = await admin.info('commandstats')
      expect(/cmdstat_set:calls=(\d+)/.exec(stats)?.[1]).toBe('400')
      expect(stats).not.toMatch(/cmdstat_set:.*rejected_calls=[1-9]/)
      expect(out.rows.map(r => r.ops)).toEqual([200, 200])
      expect(out.rows.map(r => r.serverReplyPeakBytes)).toEqual([null, null])
      expect(await admin.keys('pipeload:bench:*')).toEqual([])
    })
  })

  // Issue 22, item 2: a user that lacks a right bench needs is told so before anything is
  // written (exit 4, no stack), with the command that removes the run's keys; and bench keys
  // carry a safety TTL, so a bench killed mid-row leaves nothing for ever.
  describe('acl: bench with a user that lacks a right it needs', () => {
    const HINT = /its keys were deleted; to remove any left \(they expire within 60 min\): redis-cli -h 127\.0\.0\.1 -p (\d+) --user (\w+) --scan --pattern 'pipeload:bench:[0-9a-f]{12}:\*' \| xargs -r redis-cli -h 127\.0\.0\.1 -p \d+ --user \w+ unlink$/m

    it.each([
      // May run ACL: asked with ACL DRYRUN.
      ['nounlink', ['+@all', '-unlink'], 'acl-dryrun'],
      // May not run ACL: MULTI, the commands, DISCARD on a data connection.
      ['nounlinknoacl', ['+@all', '-unlink', '-acl'], 'multi-probe']
    ])('%s: refused before writing, exit 4, the missing command named, the cleanup command printed (%s)', async (user, rules, how) => {
      await admin.call('ACL', 'SETUSER', user, 'on', `>${PW}`, '~pipeload:bench:*', ...rules)
      await admin.config('RESETSTAT')
      await admin.call('ACL', 'LOG', 'RESET')
      const res = await runCli(['bench', '--workload', 'set', '--count', '200', '--batch-sizes', '10', '-p', String(srv.port), '--user', user], { env: asLoader })
      expect(res.code, res.stderr).toBe(4)
      expect(res.stderr).toMatch(new RegExp(`^pipeload: the ACL user "${user}" may not run UNLINK on pipeload:bench:[0-9a-f]{12}:\\* \\(.*\\); bench needs SET, GET, UNLINK on keys matching pipeload:bench:\\*; nothing was written$`, 'm'))
      expect(res.stderr).not.toMatch(/internal error|    at /)
      const hint = HINT.exec(res.stderr)
      expect(hint, res.stderr).not.toBe(null)
      expect([hint[1], hint[2]]).toEqual([String(srv.port), user])
      expect(res.stderr).not.toContain(PW)
      // Nothing written: no SET ran (the probe's SET was queued, then discarded).
      expect(await admin.info('commandstats')).not.toMatch(/cmdstat_set:calls=[1-9]/)
      expect(await admin.keys('pipeload:bench:*')).toEqual([])
      // Which way it was asked: DRYRUN refusals are not in the ACL log; a queued command refused is.
      const logged = (await admin.call('ACL', 'LOG')).map(e => e[e.indexOf('object') + 1])
      expect(logged.includes('unlink')).toBe(how === 'multi-probe')
    })

    it('a bench killed mid-row leaves only keys with a TTL (SET … PX, the INCR counter created with PX)', async () => {
      await admin.call('ACL', 'SETUSER', 'benchall', 'on', `>${PW}`, '~pipeload:bench:*', '+@all')
      for (const workload of ['set', 'incr']) {
        const child = spawn(process.execPath, [BIN, 'bench', '--workload', workload, '--count', '100000000', '--batch-sizes', '10', '--no-baseline', '-q', '-p', String(srv.port), '--user', 'benchall'],
          { cwd: ROOT, env: { ...BASE_ENV, ...asLoader }, stdio: ['ignore', 'ignore', 'ignore'] })
        const closed = new Promise(resolve => child.on('close', resolve))
        await until(async () => (await admin.keys('pipeload:bench:*')).length > 0)
        child.kill('SIGKILL')
        await closed
        const keys = await admin.keys('pipeload:bench:*')
        expect(keys.length, workload).toBeGreaterThan(0)
        for (const k of keys) {
          const ttl = await admin.pttl(k)
          expect(ttl, k).toBeGreaterThan(0)
          expect(ttl, k).toBeLessThanOrEqual(3600000)
        }
        await admin.del(...keys)
      }
    })
  })

  // Issue 34 item 9: --replace sends DEL before each record's commands. A user allowed HSET
  // but not DEL is told so before anything is written, when it may ask ACL DRYRUN; a user who
  // may not ask is not checked (each record then fails with NOPERM, as before).
  describe('acl: --replace with a user that may not run DEL', () => {
    it('may ask ACL DRYRUN: exit 4 naming DEL, the key untouched (CLI and library)', async () => {
      await admin.call('ACL', 'SETUSER', 'nodel', 'on', `>${PW}`, '~user:*', '+hset', '+acl|whoami', '+acl|dryrun')
      await admin.del('user:1', 'user:2', 'user:3') // an earlier test's import
      await admin.hset('user:1', 'old', 'field')
      await admin.config('RESETSTAT')
      const res = await runCli(['import', csv, '--key', 'user:{id}', '--replace', '-p', String(srv.port), '--user', 'nodel'], { env: asLoader })
      expect(res.code, res.stderr).toBe(4)
      expect(res.stderr).toBe(`pipeload: the ACL user "nodel" may not run DEL, which --replace sends before each record's commands (${await admin.call('ACL', 'DRYRUN', 'nodel', 'DEL', 'x')}); allow it (ACL SETUSER nodel +del) or load without --replace; nothing was written\n`)
      // Nothing written: the old hash as it was, no HSET or DEL run (asked by the test's own client).
      expect(await admin.hgetall('user:1')).toEqual({ old: 'field' })
      expect(await admin.exists('user:2', 'user:3')).toBe(0)
      expect(await admin.info('commandstats')).not.toMatch(/cmdstat_(hset|del):/)
      const err = await load({ port: srv.port, username: 'nodel', password: PW, input: csv, key: 'user:{id}', replace: true }).catch(e => e)
      expect(err).toMatchObject({ code: 'PIPELOAD_PERMISSION_DENIED', exitCode: 4, commands: ['DEL'], user: 'nodel' })
      expect(await admin.hgetall('user:1')).toEqual({ old: 'field' })
      await admin.del('user:1')
    })

    it('DEL allowed but outside the key pattern the check asks with: loads (the records name their keys)', async () => {
      await admin.call('ACL', 'SETUSER', 'withdel', 'on', `>${PW}`, '~user:*', '+hset', '+del', '+acl|whoami', '+acl|dryrun')
      await admin.hset('user:2', 'stale', 'x')
      const res = await runCli(['import', csv, '--key', 'user:{id}', '--replace', '-p', String(srv.port), '--user', 'withdel'], { env: asLoader })
      expect(res.code, res.stderr).toBe(0)
      expect(await admin.hgetall('user:2')).toEqual({ id: '2', name: 'grace' })
      await admin.del('user:1', 'user:2', 'user:3')
    })

    it('may not ask ACL DRYRUN: not checked, each record fails with NOPERM (no false refusal)', async () => {
      const res = await runCli(['import', csv, '--key', 'user:{id}', '--replace', '--on-error', 'skip', '-p', String(srv.port), '--user', 'loader'], { env: asLoader })
      expect(res.code, res.stderr).toBe(1)
      expect(res.stderr).toContain(`${csv}:2: NOPERM`)
      expect(res.stderr).not.toMatch(/may not run DEL/)
      await admin.del('user:1', 'user:2', 'user:3')
    })
  })

  /** Resolves once `check()` is true, asking every 20 ms (a condition, not a fixed wait). */
  async function until (check) {
    while (!(await check())) await new Promise(resolve => setTimeout(resolve, 20))
  }

  // The credentials stop working mid-load: the reconnect is refused. That will not change
  // by retrying for --retry-timeout: PIPELOAD_AUTH_FAILED at once, exit 4.
  describe('acl: a password refused on reconnect', () => {
    // 30 s on a quiet machine, scaled to this one (whole seconds): "at once" is within half of it.
    const RETRY_MS = Math.ceil(scaledMs(30_000) / 1000) * 1000

    it('library: the ACL user is deleted mid-load: PIPELOAD_AUTH_FAILED at once', async () => {
      await admin.call('ACL', 'SETUSER', 'mover', 'on', `>${PW}`, '~moved:*', '+@all')
      let release
      const later = new Promise(resolve => { release = resolve })
      async function * rows () {
        // More than the records grouped before encoding (input.js): the first ones go out.
        for (let i = 0; i < 5000; i++) yield { id: i }
        await later
        for (let i = 5000; i < 6000; i++) yield { id: i }
      }
      const t0 = Date.now()
      const run = load({ port: srv.port, username: 'mover', password: PW, input: rows(), command: 'SET moved:{id} 1', batchSize: 50, retryTimeout: RETRY_MS }).catch(e => e)
      await until(async () => (await admin.exists('moved:3999')) === 1)
      await admin.call('ACL', 'DELUSER', 'mover') // also closes its connections
      release()
      const err = await run
      expect(err.code, err.message).toBe('PIPELOAD_AUTH_FAILED')
      expect(err.exitCode).toBe(4)
      expect(err.message).toMatch(/reconnecting: authentication to Redis at 127\.0\.0\.1:\d+ failed: WRONGPASS/)
      expect(err.message).not.toContain(PW)
      expect(Date.now() - t0).toBeLessThan(RETRY_MS / 2)
      expect(err.summary.records).toBeGreaterThanOrEqual(4000)
    })

    it('CLI: the server restarts its auth with a new password (CONFIG SET requirepass + the connections killed): exit 4 at once', async () => {
      const own = await startRedis({ server, password: 'old-password-acl' })
      const c = own.client()
      try {
        const child = spawn(process.execPath, [BIN, 'import', '-', '--format', 'csv', '--no-header', '-c', 'SET rp:{0} {1}', '-p', String(own.port),
          '--batch-size', '50', '--retry-timeout', `${RETRY_MS / 1000}s`], { cwd: ROOT, env: { ...BASE_ENV, REDISCLI_AUTH: 'old-password-acl' }, stdio: ['pipe', 'pipe', 'pipe'] })
        const err = []
        child.stderr.on('data', d => err.push(d))
        child.stdout.resume()
        const closed = new Promise(resolve => child.on('close', code => resolve(code)))
        const rows = (from, to) => Array.from({ length: to - from }, (_, i) => `${from + i},v\n`).join('')
        child.stdin.write(rows(0, 500))
        await until(async () => (await c.exists('rp:449')) === 1)
        await c.config('SET', 'requirepass', 'new-password-acl')
        await c.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
        const t0 = Date.now()
        child.stdin.end(rows(500, 1000))
        const code = await closed
        const stderr = Buffer.concat(err).toString()
        expect(code, stderr).toBe(4)
        expect(Date.now() - t0).toBeLessThan(RETRY_MS / 2)
        expect(stderr).toMatch(/authentication to Redis at 127\.0\.0\.1:\d+ failed: WRONGPASS/)
        expect(stderr).not.toMatch(/could not reconnect within|old-password-acl|new-password-acl/)
      } finally {
        await c.quit().catch(() => {})
        await own.stop()
      }
    })
  })
}, serverKinds(NEWEST))
