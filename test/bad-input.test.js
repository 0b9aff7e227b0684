'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// Bad input in every format, table-driven, against a private redis-server: each case is
// loaded with --on-error abort (the default) and skip, on the main thread and in the
// encode worker, and through the CLI. Accepted: a coded PipeloadError naming file:line
// (file@offset for gzip) and the reason, the documented exit code, and no record lost:
// Redis holds exactly the good records before the bad one (abort, or a fatal error), or
// every good record (skip). The rejects file gets the bad record with its raw text.

const fs = require('node:fs')
const path = require('node:path')
const zlib = require('node:zlib')
const { useServer } = require('./helpers/redis-server')
const { runCli: cli } = require('./helpers/run-cli')
const { load, PipeloadError } = require('../lib')
const { formatFailure } = require('../lib/run/reporter')

const STACK = /\n\s+at /

const csv = (...rows) => rows.join('\n') + '\n'
const bytes = (...parts) => Buffer.concat(parts.map(p => typeof p === 'number' ? Buffer.from([p]) : Buffer.from(p)))
const gz = zlib.gzipSync(Buffer.from('id,v\n' + Array.from({ length: 3000 }, (_, i) => `${i + 1},v${i + 1}`).join('\n') + '\n'))
const corruptGz = Buffer.from(gz)
corruptGz.fill(0x55, 12, 30) // the start of the deflate data: zlib fails at once (damage further on can decompress to garbage rows first)
const deep = '['.repeat(100000) + ']'.repeat(100000)

/**
 * name, file name (format from it), content, options; code, exit (CLI, abort), message
 * (after "file:"), the ids loaded in abort mode (`before`) and skip mode (`skip`: null when
 * the error is fatal in skip mode too, then `before` applies), the bad record's raw text;
 * `whole`: the error is about the whole file, not a record (none counted, no rejects line).
 */
const CASES = [
  { name: 'CSV unclosed quote', file: 'q.csv', content: csv('id,v', '1,a', '2,"b', '3,c'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: Quote Not Closed/, before: ['1'], skip: null },
  { name: 'CSV ragged row', file: 'r.csv', content: csv('id,v', '1,a', '2,b,x', '3,c'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: Invalid Record Length: the header has 2 fields, got 3$/, before: ['1'], skip: ['1', '3'], raw: '2,b,x' },
  { name: 'CSV short row', file: 'r2.csv', content: csv('id,v', '1,a', '2', '3,c'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: Invalid Record Length: the header has 2 fields, got 1$/, before: ['1'], skip: ['1', '3'], raw: '2' },
  { name: 'CSV stray quote in an unquoted field', file: 's.csv', content: csv('id,v', '1,a', '2,b"x', '3,c'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: Invalid Opening Quote: a quote is found in field 2 "v", not at its start, value is "b"; to read such quotes as data .*, use --relax-quotes \(relaxQuotes\)$/, before: ['1'], skip: ['1', '3'], raw: '2,b"x' },
  { name: 'CSV text after a closing quote', file: 'c.csv', content: csv('id,v', '1,a', '2,"b"x', '3,c'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: Invalid Closing Quote: got "x" .* \(field 2 "v"\); --relax-quotes \(relaxQuotes\) keeps such a field as written, quotes included$/, before: ['1'], skip: ['1', '3'], raw: '2,"b"x' },
  { name: 'CSV bad quote in a multi-line field', file: 'm.csv', content: 'id,v\r\n1,a\r\n2,"b\r\nb"x\r\n3,c\r\n', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: Invalid Closing Quote/, before: ['1'], skip: ['1', '3'], raw: '2,"b\r\nb"x' },
  { name: 'CSV invalid UTF-8', file: 'u.csv', content: bytes('id,v\n1,a\n2,b', 0xff, '\n3,c\n'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: invalid UTF-8 at byte 12 /, before: ['1'], skip: ['1', '3'], raw: '2,b\ufffd' },
  { name: 'CSV UTF-8 cut mid-character', file: 'u2.csv', content: bytes('id,v\n1,a\n2,', 0xc3, '\n3,\u00e9\n'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: invalid UTF-8 at byte 11 /, before: ['1'], skip: ['1', '3'] },
  { name: 'CSV value over --max-record-size', file: 'big.csv', content: csv('id,v', '1,a', '2,' + 'x'.repeat(100), '3,c'), options: { maxRecordSize: 50 }, code: 'PIPELOAD_RECORD_TOO_LARGE', exit: 3, message: /^3: Max Record Size/, before: ['1'], skip: null },
  { name: 'TSV ragged row', file: 't.tsv', content: csv('id\tv', '1\ta', '2\tb\tx', '3\tc'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^3: Invalid Record Length/, before: ['1'], skip: ['1', '3'], raw: '2\tb\tx' },
  { name: 'NDJSON line not JSON', file: 'n.ndjson', content: csv('{"id":"1","v":"a"}', '{"id":"2","v":', '{"id":"3","v":"c"}'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: not valid JSON: /, before: ['1'], skip: ['1', '3'], raw: '{"id":"2","v":' },
  { name: 'NDJSON invalid UTF-8', file: 'u.ndjson', content: bytes('{"id":"1","v":"a"}\n{"id":"2","v":"', 0xfe, '"}\n{"id":"3","v":"c"}\n'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: invalid UTF-8 at byte 34 /, before: ['1'], skip: ['1', '3'] },
  { name: 'NDJSON raw NUL inside a string', file: 'nul.ndjson', content: bytes('{"id":"1","v":"a"}\n{"id":"2","v":"', 0, '"}\n{"id":"3","v":"c"}\n'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: not valid JSON: Bad control character/, before: ['1'], skip: ['1', '3'] },
  { name: 'NDJSON line over --max-record-size', file: 'big.ndjson', content: csv('{"id":"1","v":"a"}', `{"id":"2","v":"${'x'.repeat(100)}"}`, '{"id":"3","v":"c"}'), options: { maxRecordSize: 50 }, code: 'PIPELOAD_RECORD_TOO_LARGE', exit: 3, message: /^2: line is longer than maxRecordSize \(50 bytes\)$/, before: ['1'], skip: ['1', '3'] },
  { name: 'NDJSON record missing a template field', file: 'mf.ndjson', content: csv('{"id":"1","v":"a"}', '{"id":"2"}', '{"id":"3","v":"c"}'), code: 'PIPELOAD_RECORD_FAILED', failureCode: 'PIPELOAD_FIELD_MISSING', exit: 1, message: /^2: field "v" is missing/, before: ['1'], skip: ['1', '3'], raw: '{"id":"2"}' },
  { name: 'NDJSON record with a null field', file: 'nf.ndjson', content: csv('{"id":"1","v":"a"}', '{"id":"2","v":null}', '{"id":"3","v":"c"}'), code: 'PIPELOAD_RECORD_FAILED', failureCode: 'PIPELOAD_FIELD_MISSING', exit: 1, message: /^2: field "v" is null/, before: ['1'], skip: ['1', '3'] },
  { name: 'JSON truncated', file: 't.json', content: '[{"id":"1","v":"a"},\n{"id":"2","v":"b"', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: unexpected end of input inside an array element \(truncated JSON\?\)$/, before: ['1'], skip: null },
  { name: 'JSON array not closed', file: 't2.json', content: '[{"id":"1","v":"a"},\n', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: unexpected end of input: the array is not closed/, before: ['1'], skip: null },
  { name: 'JSON trailing garbage', file: 'g.json', content: '[{"id":"1","v":"a"}]\nxyz', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: unexpected 'x' after the end of the document$/, before: ['1'], skip: null },
  // Shape errors of the document are errors of the whole input, not one failed record: whole.
  { name: 'JSON not an array', file: 'o.json', content: '"id,v"', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^1: expected a JSON array, or an object keyed by id, at the top level, got '"'/, before: [], skip: null, whole: true },
  { name: 'JSON empty', file: 'e.json', content: '', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^ the input is empty \(no JSON document\), expected a JSON array$/, before: [], skip: null, whole: true },
  { name: '--json-path finds nothing', file: 'p.json', content: '{"data":{"other":[]}}', options: { jsonPath: 'data.items' }, code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^1: --json-path "data.items": no key "items" in "data" \(its keys: "other"\)$/, before: [], skip: null, whole: true },
  { name: '--json-path is not an array', file: 'p2.json', content: '{"data":{"items":5}}', options: { jsonPath: 'data.items' }, code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^1: --json-path "data.items" is not an array or an object \(got '5'\)$/, before: [], skip: null, whole: true },
  { name: 'JSON element not valid', file: 'x.json', content: '[{"id":"1","v":"a"},\n{"id":"2","v":tru},\n{"id":"3","v":"c"}]', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: not valid JSON: /, before: ['1'], skip: ['1', '3'], raw: '{"id":"2","v":tru}' },
  { name: 'JSON element nested 100k deep', file: 'd.json', content: '[{"id":"1","v":"a"},\n' + deep + ',\n{"id":"3","v":"c"}]', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: array element nested more than 1000 levels deep$/, before: ['1'], skip: ['1', '3'] },
  { name: 'JSON value nested 100k deep', file: 'd2.json', content: '[{"id":"1","v":"a"},\n{"id":"2","v":' + deep + '},\n{"id":"3","v":"c"}]', code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: array element nested more than 1000 levels deep$/, before: ['1'], skip: ['1', '3'] },
  { name: 'JSON invalid UTF-8 in an element', file: 'u.json', content: bytes('[{"id":"1","v":"a"},\n{"id":"2","v":"', 0xc0, 0xaf, '"},\n{"id":"3","v":"c"}]'), code: 'PIPELOAD_INPUT_INVALID', exit: 3, message: /^2: invalid UTF-8 at byte 36; the input is not UTF-8: convert it first, e.g. iconv -f latin1 -t utf-8 \S*u\.json \| pipeload import - --format json … \(-f cp1252 for a Windows export\)$/, before: ['1'], skip: ['1', '3'] },
  { name: 'JSON non-object record', file: 'no.json', content: '[{"id":"1","v":"a"},\n42,\n{"id":"3","v":"c"}]', code: 'PIPELOAD_RECORD_FAILED', failureCode: 'PIPELOAD_FIELD_MISSING', exit: 1, message: /^2: field "id" is missing/, before: ['1'], skip: ['1', '3'], raw: '42' },
  { name: 'JSON non-object record with *', file: 'ns.json', content: '[{"id":"1","v":"a"},\n"str",\n{"id":"3","v":"c"}]', options: { command: 'HSET {{P}}{id} *' }, code: 'PIPELOAD_RECORD_FAILED', failureCode: 'PIPELOAD_FIELD_MISSING', exit: 1, message: /^2: "\*" needs a record that is an object, got "str"/, before: ['1'], skip: ['1', '3'] },
  { name: 'JSON element over --max-record-size', file: 'big.json', content: `[{"id":"1","v":"a"},\n{"id":"2","v":"${'x'.repeat(100)}"}]`, options: { maxRecordSize: 50 }, code: 'PIPELOAD_RECORD_TOO_LARGE', exit: 3, message: /^2: array element is larger than maxRecordSize \(50 bytes\)$/, before: ['1'], skip: null },
  { name: 'gzip truncated', file: 'cut.csv.gz', content: gz.subarray(0, gz.length - 30), code: 'PIPELOAD_INPUT_INVALID', exit: 3, gzip: true, message: /^@\d+: gzip data is corrupt or truncated/, skip: null },
  { name: 'gzip corrupt', file: 'bad.csv.gz', content: corruptGz, code: 'PIPELOAD_INPUT_INVALID', exit: 3, gzip: true, message: /^@\d+: gzip data is corrupt or truncated/, skip: null }
]

let srv
let redis
let tmp
let n = 0
useServer('pipeload-bad-', s => { ({ srv, redis, tmp } = s) })

function setup (c) {
  const prefix = `bad${++n}:`
  const dir = fs.mkdtempSync(path.join(tmp, 'c-'))
  const file = path.join(dir, c.file)
  fs.writeFileSync(file, c.content)
  const { command, ...options } = c.options || {}
  return { prefix, file, dir, options, command: (command || 'HSET {{P}}{id} v {v}').replace('{{P}}', prefix) }
}

/** Ids of the hashes under prefix, sorted numerically. */
async function ids (prefix) {
  const keys = await redis.keys(prefix + '*')
  return keys.map(k => k.slice(prefix.length)).sort((a, b) => a - b)
}

/** The message after "file" must be ":line: reason" (or "@offset: reason"). */
function expectWhere (message, file, re) {
  expect(message.startsWith(file), message).toBe(true)
  expect(message.slice(file.length + (message[file.length] === ':' ? 1 : 0)), message).toMatch(re)
}

async function expectGzipPrefix (prefix, summary) {
  // Every record read before the damage is loaded: ids 1..loaded, nothing else.
  const got = await ids(prefix)
  expect(got.length).toBe(summary ? summary.loaded : 0) // no summary: it failed before the header was read
  expect(got).toEqual(Array.from({ length: got.length }, (_, i) => String(i + 1)))
}

for (const worker of [false, true]) {
  describe(`bad input, library (worker: ${worker})`, () => {
    for (const c of CASES) {
      it(`${c.name}: abort stops with ${c.code}, nothing before it lost`, async () => {
        const s = setup(c)
        const rejects = path.join(s.dir, 'rejects.ndjson')
        const err = await load({ url: srv.url, input: s.file, command: s.command, workers: worker ? 1 : 0, rejects, ...s.options }).then(() => null, e => e)
        expect(err).toBeInstanceOf(PipeloadError)
        expect(err.code).toBe(c.code)
        expect(err.exitCode).toBe(c.exit)
        expectWhere(err.message, s.file, c.message)
        // The position rides along as properties, the same as the message says (a caller
        // should not have to parse the text).
        expect(err.file).toBe(s.file)
        if (c.gzip) expect(err.message.startsWith(`${s.file}@${err.compressedOffset}: `), err.message).toBe(true)
        else if (!c.whole) expect(err.message.startsWith(`${s.file}:${err.line}: `), `${err.line} ${err.message}`).toBe(true)
        const sum = err.summary
        if (c.gzip) return expectGzipPrefix(s.prefix, sum)
        if (c.whole) return expect(sum).toMatchObject({ records: 0, loaded: 0, errors: 0, failures: [] })
        expect(await ids(s.prefix)).toEqual(c.before)
        expect(sum.loaded).toBe(c.before.length)
        expect(sum.errors).toBe(1)
        expect(sum.stoppedAt).toMatchObject({ file: s.file, line: err.line })
        const lines = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatchObject({ file: s.file, line: err.line, code: c.failureCode || c.code, source: 'input' })
        if (c.raw !== undefined) expect(lines[0].raw).toBe(c.raw)
      })

      it(`${c.name}: skip ${c.skip ? 'rejects the record and loads the rest' : 'is still fatal'}`, async () => {
        const s = setup(c)
        const rejects = path.join(s.dir, 'rejects.ndjson')
        const run = load({ url: srv.url, input: s.file, command: s.command, workers: worker ? 1 : 0, onError: 'skip', rejects, ...s.options })
        if (!c.skip) {
          const err = await run.then(() => null, e => e)
          expect(err).toBeInstanceOf(PipeloadError)
          expect(err.code).toBe(c.code)
          expectWhere(err.message, s.file, c.message)
          if (c.gzip) return expectGzipPrefix(s.prefix, err.summary)
          expect(await ids(s.prefix)).toEqual(c.before)
          return
        }
        const summary = await run
        expect(await ids(s.prefix)).toEqual(c.skip)
        expect(summary).toMatchObject({ records: c.skip.length + 1, loaded: c.skip.length, errors: 1, stoppedAt: null })
        const f = summary.failures[0]
        expect(f.code).toBe(c.failureCode || c.code)
        expectWhere(formatFailure(f), s.file, c.message)
        const lines = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatchObject({ file: s.file, line: f.line, offset: f.offset, code: f.code, source: 'input' })
        expect(`${lines[0].line}: ${lines[0].reason}`).toMatch(c.message) // the reason without file:line
        if (c.raw !== undefined) expect(lines[0].raw).toBe(c.raw)
      })
    }
  })
}

describe('bad input, NUL bytes', () => {
  it('a NUL byte in a CSV value is written as it is (Redis strings are binary-safe)', async () => {
    const c = { file: 'nul.csv', content: bytes('id,v\n1,a', 0, 'b\n2,c\n') }
    const s = setup(c)
    const summary = await load({ url: srv.url, input: s.file, command: s.command, workers: 0 })
    expect(summary).toMatchObject({ records: 2, loaded: 2, errors: 0 })
    expect(await redis.hget(`${s.prefix}1`, 'v')).toBe('a\u0000b')
  })

  it('an escaped \\u0000 in JSON is written as a NUL byte', async () => {
    const s = setup({ file: 'nul.ndjson', content: '{"id":"1","v":"a\\u0000b"}\n' })
    await load({ url: srv.url, input: s.file, command: s.command, workers: 0 })
    expect(await redis.hget(`${s.prefix}1`, 'v')).toBe('a\u0000b')
  })
})

describe('bad input, CLI', () => {
  for (const c of CASES) {
    it(`${c.name}: exit ${c.exit}, one clear line, no stack`, async () => {
      const s = setup(c)
      const args = ['import', s.file, '-c', s.command, '-u', srv.url, '--workers', '0']
      if (c.options?.maxRecordSize) args.push('--max-record-size', String(c.options.maxRecordSize))
      if (c.options?.jsonPath) args.push('--json-path', c.options.jsonPath)
      const res = await cli(args)
      expect(res.code, res.stderr).toBe(c.exit)
      expect(res.stderr).not.toMatch(STACK)
      expect(res.stderr).not.toMatch(/internal error/)
      const first = res.stderr.split('\n')[0]
      expect(first.startsWith(`pipeload: ${s.file}`), first).toBe(true)
      expectWhere(first.slice('pipeload: '.length), s.file, c.message)
      if (!c.gzip && c.before.length) {
        expect(res.stderr).toContain(`nothing from ${s.file}:`)
        expect(await ids(s.prefix)).toEqual(c.before)
      }
    })
  }

  it('--on-error skip: exit 1, each bad record printed, the rest loaded, the rejects file written', async () => {
    const c = CASES.find(x => x.name === 'CSV ragged row')
    const s = setup(c)
    const rejects = path.join(s.dir, 'rej.ndjson')
    const res = await cli(['import', s.file, '-c', s.command, '-u', srv.url, '--on-error', 'skip', '--rejects', rejects])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain(`${s.file}:3: Invalid Record Length`)
    expect(res.stderr).toContain(`1 failed record written to ${rejects}`)
    expect(await ids(s.prefix)).toEqual(['1', '3'])
    expect(JSON.parse(fs.readFileSync(rejects, 'utf8'))).toEqual({ file: s.file, line: 3, offset: 9, code: 'PIPELOAD_INPUT_INVALID', reason: 'Invalid Record Length: the header has 2 fields, got 3', source: 'input', raw: '2,b,x' })
  })
})
