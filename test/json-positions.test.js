'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Positions in one-line JSON documents (issue 22 item 2): a failed record of a document whose
// records share a line is named by its element and byte offset, for a failure of the input,
// of the template and of Redis's reply; {$line} over such a document would give every record
// the same key and is refused before anything is sent (exit 2). The expected elements and
// offsets come from the test's own generator (the byte length of what it wrote before each
// element), not from the reader.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')

let srv, redis, tmp
useServer('pipeload-json-positions-', s => { ({ srv, redis, tmp } = s) })

const N = 10000
const NO_ID = [0, 4711, 9999] // records without an id: a missing field
const WRONG = 2500 // its key holds a string: HSET gets WRONGTYPE

/** A one-line document of N records and the byte offset of each element (oracle: what was written). */
function oneLineDocument (prefix) {
  const offsets = []
  const parts = ['[']
  let bytes = 1 // written so far (counted piece by piece: the byte length of the whole text each time was quadratic, 1-2 s a document)
  for (let i = 0; i < N; i++) {
    const element = (i ? ',' : '') + (NO_ID.includes(i) ? `{"x":${i},"name":"é${i}"}` : `{"id":"${prefix}${i}","name":"é${i}"}`)
    offsets.push(bytes + (i ? 1 : 0))
    parts.push(element)
    bytes += Buffer.byteLength(element)
  }
  parts.push(']')
  return { text: parts.join(''), offsets }
}

describe('failures in a one-line JSON document name the element and its byte offset', () => {
  it('a missing field and an error reply, in the terminal line, the summary and the rejects file', async () => {
    const p = 'pos1:'
    const { text, offsets } = oneLineDocument(p)
    expect(text.length).toBeGreaterThan(300 * 1024) // more than one read
    const input = path.join(tmp, 'one-line.json')
    fs.writeFileSync(input, text)
    await redis.set(`${p}h:${p}${WRONG}`, 'a string')
    const rejects = path.join(tmp, 'one-line.rejects')
    const res = await runCli(['import', input, '-c', `HSET ${p}h:{id} name {name}`, '--on-error', 'skip', '--rejects', rejects, '-p', String(srv.port)])
    expect(res.code, res.stderr).toBe(1)
    const lines = res.stderr.split('\n')
    for (const i of NO_ID) expect(lines, `element ${i}`).toContain(`${input}:1: element [${i}] (byte ${offsets[i]}): field "id" is missing`)
    expect(lines.some(l => l.startsWith(`${input}:1: element [${WRONG}] (byte ${offsets[WRONG]}): WRONGTYPE`)), res.stderr).toBe(true)
    // The rejects file has the same offsets.
    const entries = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
    expect(entries.map(e => [e.line, e.offset]).sort((a, b) => a[1] - b[1])).toEqual([0, WRONG, 4711, 9999].map(i => [1, offsets[i]]))
    expect(await redis.hget(`${p}h:${p}1`, 'name')).toBe('é1')
  })

  it('the library\'s failures carry `element`, with --workers 0 and in a worker thread', async () => {
    const p = 'pos2:'
    const { text, offsets } = oneLineDocument(p)
    const input = path.join(tmp, 'lib.json')
    fs.writeFileSync(input, text)
    for (const workers of [0, 1]) {
      const s = await load({ url: srv.url, input, command: `HSET ${p}${workers}:{id} name {name}`, onError: 'skip', workers })
      expect(s.failures.map(f => [f.element, f.offset, f.line]), `workers ${workers}`).toEqual(NO_ID.map(i => [i, offsets[i], 1]))
    }
  })

  it('a document with one record a line: failures name the line, as before', async () => {
    const input = path.join(tmp, 'lines.json')
    fs.writeFileSync(input, '[\n{"id":"a"},\n{"x":1},\n{"id":"c"}\n]\n')
    const res = await runCli(['import', input, '--key', 'pos3:{id}', '--on-error', 'skip', '-p', String(srv.port)])
    expect(res.stderr.split('\n')).toContain(`${input}:3: field "id" is missing`)
  })
})

describe('{$line} over a one-line JSON document is refused before anything is sent', () => {
  for (const extra of [[], ['--batch-size', '1'], ['--workers', '0']]) {
    it(`exit 2, {$n} named, no key written ${extra.join(' ')}`, async () => {
      const p = `line${extra.join('')}:`
      const input = path.join(tmp, `line${extra.join('')}.json`)
      fs.writeFileSync(input, oneLineDocument(p).text)
      const res = await runCli(['import', input, '--key', `${p}{$line}`, ...extra, '-p', String(srv.port)])
      expect(res.code, res.stderr).toBe(2)
      expect(res.stderr).toContain('{$n}')
      expect(res.stderr).toContain(`${input}:1 holds more than one record`)
      expect(res.stderr).not.toMatch(/\n\s+at /) // no stack trace
      expect(await redis.keys(`${p}*`)).toEqual([])
    })
  }

  it('one record a line (and --ttl, which writes the same record\'s {$line} twice): every record its own key', async () => {
    const input = path.join(tmp, 'pretty.json')
    fs.writeFileSync(input, '[\n' + Array.from({ length: 1000 }, (_, i) => `  {"v":"${i}"}`).join(',\n') + '\n]\n')
    const res = await runCli(['import', input, '-c', 'SET pretty:{$line} {v}', '--ttl', '100', '-p', String(srv.port)])
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.get('pretty:2')).toBe('0')
    expect(await redis.get('pretty:1001')).toBe('999')
    expect((await redis.keys('pretty:*')).length).toBe(1000)
  })
})
