'use strict'

// lib/encode/restore.js without a server: dump lines (docs/export.md) → commands, written by
// hand here, and what is refused.

const { restoreMapper, CHUNK } = require('../lib/encode/restore')
const { ByteWriter } = require('../lib/encode/writer')

const T0 = 1_700_000_000_000
const words = cmds => cmds.map(c => c.map(a => Buffer.isBuffer(a) ? `<${a.toString('hex')}>` : a))

function mapAll (lines) {
  const m = restoreMapper({ startMs: T0 })
  return lines.map(l => words(m.args(l)))
}

describe('restore: each type', () => {
  it('string: SET (replaces any type, drops the expiry), PEXPIREAT start + ttl', () => {
    expect(mapAll([
      { key: 'a', type: 'string', ttl: null, value: 'x' },
      { key: 'b', type: 'string', ttl: 1500, value: '' }
    ])).toEqual([
      [['SET', 'a', 'x']],
      [['SET', 'b', ''], ['PEXPIREAT', 'b', String(T0 + 1500)]]
    ])
  })

  it('hash, set, zset, list, stream: DEL first, then the elements', () => {
    expect(mapAll([
      { key: 'h', type: 'hash', ttl: 10, value: { name: 'Ada', age: '36' } },
      { key: 'h2', type: 'hash', ttl: null, value: [['f', 'v'], [{ base64: '/w==' }, '']] },
      { key: 's', type: 'set', ttl: null, value: ['x', 'y'] },
      { key: 'z', type: 'zset', ttl: null, value: [['ada', '1.5'], ['bob', 'inf'], ['cy', '-inf'], ['d', '1e+20']] },
      { key: 'l', type: 'list', ttl: null, value: ['a', 'b', 'a'] },
      { key: 'x', type: 'stream', ttl: null, value: [{ id: '1-0', fields: { k: 'v' } }, { id: '1-1', fields: [['k', '1'], ['k', '2']] }] }
    ])).toEqual([
      [['DEL', 'h'], ['HSET', 'h', 'name', 'Ada', 'age', '36'], ['PEXPIREAT', 'h', String(T0 + 10)]],
      [['DEL', 'h2'], ['HSET', 'h2', 'f', 'v', '<ff>', '']],
      [['DEL', 's'], ['SADD', 's', 'x', 'y']],
      [['DEL', 'z'], ['ZADD', 'z', '1.5', 'ada', 'inf', 'bob', '-inf', 'cy', '1e+20', 'd']],
      [['DEL', 'l'], ['RPUSH', 'l', 'a', 'b', 'a']],
      [['DEL', 'x'], ['XADD', 'x', '1-0', 'k', 'v'], ['XADD', 'x', '1-1', 'k', '1', 'k', '2']]
    ])
  })

  it('an empty stream is kept (XADD MAXLEN 0); an empty hash is only deleted', () => {
    expect(mapAll([
      { key: 'x', type: 'stream', ttl: 5, value: [] },
      { key: 'h', type: 'hash', ttl: 5, value: {} }
    ])).toEqual([
      [['DEL', 'x'], ['XADD', 'x', 'MAXLEN', '0', '0-1', '_', '_'], ['PEXPIREAT', 'x', String(T0 + 5)]],
      [['DEL', 'h']]
    ])
  })

  it(`big values go in commands of ${CHUNK} elements`, () => {
    const value = Array.from({ length: CHUNK * 2 + 1 }, (_, i) => `e${i}`)
    const [cmds] = mapAll([{ key: 's', type: 'set', ttl: null, value }])
    expect(cmds.map(c => c.length - 2)).toEqual([0, CHUNK, CHUNK, 1])
    expect(cmds.slice(1).flatMap(c => c.slice(2))).toEqual(value)
  })
})

describe('restore: parts', () => {
  it('a list part trims to where it starts (the earlier parts\' lengths), then pushes', () => {
    expect(mapAll([
      { key: 'l', type: 'list', ttl: 100, value: ['a', 'b'] },
      { key: 'l', type: 'list', ttl: 100, part: 2, value: ['c', 'd', 'e'] },
      { key: 'l', type: 'list', ttl: 100, part: 3, value: ['f'] }
    ])).toEqual([
      [['DEL', 'l'], ['RPUSH', 'l', 'a', 'b'], ['PEXPIREAT', 'l', String(T0 + 100)]],
      [['LTRIM', 'l', '0', '1'], ['RPUSH', 'l', 'c', 'd', 'e'], ['PEXPIREAT', 'l', String(T0 + 100)]],
      [['LTRIM', 'l', '0', '4'], ['RPUSH', 'l', 'f'], ['PEXPIREAT', 'l', String(T0 + 100)]]
    ])
  })

  it('hash, set, zset and stream parts add without DEL', () => {
    expect(mapAll([
      { key: 'x', type: 'stream', ttl: null, value: [{ id: '5-0', fields: { a: '1' } }] },
      { key: 'x', type: 'stream', ttl: null, part: 2, value: [{ id: '5-1', fields: { a: '2' } }] },
      { key: 'h', type: 'hash', ttl: null, value: { a: '1' } },
      { key: 'h', type: 'hash', ttl: null, part: 2, value: { b: '2' } }
    ])).toEqual([
      [['DEL', 'x'], ['XADD', 'x', '5-0', 'a', '1']],
      [['XADD', 'x', '5-1', 'a', '2']],
      [['DEL', 'h'], ['HSET', 'h', 'a', '1']],
      [['HSET', 'h', 'b', '2']]
    ])
  })

  it('a resume sees the lines it skips (observe): a list part still knows where it starts', () => {
    const m = restoreMapper({ startMs: T0 })
    m.observe({ key: 'l', type: 'list', ttl: null, value: ['a', 'b', 'c'] })
    m.observe({ key: 'l', type: 'list', ttl: null, part: 2, value: ['d'] })
    expect(words(m.args({ key: 'l', type: 'list', ttl: null, part: 3, value: ['e'] }))).toEqual([['LTRIM', 'l', '0', '3'], ['RPUSH', 'l', 'e']])
  })
})

describe('restore: bytes', () => {
  it('base64 keys and values are written byte for byte', () => {
    const m = restoreMapper({ startMs: T0 })
    const w = new ByteWriter()
    m.write({ key: { base64: Buffer.from([0xff, 0x00, 0x0d, 0x0a]).toString('base64') }, type: 'string', ttl: null, value: { base64: Buffer.from([0x80, 0xfe]).toString('base64') } }, w)
    const bytes = w.take()
    expect(Buffer.compare(bytes, Buffer.concat([Buffer.from('*3\r\n$3\r\nSET\r\n$4\r\n'), Buffer.from([0xff, 0x00, 0x0d, 0x0a]), Buffer.from('\r\n$2\r\n'), Buffer.from([0x80, 0xfe]), Buffer.from('\r\n')]))).toBe(0)
  })
})

describe('restore: lines that are not dump lines', () => {
  const refused = (lines, message) => {
    const m = restoreMapper({ startMs: T0 })
    for (const l of lines.slice(0, -1)) m.args(l)
    let err
    try { m.args(lines.at(-1)) } catch (e) { err = e }
    expect(err?.code).toBe('PIPELOAD_RECORD_INVALID')
    expect(err.message).toMatch(message)
  }
  it('says what is wrong', () => {
    refused([{ type: 'string', ttl: null, value: 'x' }], /"key" is missing/)
    refused([{ key: 'k', type: 'json', ttl: null, value: 'x' }], /"type" is "json", not one of string, hash/)
    refused([{ key: 'k', type: 'string', ttl: -1, value: 'x' }], /"ttl" is -1/)
    refused([{ key: 'k', type: 'string', ttl: null }], /"value" is missing/)
    refused([{ key: 'k', type: 'hash', ttl: null, value: ['a'] }], /"value"\[0\] is a string, not a \[name, value\] pair/)
    refused([{ key: 'k', type: 'list', ttl: null, value: 'a' }], /"value" is a string, not an array/)
    refused([{ key: 'k', type: 'zset', ttl: null, value: [['m', 'nan']] }], /not a score/)
    refused([{ key: { base64: 'no!' }, type: 'string', ttl: null, value: 'x' }], /not base64/)
    refused([{ key: 'k', type: 'stream', ttl: null, value: [{ id: '2-0', fields: { a: '1' } }, { id: '1-0', fields: { a: '1' } }] }], /does not come after/)
    refused([{ key: 'k', type: 'stream', ttl: null, value: [{ id: '1-0', fields: {} }] }], /fields is empty/)
    refused([{ key: 'k', type: 'stream', ttl: null, value: [{ id: '1-0', fields: { b: '1', 2: '2' } }] }], /names a field like an array index \("2"\) beside others: .* \[name, value\] pairs/)
    refused([{ key: 'a', type: 'list', ttl: null, value: ['x'] }, { key: 'b', type: 'list', ttl: null, part: 2, value: ['y'] }], /does not follow a line of the same key/)
    refused([{ key: 'a', type: 'list', ttl: null, value: ['x'] }, { key: 'a', type: 'list', ttl: null, part: 3, value: ['y'] }], /"part": 3 follows "part": 1/)
    refused([{ key: 'k', type: 'stream', ttl: null, value: [{ id: '5-0', fields: { a: '1' } }] }, { key: 'k', type: 'stream', ttl: null, part: 2, value: [{ id: '5-0', fields: { a: '1' } }] }], /does not come after/)
  })

  it('a failed line fails the parts after it (that key is not whole)', () => {
    const m = restoreMapper({ startMs: T0 })
    expect(() => m.args({ key: 'l', type: 'list', ttl: null, value: [1] })).toThrow(/not a string/)
    expect(() => m.args({ key: 'l', type: 'list', ttl: null, part: 2, value: ['b'] })).toThrow(/does not follow/)
  })
})
