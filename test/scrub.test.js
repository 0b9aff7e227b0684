'use strict'
/* global describe, it, expect, afterEach */

// The password scrubber (lib/send/connection.js scrub) against servers that echo the password in
// their error replies. A real Redis never quotes the password back, so without these tests
// scrub could be a no-op and every secrets test stay green. A scripted server (plain TCP)
// answers AUTH with an error that contains the password it was sent, on the control
// connection, on the data connection, and on a data reconnect in the middle of a load.

const crypto = require('node:crypto')
const util = require('node:util')
const { scriptedServer, usual } = require('./helpers/scripted-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('..')
const { PASSWORD_WARNING } = require('../lib/cli')

// ':' and '@' so that the URL form is %-encoded and the server gets the decoded password.
const PW = 'Ec-' + crypto.randomBytes(6).toString('hex') + ':@x'
const FORMS = [PW, encodeURIComponent(PW), Buffer.from(PW).toString('base64')]
const CSV = 'id,v\n' + Array.from({ length: 200 }, (_, i) => `${i},v${i}`).join('\n') + '\n'

let srv = null
afterEach(async () => { await srv?.close(); srv = null })

const echo = args => `-WRONGPASS invalid username-password pair: you said ${JSON.stringify(args.slice(1).join(' '))}\r\n`

/**
 * A server that echoes the password on AUTH from connection `echoFrom` on (1: the control
 * connection, 2: the first data connection, 3: a data reconnect); the connections before
 * it are accepted. With `dropAfter`, the first data connection is closed after that many
 * data commands (so the client has to reconnect).
 */
async function echoingServer ({ echoFrom, dropAfter = Infinity, echoing = echo }) {
  let data = 0
  srv = await scriptedServer((args, conn) => {
    const cmd = args[0].toUpperCase()
    if (cmd === 'AUTH') return conn.id >= echoFrom ? echoing(args) : '+OK\r\n'
    const u = usual(args)
    if (u !== null) return u
    if (conn.id === 2 && ++data > dropAfter) { conn.socket.destroy(); return null }
    return '+OK\r\n'
  })
  return srv
}

function expectNoPassword (label, ...texts) {
  for (const text of texts) for (const form of FORMS) expect(String(text).includes(form), `${label} shows the password: ${text}`).toBe(false)
}

/** Every way pipeload reports the refusal shows the server's text, with the password scrubbed. */
function expectScrubbedEcho (text) {
  expect(text).toMatch(/WRONGPASS invalid username-password pair: you said "\*\*\*"/)
}

describe('the scrubber: a server that echoes the password in its error reply', () => {
  const ways = [
    ['REDISCLI_AUTH', () => ['-u', srv.url], { REDISCLI_AUTH: PW }],
    ['-a', () => ['-u', srv.url, '-a', PW], {}],
    ['a password in the URL (%-encoded)', () => ['-u', `redis://:${encodeURIComponent(PW)}@127.0.0.1:${srv.port}`], {}]
  ]
  for (const [where, echoFrom] of [['the control connection', 1], ['the data connection', 2]]) {
    for (const [how, conn, env] of ways) {
      it(`CLI, ${where}, password from ${how}: exit 4, the reply shown with *** for the password`, async () => {
        await echoingServer({ echoFrom })
        const r = await runCli(['import', '-', '--format', 'csv', '-c', 'SET a:{id} {v}', '--json', ...conn()], { input: CSV, env })
        expect(r.code).toBe(4)
        // --json: the failure before the run is also one JSON object on stdout, scrubbed the same way.
        const { error } = JSON.parse(r.stdout)
        expect([error.code, error.exitCode]).toEqual(['PIPELOAD_AUTH_FAILED', 4])
        expectScrubbedEcho(error.message)
        expectNoPassword(how, r.stdout, r.stderr)
        const lines = r.stderr.trim().split('\n').filter(l => l !== PASSWORD_WARNING)
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatch(new RegExp(`^pipeload: authentication to Redis at 127\\.0\\.0\\.1:${srv.port} failed: `))
        expectScrubbedEcho(lines[0])
        // The server did get the password: the echo really carried it.
        const [cmd, ...rest] = srv.connections[echoFrom - 1].commands[0]
        expect([cmd.toUpperCase(), ...rest]).toEqual(['AUTH', PW])
      })
    }
  }

  // A server (or a proxy in front of one) may quote the password as it would appear in a
  // URL, %-encoded: the client sent it decoded, and that form is a secret all the same.
  for (const [where, echoFrom] of [['the control connection', 1], ['the data connection', 2]]) {
    it(`CLI, ${where}, a reply that quotes the password %-encoded: shown with *** for it`, async () => {
      await echoingServer({ echoFrom, echoing: args => `-WRONGPASS invalid username-password pair: you said ${encodeURIComponent(args.at(-1))}\r\n` })
      const r = await runCli(['import', '-', '--format', 'csv', '-c', 'SET a:{id} {v}', '--json', '-u', `redis://:${encodeURIComponent(PW)}@127.0.0.1:${srv.port}`], { input: CSV })
      expect(r.code).toBe(4)
      expect(JSON.parse(r.stdout).error.code).toBe('PIPELOAD_AUTH_FAILED')
      expect(r.stderr).toMatch(/WRONGPASS invalid username-password pair: you said \*\*\*$/m)
      expectNoPassword('%-encoded echo', r.stdout, r.stderr)
      const [cmd, ...rest] = srv.connections[echoFrom - 1].commands[0]
      expect([cmd.toUpperCase(), ...rest]).toEqual(['AUTH', PW]) // sent decoded
    })
  }

  it('CLI, a data reconnect mid-load: the load stops with exit 4 and the summary, no password anywhere', async () => {
    await echoingServer({ echoFrom: 3, dropAfter: 50 })
    const r = await runCli(['import', '-', '--format', 'csv', '-c', 'SET a:{id} {v}', '-u', srv.url, '--batch-size', '10', '--retry-timeout', '1s'],
      { input: CSV, env: { REDISCLI_AUTH: PW } })
    expect(srv.connections.length).toBeGreaterThanOrEqual(3)
    expect(r.code).toBe(4)
    expectNoPassword('reconnect', r.stdout, r.stderr)
    expectScrubbedEcho(r.stderr)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('CLI, cluster mode: a master (a scripted one-master cluster) that echoes the password on its data connection', async () => {
    let port
    srv = await scriptedServer((args, conn) => {
      const cmd = args[0].toUpperCase()
      if (cmd === 'AUTH') return conn.id >= 2 ? echo(args) : '+OK\r\n'
      if (cmd === 'INFO') { const body = '# Cluster\r\ncluster_enabled:1\r\n'; return `$${body.length}\r\n${body}\r\n` }
      if (cmd === 'CLUSTER') return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:${port}\r\n`
      return usual(args) ?? '+OK\r\n'
    })
    port = srv.port
    const r = await runCli(['import', '-', '--format', 'csv', '-c', 'SET a:{id} {v}', '-u', srv.url, '--json'], { input: CSV, env: { REDISCLI_AUTH: PW } })
    expect(r.code).toBe(4)
    expectNoPassword('cluster', r.stdout, r.stderr)
    expect(r.stderr).toMatch(new RegExp(`^pipeload: [^\\n]*authentication to Redis at 127\\.0\\.0\\.1:${port} failed: `))
    expectScrubbedEcho(r.stderr)
    expect(srv.connections.some(c => c.id >= 2 && c.commands[0][0] === 'AUTH')).toBe(true)
  })

  for (const [where, echoFrom] of [['control', 1], ['data', 2]]) {
    it(`library, ${where} connection: the error as message, stack, inspected and serialized holds no password`, async () => {
      await echoingServer({ echoFrom })
      const err = await load({ port: srv.port, password: PW, input: [{ id: 1, v: 'x' }], command: 'SET a:{id} {v}' }).catch(e => e)
      expect(err.code).toBe('PIPELOAD_AUTH_FAILED')
      expect(err.exitCode).toBe(4)
      expectScrubbedEcho(err.message)
      expectNoPassword('library', err.message, err.stack, util.inspect(err, { depth: 10, showHidden: true }), JSON.stringify(err), JSON.stringify(err.summary ?? null))
    })
  }
})
