'use strict'
/* global describe, it, expect, afterEach */

// Replies that are not RESP, from a scripted server (plain TCP; a real Redis never sends
// them). A malformed reply leaves the connection's reply stream out of step, so pipeload
// drops the connection and handles it as a lost one (docs/resume.md): it
// reconnects and re-sends what was not acknowledged. A server that only ever answers with
// malformed replies must not be reconnected to forever: the run ends within --retry-timeout
// with exit 4, one message naming the server and the bad reply, the summary, no stack.

const { scriptedServer, usual } = require('./helpers/scripted-server')
const { runCli } = require('./helpers/run-cli')
const { scaledMs } = require('./helpers/wait')

const N = 200
const CSV = 'id,v\n' + Array.from({ length: N }, (_, i) => `${i},v${i}`).join('\n') + '\n'
const ARGS = ['import', '-', '--format', 'csv', '-c', 'SET p:{id} {v}', '--batch-size', '10']

let srv = null
afterEach(async () => { await srv?.close(); srv = null })

/** The SET commands the server received, over all its connections: key -> times. */
function setsReceived () {
  const seen = new Map()
  for (const c of srv.connections) for (const [cmd, key, v] of c.commands) if (cmd === 'SET') seen.set(key, (seen.get(key) || 0) + 1) && expect(v).toBe('v' + key.slice(2))
  return seen
}

/** Exit 4; the last error names the server, the bad reply and the retry time; the summary; no stack. */
function expectGaveUp (r, port) {
  expect(r.code).toBe(4)
  expect(r.stdout).toBe('')
  expect(r.stderr).toMatch(new RegExp(`^pipeload: bad reply from 127\\.0\\.0\\.1:${port}: Protocol error[^\\n]*(retry timeout|within 1s)`, 'm'))
  expect(r.stderr).toMatch(/loaded 0 of \d+ records/)
  expect(r.stderr).not.toMatch(/\n\s+at |internal error/)
}

describe('protocol errors: a server that sends a reply that is not RESP', () => {
  it('one malformed reply mid-load: the connection is dropped, unacknowledged batches are re-sent, every record loaded', async () => {
    let data = 0
    srv = await scriptedServer(args => usual(args) ?? (++data === 55 ? '?not resp\r\n' : '+OK\r\n'))
    const r = await runCli([...ARGS, '-u', srv.url, '--json'], { input: CSV })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const s = JSON.parse(r.stdout)
    expect(s).toMatchObject({ records: N, loaded: N, errors: 0, reconnects: 1 })
    expect(s.resentBatches).toBeGreaterThanOrEqual(1)
    expect(srv.connections.filter(c => c.commands.some(a => a[0] === 'SET')).length).toBe(2) // the first data connection and the one after the drop
    const seen = setsReceived()
    expect(seen.size).toBe(N)
    // The batch with the bad reply (commands 51-60) was re-sent; nothing before it was.
    for (let i = 0; i < 50; i++) expect(seen.get(`p:${i}`), `p:${i}`).toBe(1)
    expect(seen.get('p:54')).toBe(2)
  })

  for (const [what, reply] of [['an unknown type byte', '?what\r\n'], ['a RESP3 map to a RESP2 client', '%1\r\n+a\r\n+b\r\n'], ['not Redis at all', 'HTTP/1.1 400 Bad Request\r\n\r\n']]) {
    it(`every data reply malformed (${what}): exit 4 after --retry-timeout, naming the server, with the summary, no stack`, async () => {
      srv = await scriptedServer(args => usual(args) ?? reply)
      const r = await runCli([...ARGS, '-u', srv.url, '--retry-timeout', '1s'], { input: CSV, timeoutMs: scaledMs(15_000) })
      expect(r.code).toBe(4)
      expect(r.stdout).toBe('')
      expectGaveUp(r, srv.port)
    }, scaledMs(20_000))
  }

  it('a cluster node (a scripted one-master cluster) whose every data reply is malformed: exit 4 after --retry-timeout, the same way', async () => {
    let port
    srv = await scriptedServer(args => {
      const cmd = args[0].toUpperCase()
      if (cmd === 'INFO') { const body = '# Cluster\r\ncluster_enabled:1\r\n'; return `$${body.length}\r\n${body}\r\n` }
      if (cmd === 'CLUSTER') return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:${port}\r\n`
      return usual(args) ?? '?what\r\n'
    })
    port = srv.port
    const r = await runCli([...ARGS, '-u', srv.url, '--retry-timeout', '1s'], { input: CSV, timeoutMs: scaledMs(15_000) })
    expectGaveUp(r, srv.port)
    expect(r.stderr).toMatch(/into cluster via 127\.0\.0\.1:\d+ \(1 master\)/)
  }, scaledMs(20_000))
})
