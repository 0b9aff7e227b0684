'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// No password is ever shown: every byte of stdout, stderr and of every file a run writes
// (rejects, checkpoint) is searched for a distinctive password, across successes, wrong
// passwords, unreachable servers, bad URLs, dry runs, JSON, bench, a reconnect and the
// progress line; library errors are searched as printed, inspected and serialized.

const { spawn } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const util = require('node:util')
const { PassThrough } = require('node:stream')
const { startRedis } = require('./helpers/redis-server')
const { waitFor } = require('./helpers/wait')
const { runCli, BIN, ROOT } = require('./helpers/run-cli')
const { run } = require('../lib/cli')
const { load, bench } = require('..')

const PW = 'Pw-' + crypto.randomBytes(9).toString('hex')
const WRONG = 'Wr-' + crypto.randomBytes(9).toString('hex')
// Passwords with the characters a URL gives a meaning to, written raw (not %-encoded).
// Each piece between them carries its own random token, so a piece printed on its own
// (a split at the wrong "@" once showed `***@ss:w/rd#%&"x@…`) is caught too.
const tokens = Array.from({ length: 12 }, (_, i) => `T${i}x${crypto.randomBytes(6).toString('hex')}`)
const RAW = `${tokens[0]}@${tokens[1]}:${tokens[2]}/${tokens[3]}#${tokens[4]}&"${tokens[5]}?${tokens[6]}` // valid: no %
const BAD_ESCAPE = `${tokens[7]}%zz${tokens[8]}@${tokens[9]}` // "%zz" does not decode
const ISSUE_FORM = `${tokens[10]}@${tokens[11]}:w/rd#%&"x` // the issue's example, with tokens
const SECRETS = [PW, WRONG, ...tokens]

let srv
let admin
let tmp
let csv
let big
const seen = [] // every run checked, for the count at the end

beforeAll(async () => {
  srv = await startRedis({ password: PW })
  admin = srv.client()
  await admin.call('ACL', 'SETUSER', 'rawuser', 'on', `>${RAW}`, '~*', '&*', '+@all')
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-secrets-'))
  csv = path.join(tmp, 'users.csv')
  fs.writeFileSync(csv, 'id,name\n1,ada\n2,grace\n3,edsger\n')
  big = Array.from({ length: 50_000 }, (_, i) => `${i},name-${i}`).join('\n') + '\n'
})

afterAll(async () => {
  await srv?.stop()
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
})

/** Every byte of the run's output and of every file under `dirs`: no secret anywhere. */
function expectNoSecret (label, res, dirs = []) {
  const blobs = [['stdout', res.stdoutBytes ?? Buffer.from(res.stdout)], ['stderr', res.stderrBytes ?? Buffer.from(res.stderr)]]
  for (const d of dirs) {
    for (const f of fs.readdirSync(d, { recursive: true })) {
      const p = path.join(d, String(f))
      if (fs.statSync(p).isFile()) blobs.push([p, fs.readFileSync(p)])
    }
  }
  for (const [where, bytes] of blobs) {
    for (const secret of SECRETS) {
      for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) {
        expect(bytes.includes(form), `${label}: ${where} contains the password`).toBe(false)
      }
    }
  }
  seen.push(label)
}

const url = (pw = PW, port = () => srv.port) => `redis://:${pw}@127.0.0.1:${port()}`
const importArgs = (prefix, ...more) => ['import', csv, '--key', `${prefix}:{id}`, ...more]

describe('secrets: the CLI never prints a password', () => {
  const ok = [
    ['-a', () => importArgs('a', '-p', String(srv.port), '-a', PW), {}],
    ['URL, --json', () => importArgs('u', '-u', url(), '--json'), {}],
    ['URL in $REDIS_URL', () => importArgs('e', '--json'), () => ({ REDIS_URL: url() })],
    ['REDISCLI_AUTH', () => importArgs('r', '-p', String(srv.port)), () => ({ REDISCLI_AUTH: PW })],
    ['REDIS_PASSWORD', () => importArgs('rp', '-p', String(srv.port)), () => ({ REDIS_PASSWORD: PW })],
    ['-a beats a wrong REDISCLI_AUTH', () => importArgs('pre', '-p', String(srv.port), '-a', PW), () => ({ REDISCLI_AUTH: WRONG })],
    ['URL password beats a wrong REDIS_PASSWORD', () => importArgs('pre2', '-u', url()), () => ({ REDIS_PASSWORD: WRONG })],
    ['REDISCLI_AUTH beats a wrong password in $REDIS_URL', () => importArgs('pre3'), () => ({ REDIS_URL: url(WRONG), REDISCLI_AUTH: PW })],
    ['dry run with a password in the URL', () => importArgs('d', '-u', url(), '--dry-run', 'text'), {}],
    ['dry run resp', () => importArgs('d', '-u', url(), '--dry-run', 'resp'), {}],
    ['raw @ : / # & " ? in a URL password (split at the last @)', () => importArgs('raw', '-u', `redis://rawuser:${RAW}@127.0.0.1:${srv.port}`, '--json'), {}],
    ['raw reserved characters in $REDIS_URL', () => importArgs('raw2'), () => ({ REDIS_URL: `redis://rawuser:${RAW}@127.0.0.1:${srv.port}/0` })],
    ['bench, raw reserved characters in the URL password', () => ['bench', '--workload', 'set', '--count', '20', '--batch-sizes', '10', '--json', '-u', `redis://rawuser:${RAW}@127.0.0.1:${srv.port}`], {}]
  ]
  for (const [name, args, env] of ok) {
    it(`succeeds: ${name}`, async () => {
      const res = await runCli(args(), { env: typeof env === 'function' ? env() : env })
      expect(res.code, res.stderr).toBe(0)
      expectNoSecret(name, res)
    })
  }

  const refused = [
    ['wrong -a', () => importArgs('x', '-p', String(srv.port), '-a', WRONG), {}],
    ['wrong password in the URL', () => importArgs('x', '-u', url(WRONG)), {}],
    ['wrong REDISCLI_AUTH', () => importArgs('x', '-p', String(srv.port)), () => ({ REDISCLI_AUTH: WRONG })],
    ['wrong REDIS_PASSWORD, --json', () => importArgs('x', '-p', String(srv.port), '--json'), () => ({ REDIS_PASSWORD: WRONG })],
    ['no password', () => importArgs('x', '-p', String(srv.port)), {}],
    ['unreachable host, password in the URL', () => importArgs('x', '-u', url(PW, () => 1)), {}],
    ['unreachable host, password in the URL, --json', () => importArgs('x', '-u', url(PW, () => 1), '--json'), {}],
    ['unresolvable host name', () => importArgs('x', '-u', `redis://user:${PW}@no-such-host.invalid:6379`), {}],
    ['URL that does not parse', () => importArgs('x', '-u', `redis://:${PW}@127.0.0.1:notaport`), {}],
    ['URL with a raw @ in the password', () => importArgs('x', '-u', `redis://:${PW}@x@127.0.0.1:${srv.port}`), {}],
    ['sentinel URL, no sentinel there', () => importArgs('x', '-u', `redis-sentinel://u:${PW}@127.0.0.1:1/m`), {}],
    ['sentinel URL that does not parse', () => importArgs('x', '-u', `redis-sentinel://u:${PW}@127.0.0.1:1`), {}],
    ['bench, wrong password', () => ['bench', '--workload', 'ping', '--count', '10', '--batch-sizes', '10', '-u', url(WRONG)], {}],
    ['raw reserved characters, refused (default user)', () => importArgs('x', '-u', `redis://:${RAW}@127.0.0.1:${srv.port}`), {}],
    ['raw reserved characters, unreachable, --json', () => importArgs('x', '-u', `redis://rawuser:${RAW}@127.0.0.1:1`, '--json'), {}],
    ['raw reserved characters, rediss:// to a plain port', () => importArgs('x', '-u', `rediss://rawuser:${RAW}@127.0.0.1:${srv.port}`, '--connect-timeout', '1s'), {}],
    ['raw reserved characters, sentinel URL, no sentinel there', () => importArgs('x', '-u', `redis-sentinel://rawuser:${RAW}@127.0.0.1:1/m`), {}],
    ['raw reserved characters, sentinel URL with a / after the master name', () => importArgs('x', '-u', `redis-sentinel://:${RAW}@127.0.0.1:1/m/x/y`), {}],
    ['a bad %-escape in the password', () => importArgs('x', '-u', `redis://rawuser:${BAD_ESCAPE}@127.0.0.1:${srv.port}`), {}],
    ['a bad %-escape in the user name', () => importArgs('x', '-u', `redis://${BAD_ESCAPE}:x@127.0.0.1:${srv.port}`), {}],
    ['a bad %-escape, rediss://', () => importArgs('x', '-u', `rediss://:${BAD_ESCAPE}@127.0.0.1:${srv.port}`), {}],
    ['a bad %-escape, sentinel URL', () => importArgs('x', '-u', `redis-sentinel://u:${BAD_ESCAPE}@127.0.0.1:1/m`), {}],
    ['a bad %-escape in $REDIS_URL, --json', () => importArgs('x', '--json'), () => ({ REDIS_URL: `redis://:${BAD_ESCAPE}@127.0.0.1:${srv.port}` })],
    ['the issue\'s form: raw @ : / # % & " in the password', () => importArgs('x', '-u', `redis://:${ISSUE_FORM}@127.0.0.1:${srv.port}`), {}],
    ['bench, a bad %-escape', () => ['bench', '--workload', 'ping', '--count', '10', '--batch-sizes', '10', '-u', `redis://:${BAD_ESCAPE}@127.0.0.1:${srv.port}`], {}],
    ['bench, raw reserved characters, refused', () => ['bench', '--workload', 'ping', '--count', '10', '--batch-sizes', '10', '-u', `redis://:${RAW}@127.0.0.1:${srv.port}`], {}]
  ]
  for (const [name, args, env] of refused) {
    it(`fails cleanly: ${name}`, async () => {
      const res = await runCli(args(), { env: typeof env === 'function' ? env() : env })
      expect(/%-escape|issue's form/.test(name) ? [2] : [2, 4], res.stderr).toContain(res.code)
      expect(res.stderr).not.toMatch(/\n\s+at |internal error/)
      expectNoSecret(name, res)
    })
  }

  it('failed records, --json, --rejects and --checkpoint files', async () => {
    await admin.set('bad:2', 'a string: HSET on it is WRONGTYPE')
    const dir = fs.mkdtempSync(path.join(tmp, 'files-'))
    const res = await runCli(['import', csv, '--key', 'bad:{id}', '-u', url(), '--json', '--on-error', 'skip',
      '--rejects', path.join(dir, 'rejects.ndjson'), '--checkpoint', path.join(dir, 'ckpt.json')])
    expect(res.code, res.stderr).toBe(1)
    expect(fs.readFileSync(path.join(dir, 'rejects.ndjson'), 'utf8')).toMatch(/WRONGTYPE/)
    expect(fs.existsSync(path.join(dir, 'ckpt.json'))).toBe(true)
    expectNoSecret('rejects and checkpoint', res, [dir])
    const again = await runCli(['import', csv, '--key', 'bad:{id}', '-u', url(), '--on-error', 'skip', '--checkpoint', path.join(dir, 'ckpt.json'), '--resume'])
    expectNoSecret('resume', again, [dir])
  })

  it('abort on the first failed record (the default policy)', async () => {
    const res = await runCli(['import', csv, '--key', 'bad:{id}', '-u', url()])
    expect(res.code).toBe(1)
    expectNoSecret('abort', res)
  })

  for (const fmt of [[], ['--json'], ['--csv'], ['--markdown']]) {
    it(`bench ${fmt.join(' ') || '(table and chart)'}`, async () => {
      const res = await runCli(['bench', '--workload', 'set', '--count', '100', '--batch-sizes', '10', ...fmt, '-u', url()])
      expect(res.code, res.stderr).toBe(0)
      expectNoSecret(`bench ${fmt}`, res)
    })
  }

  it('bench with --rtt (a delay proxy, a second control client) and a file workload', async () => {
    const res = await runCli(['bench', csv, '--key', 'u:{id}', '--batch-sizes', '2', '--rtt', '2ms', '-u', url()])
    expect(res.code, res.stderr).toBe(0)
    expectNoSecret('bench --rtt file', res)
  })

  it('a reconnect during the load (CLIENT KILL): the reconnect message names no password', async () => {
    const child = spawn(process.execPath, [BIN, 'import', '-', '--format', 'csv', '--no-header', '-c', 'SET rc:{0} {1}', '-u', url(), '--batch-size', '100'],
      { cwd: ROOT, env: { PATH: process.env.PATH }, stdio: ['pipe', 'pipe', 'pipe'] })
    const out = []
    const err = []
    child.stdout.on('data', d => out.push(d))
    child.stderr.on('data', d => err.push(d))
    const closed = new Promise(resolve => child.on('close', code => resolve(code)))
    child.stdin.write(big)
    await waitFor('the first half loaded', async () => Number(await admin.exists('rc:49000')) === 1)
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
    child.stdin.end(big.replace(/^(\d+),/gm, (m, n) => `${Number(n) + 50_000},`))
    const code = await closed
    const res = { stdoutBytes: Buffer.concat(out), stderrBytes: Buffer.concat(err), stdout: '', stderr: Buffer.concat(err).toString() }
    expect(code, res.stderr).toBe(0)
    expect(res.stderr).toMatch(/reconnected, re-sent/)
    expect(await admin.exists('rc:99999')).toBe(1)
    expectNoSecret('reconnect', res)
  })

  it('the progress line on a terminal', async () => {
    const file = path.join(tmp, 'big.csv')
    fs.writeFileSync(file, 'id,name\n' + big)
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    stderr.isTTY = true
    const chunks = { out: [], err: [] }
    stdout.on('data', d => chunks.out.push(d))
    stderr.on('data', d => chunks.err.push(d))
    const code = await run(['import', file, '--key', 'prog:{id}', '-u', url(), '--batch-size', '50'], { stdout, stderr, env: {} })
    const res = { stdoutBytes: Buffer.concat(chunks.out), stderrBytes: Buffer.concat(chunks.err), stdout: '', stderr: '' }
    expect(code).toBe(0)
    expect(res.stderrBytes.toString()).toMatch(/\r\x1b\[K/)
    expectNoSecret('progress', res)
  })
})

describe('secrets: library errors', () => {
  const show = err => [err.message, String(err.stack), util.inspect(err, { depth: 5 }), JSON.stringify(err), JSON.stringify(err.summary ?? null)].join('\n')

  const cases = [
    ['wrong password', () => load({ url: url(WRONG), input: [{ id: 1 }], command: 'SET k {id}' })],
    ['unreachable', () => load({ url: url(PW, () => 1), input: [{ id: 1 }], command: 'SET k {id}' })],
    ['bad URL', () => load({ url: `redis://:${PW}@h:bad`, input: [{ id: 1 }], command: 'SET k {id}' })],
    ['password option, unreachable', () => load({ port: 1, password: PW, input: [{ id: 1 }], command: 'SET k {id}' })],
    // The server never answers the TLS handshake: the run fails by the connect timeout,
    // here 1 s instead of the default 10 s. (In the CLI list above once the CLI has a
    // --connect-timeout.)
    ['TLS to a plain port, password in the URL', () => load({ url: `rediss://:${PW}@127.0.0.1:${srv.port}`, connectTimeout: 1000, input: [{ id: 1 }], command: 'SET k {id}' })],
    ['record failure under abort', () => load({ url: url(), input: [{ id: 2 }], key: 'bad:{id}' })],
    ['bench, wrong password', () => bench({ url: url(WRONG), workload: 'ping', count: 10, batchSizes: [10] })],
    ['a bad %-escape in the URL password', () => load({ url: `redis://:${BAD_ESCAPE}@127.0.0.1:1`, input: [{ id: 1 }], command: 'SET k {id}' })],
    ['raw reserved characters, unreachable', () => load({ url: `redis://u:${RAW}@127.0.0.1:1`, input: [{ id: 1 }], command: 'SET k {id}' })],
    ['raw reserved characters, refused', () => load({ url: `redis://:${RAW}@127.0.0.1:${srv.port}`, input: [{ id: 1 }], command: 'SET k {id}' })],
    ['the issue\'s form', () => load({ url: `redis://:${ISSUE_FORM}@127.0.0.1:${srv.port}`, input: [{ id: 1 }], command: 'SET k {id}' })],
    ['sentinel URL, a bad %-escape', () => load({ url: `redis-sentinel://:${BAD_ESCAPE}@127.0.0.1:1/m`, input: [{ id: 1 }], command: 'SET k {id}' })],
    ['bench, a bad %-escape', () => bench({ url: `redis://:${BAD_ESCAPE}@127.0.0.1:${srv.port}`, workload: 'ping', count: 10, batchSizes: [10] })]
  ]
  for (const [name, fn] of cases) {
    it(name, async () => {
      let err
      try { await fn() } catch (e) { err = e }
      expect(err).toBeDefined()
      expect(err.name).toBe('PipeloadError')
      const text = show(err)
      for (const s of SECRETS) expect(text.includes(s), text).toBe(false)
      seen.push(name)
    })
  }

  it('a successful summary holds no password', async () => {
    const summary = await load({ url: url(), input: [{ id: 1 }], command: 'SET ok:{id} 1' })
    expect(JSON.stringify(summary)).not.toContain(PW)
    expect(seen.length).toBeGreaterThan(30)
  })
})

describe('secrets: URLs are split at the last @', () => {
  const { redactUrl } = require('../lib/send/connection')

  it('redactUrl hides everything between // and the last @, whatever it holds', () => {
    expect(redactUrl(`redis://:${ISSUE_FORM}@127.0.0.1:6379`)).toBe('redis://***@127.0.0.1:6379')
    expect(redactUrl(`rediss://user:${RAW}@h:1/2`)).toBe('rediss://***@h:1/2')
    expect(redactUrl(`redis-sentinel://u:${RAW}@a:1,b:2/m`)).toBe('redis-sentinel://***@a:1,b:2/m')
    expect(redactUrl(`:${RAW}@h:1`)).toBe('***@h:1')
    expect(redactUrl(`redis://h:1/0?password=${PW}&x=1`)).toBe('redis://h:1/0?password=***&x=1')
  })

  for (const form of ['redis', 'rediss', 'redis-sentinel']) {
    it(`${form}://: a bad %-escape is PIPELOAD_OPTION_INVALID, not a URIError`, async () => {
      for (const userinfo of [`:${BAD_ESCAPE}`, `${BAD_ESCAPE}:x`, `u:${BAD_ESCAPE}`]) {
        const err = await load({ url: `${form}://${userinfo}@127.0.0.1:1/${form === 'redis-sentinel' ? 'm' : '0'}`, input: [{ id: 1 }], command: 'SET k {id}' }).catch(e => e)
        expect(err.code, String(err.stack)).toBe('PIPELOAD_OPTION_INVALID')
        expect(err.exitCode).toBe(2)
        for (const t of tokens) expect(err.message).not.toContain(t)
      }
    })
  }
})
