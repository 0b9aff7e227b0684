'use strict'

/* global describe, it, expect */
const { parseTemplate } = require('../lib/encode/template')
const { createMapper } = require('../lib/encode/mapper')
const { encodeCommand, quoteArg, bulk } = require('../lib/encode/resp')
// Expected bytes come from this model of RESP, not from lib/encode/resp.js.
const { respCommands } = require('./helpers/resp-model')
const { ByteWriter } = require('../lib/encode/writer')

/** What the mapper writes for one record, as text. */
function written (m, rec) {
  const w = new ByteWriter(16)
  const count = m.write(rec, w)
  const bytes = w.take()
  return { text: bytes.toString('utf8'), bytes, count }
}
const { Batch } = require('../lib/send/pipe')

const objects = { file: 'x.ndjson' }
const csv = columns => ({ columns, file: 'x.csv' })

describe('template syntax', () => {
  it('splits words, keeps quoted words whole and treats a bare * as expansion', () => {
    const t = parseTemplate(`HSET "a b:{id}" '*' *`)
    expect(t.name).toBe('HSET')
    expect(t.words[1].parts).toEqual([{ type: 0, text: 'a b:' }, { type: 1, name: 'id' }])
    expect(t.words[2].parts).toEqual([{ type: 0, text: '*' }])
    expect(t.words[3]).toEqual({ star: true })
  })

  it('reads {{ and }} as literal braces (Redis hash tags)', () => {
    const m = createMapper({ templates: ['SET {{user}}:{id} 1'], shape: objects })
    expect(m.args({ id: 7 })).toEqual([['SET', '{user}:7', '1']])
  })

  it.each([
    ['', /needs a command name/],
    ['SET k:{id', /unclosed "\{"/],
    ['SET k:}', /unmatched "}"/],
    ['SET k:{} v', /empty field name/],
    ['{cmd} k v', /command name must be literal/],
    ['SET "k v', /unclosed " quote/],
    ['SET k:\ud800 {id}', /lone UTF-16 surrogate/]
  ])('rejects %j with a coded error', (source, message) => {
    expect(() => parseTemplate(source)).toThrow(message)
    try { parseTemplate(source) } catch (err) { expect(err.code).toBe('PIPELOAD_TEMPLATE_INVALID') }
  })
})

describe('mapping records to commands', () => {
  it('maps CSV arrays by header name and * to all columns', () => {
    const m = createMapper({ templates: ['HSET user:{id} *'], shape: csv(['id', 'name']) })
    expect(m.args(['007', 'Ann'])).toEqual([['HSET', 'user:007', 'id', '007', 'name', 'Ann']])
    expect(written(m, ['1', 'x']).count).toBe(1)
  })

  it('refuses * twice in one template (found by test/fuzz.test.js: the second had no writer)', () => {
    for (const shape of [csv(['id']), { file: 'x.json' }]) {
      expect(() => createMapper({ templates: ['HSET k:{id} * *'], shape })).toThrow(expect.objectContaining({ code: 'PIPELOAD_TEMPLATE_INVALID', message: 'template "HSET k:{id} * *" uses * more than once (it already writes every field)' }))
    }
  })

  it('maps headerless CSV by column number', () => {
    const m = createMapper({ templates: ['SET row:{0} {1}'], shape: csv(null) })
    expect(m.args(['a', 'b'])).toEqual([['SET', 'row:a', 'b']])
  })

  it('refuses a template field that is not a column, naming the columns', () => {
    expect(() => createMapper({ templates: ['SET k:{nope} 1'], shape: csv(['id', 'v']) }))
      .toThrow(/\{nope\}, which is not a column of x\.csv \(columns are: id, v\)/)
  })

  it('reads nested JSON fields and writes nested values as JSON text', () => {
    const m = createMapper({ templates: ['HSET geo:{props.code} *'], shape: objects })
    const rec = { props: { code: 'FR' }, tags: ['a'], n: 1.5, ok: true, none: null }
    expect(m.args(rec)).toEqual([['HSET', 'geo:FR', 'props', '{"code":"FR"}', 'tags', '["a"]', 'n', '1.5', 'ok', 'true']])
  })

  it('prefers a key that itself contains dots over a nested path', () => {
    const m = createMapper({ templates: ['SET k {a.b}'], shape: objects })
    expect(m.args({ 'a.b': 'flat', a: { b: 'nested' } })).toEqual([['SET', 'k', 'flat']])
  })

  it('throws FieldMissing for a missing or null field instead of writing ""', () => {
    const m = createMapper({ templates: ['SET k:{id} {v}'], shape: objects })
    expect(() => written(m, { id: 1 })).toThrow(/field "v" is missing/)
    expect(() => written(m, { id: 1, v: null })).toThrow(/field "v" is null/)
    try { written(m, { id: 1 }) } catch (err) { expect(err.code).toBe('PIPELOAD_FIELD_MISSING') }
  })

  it('adds EXPIRE on the first command key for ttl', () => {
    const m = createMapper({ templates: ['HSET u:{id} *', 'SADD users {id}'], ttl: 60, shape: objects })
    expect(written(m, { id: 'x' }).count).toBe(3)
    expect(m.args({ id: 'x' })).toEqual([['HSET', 'u:x', 'id', 'x'], ['SADD', 'users', 'x'], ['EXPIRE', 'u:x', '60']])
  })

  it('writes the commands the templates say, as RESP, on the fast path and in args()', () => {
    const long = 'x'.repeat(70000) + 'é'
    // [shape, record, the commands by hand (README: numbers and booleans as JSON prints
    // them, nested values as JSON text, --ttl expires the first command's key)]
    const shapes = [
      [csv(['id', 'name', 'bio']), ['1', 'Zoë', 'multi\r\nline "q"'], [
        ['HSET', 'p:1', 'id', '1', 'name', 'Zoë', 'bio', 'multi\r\nline "q"'], ['SET', 'n:1:x', 'Zoë'], ['SET', 'multi\r\nline "q"', 'x'], ['EXPIRE', 'p:1', '5']]],
      [csv(['id', 'name', 'bio']), ['ü' + long, '', long], [
        ['HSET', 'p:ü' + long, 'id', 'ü' + long, 'name', '', 'bio', long], ['SET', `n:ü${long}:x`, ''], ['SET', long, 'x'], ['EXPIRE', 'p:ü' + long, '5']]],
      [objects, { id: 'é', name: '😀', bio: '', n: 12, deep: { a: ['\u2028'] } }, [
        ['HSET', 'p:é', 'id', 'é', 'name', '😀', 'bio', '', 'n', '12', 'deep', '{"a":["\u2028"]}'], ['SET', 'n:é:x', '😀'], ['SET', '', 'x'], ['EXPIRE', 'p:é', '5']]],
      [objects, { id: 0, name: 9007199254740991, bio: 10, neg: -5, zero: -0, f: 1.5, big: 1e21, t: true }, [
        ['HSET', 'p:0', 'id', '0', 'name', '9007199254740991', 'bio', '10', 'neg', '-5', 'zero', '0', 'f', '1.5', 'big', '1e+21', 't', 'true'],
        ['SET', 'n:0:x', '9007199254740991'], ['SET', '10', 'x'], ['EXPIRE', 'p:0', '5']]]
    ]
    for (const [shape, rec, commands] of shapes) {
      const m = createMapper({ templates: ['HSET p:{id} *', 'SET n:{id}:x {name}', 'SET {bio} x'], ttl: 5, shape })
      const out = written(m, rec)
      expect(out.count).toBe(commands.length)
      expect(out.text).toBe(respCommands(commands).toString())
      expect(out.bytes.equals(respCommands(commands))).toBe(true)
      expect(m.args(rec)).toEqual(commands)
    }
  })

  it('refuses a lone surrogate (no UTF-8 form) instead of writing U+FFFD, in every word kind', () => {
    const long = 'x'.repeat(70000)
    for (const template of ['HSET p:{id} *', 'SET n:{id}:x {name}', 'SET {bio} x', 'SET k {name}']) {
      const m = createMapper({ templates: [template], shape: objects })
      for (const rec of [{ id: '\ud800', name: 'x\udfffy', bio: long + '\ud800' }, { id: 'a', name: '\udc00', bio: '\ud800' }]) {
        expect(() => written(m, rec), template).toThrow(expect.objectContaining({ code: 'PIPELOAD_RECORD_INVALID', message: expect.stringMatching(/lone UTF-16 surrogate \\ud[89a-f]/) }))
      }
    }
    const star = createMapper({ templates: ['HSET k *'], shape: objects })
    expect(() => written(star, { ['k\ud800']: 'v' })).toThrow(expect.objectContaining({ code: 'PIPELOAD_RECORD_INVALID' }))
    expect(written(star, { k: '😀' }).text).toBe(respCommands([['HSET', 'k', 'k', '😀']]).toString())
  })

  it('gives map() a CSV row with a header as an object (own properties), a headerless one as an array', () => {
    const seen = []
    const withHeader = createMapper({ map: r => { seen.push(r); return [['SET', `k:${r.id}`, r.__proto__]] }, shape: { columns: ['id', '__proto__'], file: 'f.csv' } })
    expect(written(withHeader, ['7', 'p']).text).toBe(respCommands([['SET', 'k:7', 'p']]).toString())
    expect(Object.keys(seen[0])).toEqual(['id', '__proto__'])
    const headerless = createMapper({ map: r => { seen.push(r); return [['SET', `k:${r[0]}`, r[1]]] }, shape: { columns: null, file: 'f.csv' } })
    expect(written(headerless, ['8', 'q']).text).toBe(respCommands([['SET', 'k:8', 'q']]).toString())
    expect(Array.isArray(seen[1])).toBe(true)
  })

  it('accepts a map function and counts its commands per record', () => {
    const m = createMapper({ map: r => [['SET', `k:${r.id}`, r.v], ['INCR', 'n']], shape: objects })
    const { text, count } = written(m, { id: 1, v: 2 })
    expect({ text, count }).toEqual({ text: respCommands([['SET', 'k:1', '2'], ['INCR', 'n']]).toString(), count: 2 })
    expect(() => written(m, { id: 1 })).toThrow(/missing/)
  })
})

describe('RESP', () => {
  it('counts bytes, not characters, in bulk lengths', () => {
    expect(bulk('é😀')).toBe('$6\r\né😀\r\n')
    expect(encodeCommand(['SET', 'k', ''])).toBe('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n')
  })

  it('quotes dry-run text the way redis-cli reads it', () => {
    expect(quoteArg('plain')).toBe('plain')
    expect(quoteArg('')).toBe('""')
    expect(quoteArg('a b"c\n')).toBe('"a b\\"c\\n"')
    expect(quoteArg('\x01')).toBe('"\\x01"')
  })
})

describe('batch bookkeeping', () => {
  it('finds the record a reply belongs to from cumulative command counts', () => {
    const b = new Batch({ buf: null, cmds: 6, ends: [2, 3, 6], lines: [1, 2, 3], records: 3 })
    expect([0, 1, 2, 3, 4, 5].map(c => b.recordOf(c))).toEqual([0, 0, 1, 2, 2, 2])
  })
})
