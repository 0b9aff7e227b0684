'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Record values and fields end to end, on every reader path: the CSV fast path and
// csv-parse, the NDJSON fast path (flat lines) and its JSON.parse path (other lines), JSON
// documents and library iterables. Issue 10 items 3 (prototype names are not fields),
// 4 (binary values byte-exact), 9 (deep nesting), 12 (`*` order, lone surrogates, counts).

const fs = require('node:fs')
const path = require('node:path')
const { Writable } = require('node:stream')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')

let srv, redis, tmp
useServer('pipeload-values-', s => { ({ srv, redis, tmp } = s) })

let n = 0
function file (name, content) {
  const dir = fs.mkdtempSync(path.join(tmp, 'v-'))
  const p = path.join(dir, name)
  fs.writeFileSync(p, content)
  return p
}

/** A dry run into memory: { out (Buffer), summary } or { err }. */
async function dry (options, mode = 'text') {
  const chunks = []
  const output = new Writable({ write (c, e, cb) { chunks.push(Buffer.from(c)); cb() } })
  try {
    const summary = await load({ dryRun: mode, output, workers: 0, ...options })
    return { out: Buffer.concat(chunks), summary }
  } catch (err) {
    return { out: Buffer.concat(chunks), err }
  }
}

// The same two records in every format: a field named like an Object.prototype member, and
// a nested value (so the NDJSON line goes through JSON.parse, not the fast path).
const PROTO_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString']
const INPUTS = {
  'csv fast path': () => ({ input: file('p.csv', 'id,v\n1,a\n2,b\n') }),
  'csv-parse path': () => ({ input: file('p.csv', 'id::v\n1::a\n2::b\n'), delimiter: '::' }),
  'ndjson fast path': () => ({ input: file('p.ndjson', '{"id":"1","v":"a"}\n{"id":"2","v":"b"}\n') }),
  'ndjson JSON.parse path': () => ({ input: file('p.ndjson', '{"id":"1","v":"a","n":{"x":1}}\n{"id":"2","v":"b","n":[1]}\n') }),
  'json document': () => ({ input: file('p.json', '[{"id":"1","v":"a","n":{}},{"id":"2","v":"b"}]') }),
  'iterable of objects': () => ({ input: [{ id: '1', v: 'a', n: {} }, { id: '2', v: 'b', n: [] }] }),
  'iterable of class instances': () => {
    class Rec { constructor (id, v) { this.id = id; this.v = v } get extra () { return 'x' } }
    Rec.prototype.inherited = 'from the prototype'
    return { input: [new Rec('1', 'a'), new Rec('2', 'b')] }
  }
}

describe('template fields are own properties only (issue 10 item 3)', () => {
  for (const [pathName, input] of Object.entries(INPUTS)) {
    it(`${pathName}: {constructor}, {toString}, {__proto__}, {constructor.name}, {v.length}… are missing fields`, async () => {
      const templates = [...PROTO_NAMES.map(p => `{${p}}`), '{constructor.name}', '{__proto__.constructor}', '{v.length}', '{id.constructor}', '{inherited}', '{extra}']
      for (const [t, mode] of templates.flatMap(t => [[t, 'text'], [t, 'resp']])) { // resp: the fast paths' writes
        const { out, err, summary } = await dry({ ...input(), command: `SET k:${t} 1`, onError: 'skip' }, mode)
        if (pathName.startsWith('csv')) { // a header names the fields: the template is refused before any record
          expect(err?.code, `${pathName} ${t}`).toBe('PIPELOAD_TEMPLATE_INVALID')
          continue
        }
        expect(err, `${pathName} ${t}`).toBeUndefined()
        expect(out.toString(), `${pathName} ${t}`).toBe('')
        expect(summary.errors, `${pathName} ${t}`).toBe(2)
        expect(summary.failures.map(f => f.code), `${pathName} ${t}`).toEqual(['PIPELOAD_FIELD_MISSING', 'PIPELOAD_FIELD_MISSING'])
      }
    })
  }

  it('a real column or key named like a prototype member is a field on every path', async () => {
    const cases = [
      { input: file('c.csv', 'id,constructor,__proto__,toString\n1,c,p,t\n') },
      { input: file('c.csv', 'id;constructor;__proto__;toString\n1;c;p;t\n'), delimiter: ';' },
      { input: file('c.csv', 'id::constructor::__proto__::toString\n1::c::p::t\n'), delimiter: '::' },
      { input: file('c.ndjson', '{"id":"1","constructor":"c","__proto__":"p","toString":"t"}\n') },
      { input: file('c.ndjson', '{"id":"1","constructor":"c","__proto__":"p","toString":"t","n":{}}\n') },
      { input: file('c.json', '[{"id":"1","constructor":"c","__proto__":"p","toString":"t"}]') },
      { input: [JSON.parse('{"id":"1","constructor":"c","__proto__":"p","toString":"t"}')] }
    ]
    for (const c of cases) {
      const commands = ['SET k:{id} {constructor}:{__proto__}:{toString}', 'HSET h:{id} *']
      const { out, err } = await dry({ ...c, commands })
      expect(err, JSON.stringify(c.input)).toBeUndefined()
      expect(out.toString().split('\n')[0], JSON.stringify(c.input)).toBe('SET k:1 c:p:t')
      expect(out.toString().split('\n')[1], JSON.stringify(c.input)).toMatch(/^HSET h:1 id 1 constructor c __proto__ p toString t( n \{\})?$/)
      const resp = await dry({ ...c, commands }, 'resp')
      expect(resp.out.toString(), JSON.stringify(c.input)).toMatch(/^\*3\r\n\$3\r\nSET\r\n\$3\r\nk:1\r\n\$5\r\nc:p:t\r\n\*1[02]\r\n\$4\r\nHSET\r\n\$3\r\nh:1\r\n\$2\r\nid\r\n\$1\r\n1\r\n\$11\r\nconstructor\r\n\$1\r\nc\r\n\$9\r\n__proto__\r\n\$1\r\np\r\n/)
    }
  })

  it('dotted paths read own properties at every level; a key with a dot still wins', async () => {
    const input = file('d.ndjson', [
      '{"id":"1","a":{"constructor":{"name":"own"}}}',
      '{"id":"2","a":{"b":"x"}}',
      '{"id":"3","a.constructor":"dotted key"}'
    ].join('\n') + '\n')
    const { out, summary } = await dry({ input, command: 'SET k:{id} {a.constructor.name}', onError: 'skip' })
    expect(out.toString()).toBe('SET k:1 own\n')
    expect(summary.failures.map(f => [f.line, f.code])).toEqual([[2, 'PIPELOAD_FIELD_MISSING'], [3, 'PIPELOAD_FIELD_MISSING']])
    const dotted = await dry({ input, command: 'SET k:{id} {a.constructor}', onError: 'skip' })
    expect(dotted.out.toString()).toBe('SET k:1 "{\\"name\\":\\"own\\"}"\nSET k:3 "dotted key"\n')
  })

  it('arrays: {0} is an element; {length} and other array members are not fields', async () => {
    const headerless = file('h.csv', 'a,b\n')
    const ok = await dry({ input: headerless, header: false, command: 'SET k:{0} {1}' })
    expect(ok.out.toString()).toBe('SET k:a b\n')
    const arrays = await dry({ input: [['a', 'b']], command: 'SET k:{0} {1}' })
    expect(arrays.out.toString()).toBe('SET k:a b\n')
    for (const t of ['{length}', '{map}', '{2}', '{constructor}']) {
      const r = await dry({ input: [['a', 'b']], command: `SET k:${t} 1` })
      expect(r.err?.failure?.code, t).toBe('PIPELOAD_FIELD_MISSING')
    }
    const inJson = await dry({ input: file('a.ndjson', '{"id":"1","tags":["x","y"]}\n'), command: 'SET k:{id} {tags.length}' })
    expect(inJson.err?.failure?.code).toBe('PIPELOAD_FIELD_MISSING')
    const element = await dry({ input: file('a.ndjson', '{"id":"1","tags":["x","y"]}\n'), command: 'SET k:{id} {tags.1}' })
    expect(element.out.toString()).toBe('SET k:1 y\n')
  })

  it('the CLI: --key h:{constructor.name} fails each record instead of loading one hash h:Object', async () => {
    const input = file('cli.ndjson', '{"id":"1","n":{"x":1}}\n{"id":"2","n":{"x":2}}\n')
    const res = await runCli(['import', input, '--key', `v${++n}:{constructor.name}`, '--on-error', 'skip', '-p', String(srv.port)])
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/cli\.ndjson:1: field "constructor\.name" is missing/)
    expect(await redis.keys(`v${n}:*`)).toEqual([])
  })
})

describe('binary values go out byte-exact (issue 10 item 4)', () => {
  const BYTES = Buffer.from([0xff, 0xfe, 0x80, 0x00, 0x0d, 0x0a, 0x41])
  const views = {
    Buffer: () => Buffer.from(BYTES),
    Uint8Array: () => new Uint8Array(BYTES),
    'Uint8Array (a slice of a larger buffer)': () => { const big = new Uint8Array(BYTES.length + 8); big.set(BYTES, 4); return big.subarray(4, 4 + BYTES.length) },
    Int8Array: () => new Int8Array(new Uint8Array(BYTES).buffer),
    Uint16Array: () => new Uint16Array(new Uint8Array([...BYTES, 0x42]).buffer),
    DataView: () => new DataView(new Uint8Array(BYTES).buffer),
    ArrayBuffer: () => new Uint8Array(BYTES).buffer
  }
  const bytesOf = v => v instanceof ArrayBuffer ? Buffer.from(v) : Buffer.from(v.buffer, v.byteOffset, v.byteLength)

  for (const [kind, make] of Object.entries(views)) {
    it(`${kind} from map() and in iterable records (template field, *, key parts) is stored as its bytes`, async () => {
      const p = `bin${++n}:`
      const value = make()
      const want = bytesOf(value)
      await load({
        url: srv.url,
        input: [{ id: '1' }],
        map: r => [['SET', Buffer.concat([Buffer.from(p + 'm:'), BYTES]), make()], ['HSET', p + 'mh', make(), make()]]
      })
      expect(await redis.getBuffer(Buffer.concat([Buffer.from(p + 'm:'), BYTES]))).toEqual(want)
      expect(await redis.hkeysBuffer(p + 'mh')).toEqual([want])
      expect(await redis.hgetBuffer(p + 'mh', want)).toEqual(want)

      await load({ url: srv.url, input: [{ id: '2', blob: make(), s: 'é' }], commands: [`SET ${p}t:{id} {blob}`, `SET ${p}parts:{id} x{blob}y{s}`, `HSET ${p}h:{id} *`] })
      expect(await redis.getBuffer(`${p}t:2`)).toEqual(want)
      expect(await redis.getBuffer(`${p}parts:2`)).toEqual(Buffer.concat([Buffer.from('x'), want, Buffer.from('yé')]))
      expect(await redis.hgetBuffer(`${p}h:2`, 'blob')).toEqual(want)
      expect(await redis.hget(`${p}h:2`, 's')).toBe('é')
    })
  }

  it('dry run: resp is byte-exact, text quotes bytes as redis-cli does (\\xHH)', async () => {
    const resp = await dry({ input: [{ id: '1' }], map: () => [['SET', 'k', Buffer.from(BYTES)]] }, 'resp')
    expect(resp.out).toEqual(Buffer.concat([Buffer.from('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$7\r\n'), BYTES, Buffer.from('\r\n')]))
    const text = await dry({ input: [{ id: '1', b: new Uint8Array([0x61, 0x22, 0x5c, 0xc3, 0xa9]) }], map: r => [['SET', 'k', Buffer.from(BYTES)], ['SET', 'plain', Buffer.from('abc')], ['SET', 'q', r.b]] })
    expect(text.out.toString()).toBe('SET k "\\xff\\xfe\\x80\\x00\\r\\nA"\nSET plain abc\nSET q "a\\"\\\\\\xc3\\xa9"\n')
  })

  it('--ttl with map(): a binary key gets its EXPIRE', async () => {
    const key = Buffer.concat([Buffer.from(`bin${++n}:`), BYTES])
    await load({ url: srv.url, input: [{ id: '1' }], map: () => [['SET', key, 'v']], ttl: 100 })
    expect(await redis.ttl(key)).toBeGreaterThan(0)
  })
})

describe('deep nesting is a per-record input error, never a stack overflow (issue 10 item 9)', () => {
  const deepObject = d => '{"a":'.repeat(d) + '1' + '}'.repeat(d)
  const deepArray = d => '['.repeat(d) + ']'.repeat(d)
  const lines = [
    '{"id":"1","v":"a"}',
    `{"id":"2","v":${deepObject(5000)}}`,
    `{"id":"3","v":${deepArray(5000)}}`,
    deepArray(5000),
    `{"id":"5","v":{"x":${deepArray(999)}}}`, // 1001 levels with the record and "v": refused too
    `{"id":"6","v":${deepArray(990)}}`, // within the limit: loaded, its value as JSON text
    '{"id":"7","v":"g"}'
  ]

  for (const template of ['HSET {{P}}{id} *', 'SET {{P}}{id} {v}']) {
    it(`NDJSON 5000 levels deep, ${template}: abort stops at line 2 (exit 3), skip fails lines 2-5 and goes on`, async () => {
      const input = file('deep.ndjson', lines.join('\n') + '\n')
      const p = `deep${++n}:`
      const command = template.replace('{{P}}', p)
      const err = await load({ url: srv.url, input, command }).then(() => null, e => e)
      expect(err.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(err.exitCode).toBe(3)
      expect(err.message).toMatch(/deep\.ndjson:2: a value nested more than 1000 levels deep/)
      expect(err.summary).toMatchObject({ records: 2, loaded: 1, errors: 1 })
      const p2 = `deep${++n}:`
      const summary = await load({ url: srv.url, input, command: template.replace('{{P}}', p2), onError: 'skip' })
      expect(summary.failures.filter(f => f.code === 'PIPELOAD_INPUT_INVALID').map(f => f.line)).toEqual([2, 3, 4, 5])
      expect(summary.records).toBe(7)
      expect(summary.loaded + summary.errors).toBe(7)
      expect(await redis.exists(`${p2}1`, `${p2}7`)).toBe(2)
    })
  }

  it('the CLI: no "Maximum call stack size exceeded", a file:line message and exit 3', async () => {
    const input = file('deep-cli.ndjson', lines.join('\n') + '\n')
    const res = await runCli(['import', input, '--key', `deep${++n}:{id}`, '-p', String(srv.port)])
    expect(res.code).toBe(3)
    expect(res.stderr).toMatch(/deep-cli\.ndjson:2: a value nested more than 1000 levels deep/)
    expect(res.stderr).not.toMatch(/call stack|\n\s+at /)
  })

  it('library records too deep to write as JSON text fail one by one with a code', async () => {
    let deep = 1
    for (let i = 0; i < 100000; i++) deep = { a: deep }
    const circular = { id: '3' }
    circular.v = circular
    const input = [{ id: '1', v: 'a' }, { id: '2', v: deep }, circular, { id: '4', v: 10n ** 30n }, { id: '5', v: { big: 1n } }, { id: '6', v: () => 1 }, { id: '7', v: 'g' }]
    for (const command of ['HSET k:{id} *', 'SET k:{id} {v}']) {
      const { summary, err } = await dry({ input, command, onError: 'skip' }, 'resp')
      expect(err).toBeUndefined()
      expect(summary.failures.map(f => [f.line, f.code]), command).toEqual([[2, 'PIPELOAD_RECORD_INVALID'], [3, 'PIPELOAD_RECORD_INVALID'], [5, 'PIPELOAD_RECORD_INVALID'], [6, 'PIPELOAD_RECORD_INVALID']])
      expect(summary.failures[0].message).toBe('field "v" is nested too deeply to write as JSON text')
      expect(summary.loaded).toBe(3)
    }
    // a dotted path walks the nesting without recursion
    const { out } = await dry({ input: [{ id: '1', v: deep }], command: 'SET k:{id} {v.a.a.a.a}', onError: 'skip' })
    expect(out.toString()).toBe('')
  })
})

describe('`*` is the input order, own properties only (issue 10 item 12)', () => {
  const WANT = 'HSET k:1 id 1 b x 2 y 10 z a w'
  const order = {
    'csv fast path': { input: () => file('o.csv', 'id,b,2,10,a\n1,x,y,z,w\n') },
    'csv-parse path': { input: () => file('o.csv', 'id::b::2::10::a\n1::x::y::z::w\n'), delimiter: '::' },
    'ndjson fast path': { input: () => file('o.ndjson', '{"id":"1","b":"x","2":"y","10":"z","a":"w"}\n') },
    'ndjson JSON.parse path': { input: () => file('o.ndjson', '{"id":"1","b":"x","2":"y","10":"z","a":"w","n":null,"e":"\\u0041"}\n'), extra: ' e A' },
    'ndjson, a repeated key keeps its first place': { input: () => file('o.ndjson', '{"id":"1","b":"x","2":"q","10":"z","a":"w","2":"y"}\n') },
    'json document': { input: () => file('o.json', '[{"id":"1","b":"x","2":"y","10":"z","a":"w"}]') },
    'json document, pretty': { input: () => file('o.json', '[\n  {\n    "id" : "1",\n    "b" : "x",\n    "2" : "y",\n    "10" : "z",\n    "a" : "w"\n  }\n]\n') }
  }
  for (const [name, c] of Object.entries(order)) {
    it(`${name}: HSET * writes pairs in the input's order (integer-like keys too)`, async () => {
      for (const mode of ['text', 'resp']) {
        const opts = { input: c.input(), delimiter: c.delimiter, command: 'HSET k:{id} *' }
        const { out, err } = await dry(opts, mode)
        expect(err, `${name} ${mode}`).toBeUndefined()
        const args = WANT.split(' ').concat(c.extra ? c.extra.trim().split(' ') : [])
        const want = mode === 'text' ? args.join(' ') + '\n' : `*${args.length}\r\n` + args.map(a => `$${a.length}\r\n${a}\r\n`).join('')
        expect(out.toString(), `${name} ${mode}`).toBe(want)
      }
    })
  }

  it('the NDJSON fast path falls back to an object for a dotted field and keeps the order', async () => {
    const input = file('o.ndjson', '{"id":"1","b":"x","2":"y","10":"z","c.d":"w"}\n')
    const args = ['HSET', 'k:w', 'id', '1', 'b', 'x', '2', 'y', '10', 'z', 'c.d', 'w']
    const text = await dry({ input, command: 'HSET k:{c.d} *' })
    expect(text.out.toString()).toBe(args.join(' ') + '\n')
    const resp = await dry({ input, command: 'HSET k:{c.d} *' }, 'resp')
    expect(resp.out.toString()).toBe(`*${args.length}\r\n` + args.map(a => `$${a.length}\r\n${a}\r\n`).join(''))
  })

  it('class instances: * writes own enumerable properties only, not what the prototype holds', async () => {
    class Rec { constructor (id) { this.id = id; this.b = 'x' } get computed () { return 'no' } method () {} }
    Rec.prototype.inherited = 'no'
    const proto = { fromProto: 'no' }
    const made = Object.create(proto)
    made.id = '2'
    made.b = 'y'
    const hidden = { id: '3', b: 'z' }
    Object.defineProperty(hidden, 'secret', { value: 'no', enumerable: false })
    const input = [new Rec('1'), made, hidden]
    for (const mode of ['text', 'resp']) {
      const { out } = await dry({ input, command: 'HSET k:{id} *' }, mode)
      expect(out.toString(), mode).not.toMatch(/no|inherited|fromProto|computed|secret/)
    }
    const { out } = await dry({ input, command: 'HSET k:{id} *' })
    expect(out.toString()).toBe('HSET k:1 id 1 b x\nHSET k:2 id 2 b y\nHSET k:3 id 3 b z\n')
  })
})

describe('a lone surrogate is never written as U+FFFD: the record fails (issue 10 item 12)', () => {
  it('JSON input: the NDJSON line or JSON element with a \\ud800 escape is bad input with its line', async () => {
    const nd = file('s.ndjson', '{"id":"1","v":"a"}\n{"id":"2","v":"x\\ud800y"}\n{"id":"3","\\udfff":"k"}\n{"id":"4","v":"\\ud83d\\ude00"}\n{"id":"5","v":"\\\\ud800"}\n')
    const js = file('s.json', '[{"id":"1","v":"a"},\n{"id":"2","v":"x\\ud800y"},\n{"id":"3","\\udfff":"k"},\n{"id":"4","v":"\\ud83d\\ude00"},\n{"id":"5","v":"\\\\ud800"}]')
    for (const input of [nd, js]) {
      for (const mode of ['text', 'resp']) {
        const { out, summary } = await dry({ input, command: 'HSET k:{id} *', onError: 'skip' }, mode)
        expect(summary.failures.map(f => [f.line, f.code]), input).toEqual([[2, 'PIPELOAD_INPUT_INVALID'], [3, 'PIPELOAD_INPUT_INVALID']])
        expect(summary.failures[0].message).toMatch(/:2: .*lone UTF-16 surrogate \\ud800/)
        expect(out.includes(Buffer.from([0xef, 0xbf, 0xbd])), input).toBe(false)
        expect(out.toString()).toMatch(mode === 'text' ? /HSET k:4 id 4 v "😀"\nHSET k:5 id 5 v "\\\\ud800"/ : /😀/)
      }
      const abort = await dry({ input, command: 'HSET k:{id} *' })
      expect(abort.err.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(abort.err.exitCode).toBe(3)
    }
  })

  it('library values, keys and map() arguments with a lone surrogate fail their record', async () => {
    const input = [{ id: '1', v: 'a' }, { id: '2', v: 'x\ud800' }, { id: '3', ['\udc00']: 'k' }, { id: '4', v: '😀' }]
    for (const options of [{ command: 'HSET k:{id} *' }, { command: 'SET k:{id}:{v} {v}' }, { map: r => [['HSET', 'k:' + r.id, ...Object.entries(r).flat()]] }]) {
      for (const mode of ['text', 'resp']) {
        const { out, summary } = await dry({ input, ...options, onError: 'skip' }, mode)
        const want = options.command === 'SET k:{id}:{v} {v}' ? [[2, 'PIPELOAD_RECORD_INVALID'], [3, 'PIPELOAD_FIELD_MISSING']] : [[2, 'PIPELOAD_RECORD_INVALID'], [3, 'PIPELOAD_RECORD_INVALID']]
        expect(summary.failures.map(f => [f.line, f.code]), `${JSON.stringify(options)} ${mode}`).toEqual(want)
        expect(out.includes(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(false)
      }
    }
  })
})

describe('the summary adds up (issue 10 item 12)', () => {
  it('records for which map() returns [] count as loaded: records = loaded + errors, dry run or not', async () => {
    const input = () => [{ id: '1' }, { id: '2' }, { id: '3' }, { id: '4' }]
    const p = `empty${++n}:`
    const maps = {
      'some empty': r => r.id === '2' ? [] : [['SET', p + r.id, 'x']],
      'all empty': () => [],
      'empty after a failed one': r => r.id === '1' ? [['SET', p + 'x']] : [] // SET with no value: an error reply
    }
    for (const [name, map] of Object.entries(maps)) {
      for (const run of [{ dryRun: 'text' }, { dryRun: 'resp' }, { url: srv.url, dryRun: undefined }]) {
        const res = await (run.dryRun ? dry({ input: input(), map, onError: 'skip' }, run.dryRun) : load({ ...run, input: input(), map, onError: 'skip' }).then(summary => ({ summary })))
        const s = res.summary
        expect(s.records, `${name} ${run.dryRun}`).toBe(4)
        expect(s.loaded + s.errors, `${name} ${run.dryRun}`).toBe(4)
        expect(s.recordsAcknowledged, `${name} ${run.dryRun}`).toBe(4)
      }
    }
    expect(await redis.exists(`${p}1`, `${p}2`, `${p}3`, `${p}4`)).toBe(3)
  })

  it('map() returning [] with --ttl sends nothing for that record (no EXPIRE of a missing key)', async () => {
    const p = `empty${++n}:`
    const summary = await load({ url: srv.url, input: [{ id: '1' }, { id: '2' }], map: r => r.id === '1' ? [] : [['SET', p + r.id, 'x']], ttl: 100 })
    expect(summary).toMatchObject({ records: 2, loaded: 2, errors: 0, commands: 2 })
    expect(await redis.ttl(p + '2')).toBeGreaterThan(0)
    const ping = await dry({ input: [{ id: '1' }], map: () => [['PING']], ttl: 100, onError: 'skip' })
    expect(ping.summary.failures.map(f => f.code)).toEqual(['PIPELOAD_RECORD_INVALID'])
    expect(ping.summary.failures[0].message).toMatch(/--ttl needs a key/)
  })

  it('the checkpoint counts records with no commands as loaded, also behind a batch still in flight', async () => {
    const input = file('e.ndjson', '{"id":"1"}\n{"id":"2"}\n{"id":"3"}\n')
    const p = `empty${++n}:`
    for (const map of [() => [], r => r.id === '1' ? [['SET', p + '1', 'x']] : []]) {
      const checkpoint = path.join(fs.mkdtempSync(path.join(tmp, 'cp-')), 'cp.json')
      const summary = await load({ url: srv.url, input, map, checkpoint, batchSize: 1 })
      expect(summary).toMatchObject({ records: 3, loaded: 3, errors: 0 })
      expect(JSON.parse(fs.readFileSync(checkpoint, 'utf8'))).toMatchObject({ records: 3, loaded: 3, errors: 0 })
    }
  })

  it('an empty .json file (0 bytes or whitespace) is bad input of the file, not "loaded 0 of 1 records"', async () => {
    for (const content of ['', ' \n\t\r\n']) {
      const input = file('empty.json', content)
      const err = await load({ url: srv.url, input, key: 'e:{id}' }).then(() => null, e => e)
      expect(err.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(err.message).toMatch(/empty\.json: the input is empty \(no JSON document\), expected a JSON array$/)
      expect(err.summary).toMatchObject({ records: 0, loaded: 0, errors: 0 })
      const res = await runCli(['import', input, '--key', 'e:{id}', '-p', String(srv.port)])
      expect(res.code).toBe(3)
      expect(res.stderr).not.toMatch(/of 1 records|1 failed/)
    }
  })
})
