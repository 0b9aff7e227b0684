'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js): vitest 4 refuses require('vitest')

const { tmpFile, gzip, chunked, readAll, readBoth, offsetsOf } = require('./fixtures/readers/helpers')
const { Rejected } = require('../lib/read/reader')
const { keysOf } = require('../lib/read/row')

describe('ndjson reader', () => {
  it('reads one value per line with lines, offsets and bytesRead', async () => {
    const content = '{"id":1}\n{"id":2,"name":"b"}\n'
    const r = await readBoth('data.ndjson', content, { format: 'ndjson' })
    expect(r.error).toBe(null)
    expect(r.records).toEqual([{ id: 1 }, { id: 2, name: 'b' }])
    expect(r.lines).toEqual([1, 2])
    expect(r.offsets).toEqual([0, 9])
    expect(r.batches.at(-1).bytesRead).toBe(Buffer.byteLength(content))
  })

  it('skips empty and whitespace-only lines, handles CRLF and a missing final newline', async () => {
    const content = '\r\n{"id":1}\r\n\r\n   \t\r\n{"id":2}\r\n[3]'
    const r = await readBoth('data.ndjson', content, { format: 'ndjson' })
    expect(r.records).toEqual([{ id: 1 }, { id: 2 }, [3]])
    expect(r.lines).toEqual([2, 5, 6])
    expect(r.offsets).toEqual(offsetsOf(content, ['{"id":1', '{"id":2', '[3]']))
  })

  it('passes non-object values through', async () => {
    const r = await readBoth('data.jsonl', '1\n"s"\nnull\n', { format: 'ndjson' })
    expect(r.records).toEqual([1, 's', null])
  })

  it('reads gzip and skips a BOM', async () => {
    const content = '\ufeff{"id":1}\n{"id":2}\n'
    const gz = gzip(content)
    const file = tmpFile('data.ndjson.gz', gz)
    const r = await readAll({ name: 'data.ndjson.gz', path: file }, { format: 'ndjson' })
    expect(r.records).toEqual([{ id: 1 }, { id: 2 }])
    expect(r.offsets).toEqual([3, 12])
    expect(r.batches.at(-1).bytesRead).toBe(gz.length)
    const b = await readBoth('bom.ndjson', content, { format: 'ndjson' })
    expect(b.records).toEqual([{ id: 1 }, { id: 2 }])
  })

  it('decodes multi-byte UTF-8 split across chunks; leading zeros and empty strings stay', async () => {
    const content = '{"name":"José","zip":"00501","e":""}\n{"city":"東京🙂"}\n'
    const r = await readBoth('utf8.ndjson', content, { format: 'ndjson' })
    expect(r.records).toEqual([{ name: 'José', zip: '00501', e: '' }, { city: '東京🙂' }])
    expect(r.offsets).toEqual(offsetsOf(content, ['{"name"', '{"city"']))
  })

  it('reads a 1 MB value', async () => {
    const big = 'é'.repeat(512 * 1024)
    const file = tmpFile('big.ndjson', JSON.stringify({ blob: big }) + '\n{"id":2}\n')
    const r = await readAll({ name: 'big.ndjson', path: file }, { format: 'ndjson' })
    expect(r.error).toBe(null)
    expect(r.records[0].blob).toBe(big)
    expect(r.lines).toEqual([1, 2])
  })

  it('yields batches of at most batchRecords', async () => {
    const content = Array.from({ length: 50 }, (_, i) => `{"i":${i}}`).join('\n')
    const r = await readAll({ name: 'x.ndjson', stream: chunked(content, 64) }, { format: 'ndjson', batchRecords: 7 })
    expect(r.records.length).toBe(50)
    expect(r.batches.every((b) => b.records.length <= 7)).toBe(true)
  })

  describe('errors', () => {
    it('a bad line: names its line, earlier records come first', async () => {
      const r = await readBoth('data.ndjson', '{"id":1}\n\n{"id":2\n{"id":3}\n', { format: 'ndjson' })
      expect(r.records).toEqual([{ id: 1 }])
      expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.error.message).toMatch(/^data\.ndjson:3: not valid JSON: /)
      expect(r.error).toMatchObject({ file: 'data.ndjson', line: 3, offset: 10 })
    })

    it('a line larger than maxRecordSize, even before it ends', async () => {
      const r = await readBoth('data.ndjson', `{"id":1}\n{"blob":"${'x'.repeat(500)}"}\n`, { format: 'ndjson', maxRecordSize: 100 })
      expect(r.records).toEqual([{ id: 1 }])
      expect(r.error.code).toBe('PIPELOAD_RECORD_TOO_LARGE')
      expect(r.error.message).toBe('data.ndjson:2: line is longer than maxRecordSize (100 bytes)')
      const s = await readAll({ name: 'x.ndjson', stream: chunked('x'.repeat(1000), 10) }, { format: 'ndjson', maxRecordSize: 100 })
      expect(s.error.code).toBe('PIPELOAD_RECORD_TOO_LARGE')
    })
  })

  it('refuses a line nested more than 1000 levels deep with its line (issue 10 item 9); skip mode goes on', async () => {
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000)
    const content = `{"id":1}\n${deep}\n${'['.repeat(1001)}${']'.repeat(1001)}\n${'['.repeat(1000)}${']'.repeat(1000)}\n{"id":5}\n`
    const abort = await readBoth('deep.ndjson', content, { format: 'ndjson' })
    expect(abort.records).toEqual([{ id: 1 }])
    expect(abort.error.code).toBe('PIPELOAD_INPUT_INVALID')
    expect(abort.error.message).toBe('deep.ndjson:2: a value nested more than 1000 levels deep')
    const skip = await readBoth('deep.ndjson', content, { format: 'ndjson', onError: 'skip' })
    expect(skip.records.map(r => r instanceof Rejected ? r.message : Array.isArray(r) ? 'array' : r)).toEqual([
      { id: 1 }, 'deep.ndjson:2: a value nested more than 1000 levels deep', 'deep.ndjson:3: a value nested more than 1000 levels deep', 'array', { id: 5 }
    ])
  })

  it('refuses a lone surrogate escape, in a value or a key, with its line; a pair is one character', async () => {
    const content = '{"v":"\\ud800"}\n{"\\udc00x":1}\n{"v":"\\ud83d\\ude00"}\n{"v":"\\\\ud800"}\n'
    const skip = await readBoth('s.ndjson', content, { format: 'ndjson', onError: 'skip' })
    expect(skip.records.map(r => r instanceof Rejected ? r.message : r)).toEqual([
      's.ndjson:1: a string value holds a lone UTF-16 surrogate \\ud800, which has no UTF-8 form (it would be stored as U+FFFD)',
      's.ndjson:2: key "\\udc00x" holds a lone UTF-16 surrogate \\udc00, which has no UTF-8 form (it would be stored as U+FFFD)',
      { v: '😀' },
      { v: '\\ud800' }
    ])
  })

  it('keeps the key order of the line for integer-like keys (issue 10 item 12), fast path or JSON.parse', async () => {
    const content = '{"b":"1","2":"x","10":"y","a":"z"}\n{"b":"1","2":"x","10":{"n":1},"a":"z","2":"w"}\n{"id":"3","b":{}}\n'
    const r = await readBoth('o.ndjson', content, { format: 'ndjson', rows: true })
    const objects = r.records.map(x => x.toObject ? x.toObject() : x)
    expect(objects.map(keysOf)).toEqual([['b', '2', '10', 'a'], ['b', '2', '10', 'a'], ['id', 'b']])
    expect(Object.keys(objects[1])).toEqual(['2', '10', 'b', 'a']) // what a JS object does by itself
  })
})
