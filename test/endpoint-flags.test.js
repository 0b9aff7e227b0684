'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 22 items 2 and 3: where to connect is said exactly or refused. A port outside
// 1-65535 used to reach Node's connect (exit 4, "cannot connect"); a URL with an empty host
// (redis://:pw@/0, redis://) used to mean 127.0.0.1:6379, whatever server that is. Both are
// usage errors now (exit 2), before any connection; the message never holds the password.
// The templates here are read-only (EXISTS), so that on the old code a run that reached a
// server on 127.0.0.1:6379 changed nothing there.

const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')

const PASSWORD = 'Pw-of-issue22-x7'

let srv
let write
useServer('pipeload-endpoint-', s => { ({ srv, write } = s) })

const importArgs = (file, ...more) => ['import', file, '-c', 'EXISTS ep22:{id}', '--connect-timeout', '2s', ...more]

describe('ports: 1 to 65535, in every command', () => {
  for (const port of ['99999', '65536', '0', '70000', '6379.5', '-1', 'x']) {
    it(`import -p ${port} and bench -p ${port}: exit 2, the flag and the value named`, async () => {
      const file = write('p.csv', 'id\n1\n')
      for (const args of [importArgs(file, '-p', port), ['bench', '--count', '10', '--connect-timeout', '2s', '-p', port]]) {
        const r = await runCli(args)
        expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2)
        expect(r.stderr).toBe(`pipeload: --port must be a port number from 1 to 65535, got "${port}"\n`)
      }
    })
  }

  it('the edges 1 and 65535 are ports: the run tries them (exit 4 where nothing listens, not 2)', async () => {
    const file = write('edge.csv', 'id\n1\n')
    const r = await runCli(importArgs(file, '-h', '127.0.0.1', '-p', '65535'))
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr).toMatch('127.0.0.1:65535')
  })

  it('a URL that is a bare number is a port too: -u 99999 is refused', async () => {
    const file = write('u.csv', 'id\n1\n')
    const r = await runCli(importArgs(file, '-u', '99999'))
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch('--url must be a port number from 1 to 65535, got "99999"')
  })

  it('the library: port 70000 rejects with PIPELOAD_OPTION_INVALID; a port as digits still loads', async () => {
    const file = write('lib.csv', 'id\n1\n2\n')
    await expect(load({ input: file, command: 'EXISTS ep22:{id}', port: 70000 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'port', message: 'port must be a port number from 1 to 65535, got 70000' })
    await expect(load({ input: file, command: 'EXISTS ep22:{id}', port: 6379.5 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID' })
    const s = await load({ input: file, command: 'EXISTS ep22:{id}', host: '127.0.0.1', port: String(srv.port) })
    expect(s.loaded).toBe(2)
  })
})

// Issue 33 item 4: the connection options are checked before anything runs, a dry run
// (which connects to nothing) included; the library used to write a dry run's commands
// with port 99999 that the CLI refused.
describe('a dry run checks the connection options too', () => {
  const { Writable } = require('node:stream')
  const sink = () => {
    const out = { text: '' }
    out.stream = new Writable({ write (chunk, _, done) { out.text += chunk; done() } })
    return out
  }

  it.each([
    [{ port: 99999 }, 'port', 'port must be a port number from 1 to 65535, got 99999'],
    [{ port: '0' }, 'port', 'port must be a port number from 1 to 65535, got "0"'],
    [{ url: 'redis://' }, 'url', 'url must be a URL with a host, such as redis://[user:password@]host:port[/db] (an empty host is not taken to mean 127.0.0.1), got "redis://"'],
    [{ tls: 'yes' }, 'tls', 'tls must be true or an object { ca, cert, key, servername, rejectUnauthorized }, got "yes"'],
    [{ sentinels: ['127.0.0.1:26379'] }, 'masterName', 'masterName must be the name the sentinels know the master by (with sentinels), got undefined']
  ])('load(%o, dryRun): PIPELOAD_OPTION_INVALID, nothing written', async (conn, option, message) => {
    const file = write('dry.csv', 'id\n1\n')
    const out = sink()
    const err = await load({ input: file, command: 'EXISTS ep33:{id}', dryRun: 'text', output: out.stream, ...conn }).then(() => null, e => e)
    expect(err).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', exitCode: 2, option, message })
    expect(out.text).toBe('')
  })

  it('the CLI refuses -p 99999 with --dry-run as it does without (the same code and message)', async () => {
    const file = write('dry-cli.csv', 'id\n1\n')
    const r = await runCli(['import', file, '-c', 'EXISTS ep33:{id}', '--dry-run', 'text', '-p', '99999'])
    expect([r.code, r.stderr, r.stdout]).toEqual([2, 'pipeload: --port must be a port number from 1 to 65535, got "99999"\n', ''])
  })
})

describe('a Redis URL names its host', () => {
  for (const url of [`redis://:${PASSWORD}@/0`, 'redis://', 'rediss://', 'redis:///3', `redis://user:${PASSWORD}@/`]) {
    it(`-u ${url.replace(PASSWORD, '<pw>')}: exit 2, no password printed, nothing connected`, async () => {
      const file = write('h.csv', 'id\n1\n')
      for (const args of [importArgs(file, '-u', url, '--json'), ['bench', '--count', '10', '--connect-timeout', '2s', '-u', url]]) {
        const r = await runCli(args)
        expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2)
        expect(r.stderr).toMatch(/--url must be a URL with a host, such as redis:\/\/\[user:password@\]host:port\[\/db\] \(an empty host is not taken to mean 127\.0\.0\.1\)/)
        expect(r.stderr + r.stdout).not.toMatch(PASSWORD)
      }
    })
  }

  it('from $REDIS_URL too', async () => {
    const file = write('env.csv', 'id\n1\n')
    const r = await runCli(importArgs(file), { env: { REDIS_URL: `redis://:${PASSWORD}@/0` } })
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch('must be a URL with a host')
    expect(r.stderr).not.toMatch(PASSWORD)
  })

  it('a host given with -h fills it: -u redis:///0 -h 127.0.0.1 -p <port> loads', async () => {
    const file = write('fill.csv', 'id\n1\n2\n3\n')
    const r = await runCli(importArgs(file, '-u', 'redis:///0', '-h', '127.0.0.1', '-p', String(srv.port), '--json'))
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).loaded).toBe(3)
  })

  it('the library rejects { url: "redis://:pw@/0" } with PIPELOAD_OPTION_INVALID, the password hidden', async () => {
    const file = write('lib-url.csv', 'id\n1\n')
    const err = await load({ input: file, command: 'EXISTS ep22:{id}', url: `redis://:${PASSWORD}@/0` }).catch(e => e)
    expect(err).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'url' })
    expect(err.message).toMatch('got "redis://***@/0"')
    expect(err.message).not.toMatch(PASSWORD)
  })
})
