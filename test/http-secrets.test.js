'use strict'
/* global describe, it, expect, beforeAll */

// The credentials of an http(s) input URL (issue 22 item 1): a password holding "/", "@",
// ":" and "%" (base64 secrets hold "/"), written raw as for a Redis URL (everything between
// "//" and the last "@" is the user-info), is sent as Basic auth and never shown: not on
// stdout or stderr (messages, summary, --json, progress), not in the rejects or checkpoint
// file, not in a library error. A bad %-escape there is a user error (exit 2), not an
// internal one. Every piece of the password between its special characters carries its own
// random token, so a piece printed on its own is caught too.
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const util = require('node:util')
const { PassThrough } = require('node:stream')
const { useServer, withDeadPort } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { useHttpServer } = require('./helpers/http-server')
const { run } = require('../lib/cli')
const { load } = require('..')

let server
let redis
let dir
useServer('pipeload-http-secrets-', s => { server = s.srv; redis = s.redis; dir = s.tmp })
const web = useHttpServer()
let host // 127.0.0.1:<port> of the HTTP server
beforeAll(() => { host = web.base.slice('http://'.length) })

const tokens = Array.from({ length: 8 }, (_, i) => `Q${i}k${crypto.randomBytes(6).toString('hex')}`)
const USER = tokens[0]
const PASSWORD = `${tokens[1]}/${tokens[2]}@${tokens[3]}:${tokens[4]}%${tokens[5]}` // as the server must receive it
const WRITTEN = PASSWORD.replace('%', '%25') // in the URL: raw / @ :, the % escaped
const BAD_ESCAPE = `${tokens[6]}/x%zz@${tokens[7]}` // %zz does not decode
const SECRETS = [PASSWORD, WRITTEN, ...tokens]

/** The URL of `p` on the HTTP server with the test's credentials. */
const secretUrl = (p, pw = WRITTEN, at = () => host) => `http://${USER}:${pw}@${at()}${p}`

function expectNoSecret (label, texts) {
  for (const [where, text] of texts) {
    for (const secret of SECRETS) {
      for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) {
        expect(String(text).includes(form), `${label}: ${where} shows the password: ${text}`).toBe(false)
      }
    }
  }
}

const outputs = (res, files = []) => [['stdout', res.stdout], ['stderr', res.stderr], ...files.map(f => [f, fs.readFileSync(f, 'utf8')])]

/** A CSV of `n` rows (row 7 ragged, for --on-error skip), served only with the test's Basic auth. */
function privateCsv (p, n = 3000) {
  const rows = ['id,v']
  for (let i = 0; i < n; i++) rows.push(i === 7 ? `${i},v${i},extra` : `${i},v${i}`)
  const body = Buffer.from(rows.join('\n') + '\n')
  const wanted = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64')
  web.routes.set(p, (req, res) => {
    if (req.headers.authorization !== wanted) { res.writeHead(401); return res.end() }
    res.writeHead(200, { 'content-length': body.length, etag: '"e1"' })
    res.end(body)
  })
  return body
}

describe('an http(s) input URL whose password holds / @ : %', () => {
  it('loads with the password sent as Basic auth; the summary, --json, rejects and checkpoint show ***@', async () => {
    privateCsv('/p1.csv')
    const rejects = path.join(dir, 'p1.rejects.ndjson')
    const cp = path.join(dir, 'p1.ckpt')
    const res = await runCli(['import', secretUrl('/p1.csv?sig=abc'), '-u', server.url, '-c', 'SET s1:{id} {v}', '--json',
      '--on-error', 'skip', '--rejects', rejects, '--checkpoint', cp])
    expect(res.code, res.stderr).toBe(1) // the ragged row
    expect(await redis.get('s1:2999')).toBe('v2999')
    expect(JSON.parse(res.stdout)).toMatchObject({ input: `http://***@${host}/p1.csv?…`, loaded: 2999, errors: 1 })
    expect(fs.readFileSync(rejects, 'utf8')).toContain(`http://***@${host}/p1.csv?…`)
    expect(JSON.parse(fs.readFileSync(cp, 'utf8')).input.url).toBe(`http://***@${host}/p1.csv?…`)
    expectNoSecret('success', outputs(res, [rejects, cp]))
  })

  it('the progress line on a terminal, and several inputs (the summary joins them)', async () => {
    privateCsv('/p2.csv', 20_000)
    privateCsv('/p3.csv', 10)
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    stderr.isTTY = true
    const out = []
    const err = []
    stdout.on('data', d => out.push(d))
    stderr.on('data', d => err.push(d))
    const code = await run(['import', secretUrl('/p2.csv'), secretUrl('/p3.csv'), '-u', server.url, '-c', 'SET s2:{id} {v}',
      '--on-error', 'skip', '--batch-size', '50'], { stdout, stderr, env: {} })
    expect(code).toBe(1)
    const text = Buffer.concat(err).toString()
    expect(text).toMatch(/\r\x1b\[K/)
    expect(text).toContain(`from http://***@${host}/p2.csv, http://***@${host}/p3.csv`)
    expectNoSecret('progress', [['stdout', Buffer.concat(out)], ['stderr', text]])
  })

  const refused = [
    ['401 (a wrong password)', () => [secretUrl('/p4.csv', WRITTEN.replace('/', '/w'))], 3],
    ['404', () => [secretUrl('/missing.csv')], 3],
    ['a bad %-escape in the password', () => [secretUrl('/p4.csv', BAD_ESCAPE)], 2],
    ['a bad %-escape in the user name', () => [`http://${BAD_ESCAPE}:x@${host}/p4.csv`], 2],
    ['a port that does not parse', () => [secretUrl('/p4.csv', WRITTEN, () => '127.0.0.1:notaport')], 2],
    ['a raw ? in the password (the URL does not parse)', () => [secretUrl('/p4.csv', `${tokens[1]}:${tokens[2]}?${tokens[3]}`, () => '127.0.0.1:notaport')], 2],
    ['the same URL listed twice', () => [secretUrl('/p4.csv'), secretUrl('/p4.csv')], 2]
  ]
  for (const [name, inputs, exit] of refused) {
    it(`fails cleanly, naming the URL as ***@: ${name}`, async () => {
      privateCsv('/p4.csv')
      const res = await runCli(['import', ...inputs(), '-u', server.url, '-c', 'SET s3:{id} {v}', '--json'])
      expect(res.code, res.stderr).toBe(exit)
      expect(res.stderr).not.toMatch(/\n\s+at |internal error/)
      expect(res.stderr).toMatch(/http:\/\/\*\*\*@/)
      expectNoSecret(name, outputs(res))
    })
  }

  it('an unreachable host: exit 3, no password', async () => {
    await withDeadPort(async port => {
      const res = await runCli(['import', secretUrl('/x.csv', WRITTEN, () => `127.0.0.1:${port}`), '-u', server.url, '-c', 'SET s4:{id} {v}'])
      expect(res.code).toBe(3)
      expect(res.stderr).toContain(`cannot read http://***@127.0.0.1:${port}/x.csv: connection refused`)
      expectNoSecret('unreachable', outputs(res))
    })
  })

  const show = err => [err.message, String(err.stack), util.inspect(err, { depth: 5 }), JSON.stringify(err), JSON.stringify(err.summary ?? null)].join('\n')
  const library = [
    ['401', () => secretUrl('/p5.csv', WRITTEN.replace('/', '/w')), 'PIPELOAD_INPUT_INVALID'],
    ['a bad %-escape', () => secretUrl('/p5.csv', BAD_ESCAPE), 'PIPELOAD_OPTION_INVALID'],
    ['a list with a bad %-escape', () => [secretUrl('/p5.csv'), secretUrl('/p5.csv', BAD_ESCAPE)], 'PIPELOAD_OPTION_INVALID'],
    ['a port that does not parse', () => secretUrl('/p5.csv', WRITTEN, () => '127.0.0.1:x'), 'PIPELOAD_OPTION_INVALID']
  ]
  for (const [name, input, code] of library) {
    it(`library: ${name} is ${code}, the error holds no password`, async () => {
      privateCsv('/p5.csv')
      const err = await load({ input: input(), url: server.url, command: 'SET s5:{id} {v}' }).catch(e => e)
      expect(err.code, String(err.stack)).toBe(code)
      expectNoSecret(name, [['error', show(err)]])
    })
  }

  it('library: a successful summary names the URL as ***@', async () => {
    privateCsv('/p6.csv', 10)
    const summary = await load({ input: secretUrl('/p6.csv'), url: server.url, command: 'SET s6:{id} {v}', onError: 'skip' })
    expect(summary.loaded).toBe(9)
    expect(summary.input).toBe(`http://***@${host}/p6.csv`)
    expectNoSecret('summary', [['summary', JSON.stringify(summary)]])
  })
})

// Issue 22 item 2: a redirect to another origin (scheme, host, port) gets no credentials;
// the origin the URL names gets them on every request, a redirect back to it included.
describe('credentials and redirects', () => {
  const http = require('node:http')
  let other // a second HTTP server: another origin (another port)
  const otherSeen = []
  beforeAll(async () => {
    other = http.createServer((req, res) => {
      otherSeen.push({ url: req.url, headers: req.headers, raw: req.rawHeaders.join('\n') })
      if (req.url === '/bounce') { res.writeHead(302, { location: `${web.base}/p7.csv` }); return res.end() }
      res.writeHead(200, { 'content-type': 'text/csv' })
      res.end('id,v\n1,a\n2,b\n')
    })
    await new Promise(resolve => other.listen(0, '127.0.0.1', resolve))
    return async () => { other.closeAllConnections(); await new Promise(resolve => other.close(resolve)) }
  })
  const otherBase = () => `http://127.0.0.1:${other.address().port}`
  const redirect = (from, to) => web.routes.set(from, (req, res) => { res.writeHead(302, { location: to() }); res.end() })

  /** What the other origin received since `mark`: no Authorization, no piece of the password anywhere. */
  function expectNothingSentTo (mark) {
    const got = otherSeen.slice(mark)
    expect(got.length).toBeGreaterThan(0)
    for (const r of got) {
      expect(r.headers.authorization).toBe(undefined)
      expectNoSecret('the other origin', [['request', `${r.url}\n${r.raw}`]])
    }
  }

  it('a redirect to another port: the credentials are not sent there (the load reads its body)', async () => {
    redirect('/away.csv', () => `${otherBase()}/data.csv`)
    const mark = otherSeen.length
    const res = await runCli(['import', secretUrl('/away.csv'), '-u', server.url, '-c', 'SET r1:{id} {v}'])
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.get('r1:2')).toBe('b')
    expectNothingSentTo(mark)
  })

  it('a redirect whose Location names credentials of its own: none are sent to the other origin', async () => {
    redirect('/away2.csv', () => `http://${tokens[3]}:${tokens[4]}@127.0.0.1:${other.address().port}/data.csv`)
    const mark = otherSeen.length
    const summary = await load({ input: secretUrl('/away2.csv'), url: server.url, command: 'SET r2:{id} {v}' })
    expect(summary.loaded).toBe(2)
    expectNothingSentTo(mark)
  })

  it('a redirect within the origin keeps them, and so does one that comes back to it through another origin', async () => {
    privateCsv('/p7.csv', 10) // answers 401 without the Basic auth
    redirect('/here.csv', () => '/p7.csv')
    redirect('/round.csv', () => `${otherBase()}/bounce`)
    const mark = otherSeen.length
    for (const [p, key] of [['/here.csv', 'r3'], ['/round.csv', 'r4']]) {
      const res = await runCli(['import', secretUrl(p), '-u', server.url, '-c', `SET ${key}:{id} {v}`, '--on-error', 'skip'])
      expect(res.code, res.stderr).toBe(1) // the ragged row 7
      expect(await redis.get(`${key}:9`)).toBe('v9')
    }
    expectNothingSentTo(mark)
  })
})
