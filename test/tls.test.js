'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// TLS against a real TLS-only redis-server (plain TCP port off, so the data plane cannot
// have worked without TLS either) with certificates made at test time by openssl. The tests
// that talk to a server run once per kind of NEWEST (Redis 7.0, the newest Redis, the newest
// Valkey: test/helpers/servers.js); the usage errors, refused before any connection, once.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startRedis } = require('./helpers/redis-server')
const { describeEachServer, serverKinds, NEWEST } = require('./helpers/servers')
const { makeCerts } = require('./helpers/certs')
const { runCli } = require('./helpers/run-cli')
const { load, bench } = require('..')
const { scaledMs } = require('./helpers/wait')

const STACK = /\n\s+at /
let tmp
let certs
let csv

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-tls-'))
  certs = makeCerts(path.join(tmp, 'pki'))
  csv = path.join(tmp, 'users.csv')
  fs.writeFileSync(csv, 'id,name\n1,ada\n2,grace\n3,edsger\n')
})

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
})

function importArgs (prefix, ...more) {
  return ['import', csv, '--key', `${prefix}:{id}`, ...more]
}

/** A refused connection: exit 4, one line on stderr, no stack, nothing loaded. */
function expectRefused (res, pattern) {
  expect(res.stderr).not.toMatch(STACK)
  expect(res.stderr.trim().split('\n')).toHaveLength(1)
  expect(res.stderr).toMatch(pattern)
  expect(res.code, res.stderr).toBe(4)
}

async function expectLoaded (server, prefix) {
  const c = server.client()
  expect(await c.hgetall(`${prefix}:2`)).toEqual({ id: '2', name: 'grace' })
  expect((await c.keys(`${prefix}:*`)).sort()).toEqual([`${prefix}:1`, `${prefix}:2`, `${prefix}:3`])
}

describeEachServer('tls', server => {
  let srv // tls-auth-clients no
  let mtls // tls-auth-clients yes
  let plain // no TLS at all

  beforeAll(async () => {
    const files = { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca }
    ;[srv, mtls, plain] = await Promise.all([
      startRedis({ server, tls: files }),
      startRedis({ server, tls: { ...files, authClients: 'yes', clientCert: certs.clientCert, clientKey: certs.clientKey } }),
      startRedis({ server })
    ])
  })

  afterAll(async () => {
    await srv?.stop()
    await mtls?.stop()
    await plain?.stop()
  })

  describe('tls: server certificate', () => {
    it('rediss:// with --tls-ca loads over TLS on both planes', async () => {
      const res = await runCli(importArgs('ca', '-u', `rediss://127.0.0.1:${srv.port}`, '--tls-ca', certs.ca))
      expect(res.code, res.stderr).toBe(0)
      expect(res.stderr).toMatch(/loaded 3 of 3 records/)
      await expectLoaded(srv, 'ca')
    })

    it('-h localhost --tls --tls-ca: the certificate is checked against the host name', async () => {
      const res = await runCli(importArgs('name', '-h', 'localhost', '-p', String(srv.port), '--tls', '--tls-ca', certs.ca))
      expect(res.code, res.stderr).toBe(0)
      await expectLoaded(srv, 'name')
    })

    it('refuses a certificate it cannot verify (no CA given): one line, exit 4', async () => {
      const res = await runCli(importArgs('noca', '-u', `rediss://127.0.0.1:${srv.port}`))
      expectRefused(res, /^pipeload: cannot connect to Redis at 127\.0\.0\.1:\d+: the server's TLS certificate is not trusted \(self-signed certificate in certificate chain\): give the CA that signed it with --tls-ca/)
      expect(await srv.client().exists('noca:1')).toBe(0)
    })

    it('refuses a certificate signed by another CA than --tls-ca', async () => {
      const res = await runCli(importArgs('otherca', '-p', String(srv.port), '--tls-ca', certs.otherCa))
      expectRefused(res, /TLS certificate is not trusted/)
    })

    it('--tls-insecure loads without verifying, with a warning', async () => {
      const res = await runCli(importArgs('insecure', '-p', String(srv.port), '--tls-insecure'))
      expect(res.code, res.stderr).toBe(0)
      expect(res.stderr).toMatch(/^Warning: --tls-insecure: the server's certificate is not verified/)
      await expectLoaded(srv, 'insecure')
    })

    it('--tls-servername that the certificate does not list is refused', async () => {
      const res = await runCli(importArgs('sni', '-p', String(srv.port), '--tls-ca', certs.ca, '--tls-servername', 'db.example.org'))
      expectRefused(res, /the server's TLS certificate is not for this name \(Host: db\.example\.org\. is not in the cert's altnames: DNS:localhost, IP Address:127\.0\.0\.1\)/)
    })

    it('--tls-servername that it lists is accepted when connecting by IP', async () => {
      const res = await runCli(importArgs('sni2', '-p', String(srv.port), '--tls-ca', certs.ca, '--tls-servername', 'localhost'))
      expect(res.code, res.stderr).toBe(0)
      await expectLoaded(srv, 'sni2')
    })

    it('plain redis:// to a TLS port fails with exit 4 and a hint', async () => {
      const res = await runCli(importArgs('plain', '-p', String(srv.port)))
      expectRefused(res, /^pipeload: cannot connect to Redis at 127\.0\.0\.1:\d+: .*(TLS|tls)/)
    })

    // A plain server reads the ClientHello as the start of an inline command and waits for
    // its end: the handshake never finishes. It ends at --connect-timeout, naming the cause.
    it('--tls to a plain port fails within --connect-timeout, exit 4, naming the likely cause', async () => {
      const bound = 1000 + scaledMs(5000)
      const t0 = Date.now()
      const res = await runCli(importArgs('tlsplain', '-p', String(plain.port), '--tls', '--tls-ca', certs.ca, '--connect-timeout', '1s'))
      expect(Date.now() - t0).toBeLessThan(bound)
      expectRefused(res, new RegExp(`127\\.0\\.0\\.1:${plain.port}.*the server may not speak TLS on this port: drop --tls / use redis://`))
    })

    it('library: tls: true to a plain port rejects within connectTimeout, naming the likely cause', async () => {
      const err = await load({ port: plain.port, tls: { ca: fs.readFileSync(certs.ca) }, connectTimeout: '1s', input: [{ id: 1 }], command: 'SET k:{id} {id}' }).catch(e => e)
      expect(['PIPELOAD_TIMEOUT', 'PIPELOAD_TLS_FAILED']).toContain(err.code)
      expect(err.exitCode).toBe(4)
      expect(err.message).toMatch(/may not speak TLS on this port/)
    })

    it('bench over TLS', async () => {
      const res = await runCli(['bench', '--workload', 'set', '--count', '200', '--batch-sizes', '10,100', '--json', '-p', String(srv.port), '--tls-ca', certs.ca])
      expect(res.code, res.stderr).toBe(0)
      const out = JSON.parse(res.stdout)
      expect(out.rows).toHaveLength(3)
    })

    it('bench --rtt over TLS: through the delay proxy the certificate is still checked against the server', async () => {
      const args = ['bench', '--workload', 'set', '--count', '50', '--batch-sizes', '10', '--rtt', '1ms', '--csv', '-p', String(srv.port), '--tls-ca', certs.ca]
      const ok = await runCli(args)
      expect(ok.code, ok.stderr).toBe(0)
      expect(ok.stderr).not.toMatch(/Warning/) // no SNI to an IP address
      const bad = await runCli([...args, '--tls-servername', 'db.example.org'])
      expect(bad.code).toBe(4)
      expect(bad.stderr).toMatch(/not for this name/)
    })
  })

  describe('tls: client certificates (tls-auth-clients yes)', () => {
    it('without a client certificate the server refuses: exit 4', async () => {
      const res = await runCli(importArgs('nocert', '-p', String(mtls.port), '--tls-ca', certs.ca))
      expectRefused(res, /^pipeload: cannot connect to Redis at 127\.0\.0\.1:\d+: .*client certificate/)
    })

    it('with --tls-cert and --tls-key it loads', async () => {
      const res = await runCli(importArgs('cert', '-p', String(mtls.port), '--tls-ca', certs.ca, '--tls-cert', certs.clientCert, '--tls-key', certs.clientKey))
      expect(res.code, res.stderr).toBe(0)
      await expectLoaded(mtls, 'cert')
    })
  })

  describe('tls: library options', () => {
    const records = [{ id: 1, v: 'a' }, { id: 2, v: 'b' }]

    it('tls: { ca, cert, key } loads', async () => {
      const summary = await load({
        port: mtls.port,
        tls: { ca: fs.readFileSync(certs.ca), cert: fs.readFileSync(certs.clientCert), key: fs.readFileSync(certs.clientKey) },
        input: records,
        command: 'SET lib:{id} {v}'
      })
      expect(summary.loaded).toBe(2)
      expect(await mtls.client().get('lib:2')).toBe('b')
    })

    it('tls: true without a CA rejects with PIPELOAD_TLS_FAILED', async () => {
      await expect(load({ port: srv.port, tls: true, input: records, command: 'SET lib:{id} {v}' }))
        .rejects.toMatchObject({ code: 'PIPELOAD_TLS_FAILED', exitCode: 4 })
    })

    it('tls: { rejectUnauthorized: false } loads', async () => {
      const summary = await load({ port: srv.port, tls: { rejectUnauthorized: false }, input: records, command: 'SET lib2:{id} {v}' })
      expect(summary.loaded).toBe(2)
    })

    it('an existing ioredis client with tls: the data plane uses the same TLS settings', async () => {
      const client = mtls.client()
      await client.ping()
      const summary = await load({ redis: client, input: records, command: 'SET lib3:{id} {v}' })
      expect(summary.loaded).toBe(2)
      expect(client.status).toBe('ready')
    })
  })
}, serverKinds(NEWEST))

// Refused before any connection is made: no server needed (port 1: nothing is sent to it).
describe('tls: usage errors', () => {
  it('--tls-cert without --tls-key is a usage error', async () => {
    const res = await runCli(importArgs('x', '-p', '1', '--tls-cert', certs.clientCert))
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/^pipeload: --tls-cert needs --tls-key/)
  })

  it('an unreadable --tls-ca file is a usage error', async () => {
    const res = await runCli(importArgs('x', '-p', '1', '--tls-ca', path.join(tmp, 'nope.pem')))
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/^pipeload: --tls-ca .*nope\.pem: cannot read it \(ENOENT\)/)
  })

  it('a wrongly shaped tls option is PIPELOAD_OPTION_INVALID', async () => {
    await expect(load({ port: 1, tls: { ca: 42 }, input: [{ id: 1 }], command: 'SET a {v}' }))
      .rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: expect.stringMatching(/^tls\.ca must be PEM text or a Buffer/) })
    await expect(bench({ port: 1, tls: 'yes', workload: 'ping', count: 10, batchSizes: [10] }))
      .rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID' })
  })
})
