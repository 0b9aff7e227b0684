'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js): vitest 4 refuses require('vitest')

const { openReader } = require('../lib/read/reader')
const { JsonNumber } = require('../lib/read/json-number')
const { tmpFile, gzip, chunked, readAll, readBoth, offsetsOf } = require('./fixtures/readers/helpers')

describe('json reader', () => {
  it('reads the elements of a top-level array with lines, offsets and bytesRead', async () => {
    const content = '[\n  {"id": 1, "name": "ann"},\n  {"id": 2, "tags": ["a", "]"]}\n]\n'
    const r = await readBoth('data.json', content, { format: 'json' })
    expect(r.error).toBe(null)
    expect(r.columns).toBe(null)
    expect(r.records).toEqual([{ id: 1, name: 'ann' }, { id: 2, tags: ['a', ']'] }])
    expect(r.lines).toEqual([2, 3])
    expect(r.offsets).toEqual(offsetsOf(content, ['{"id": 1', '{"id": 2']))
    expect(r.batches.at(-1).bytesRead).toBe(Buffer.byteLength(content))
  })

  it('ready() resolves null', async () => {
    const file = tmpFile('ready.json', '[]')
    expect(await openReader({ name: 'ready.json', path: file }, { format: 'json' }).ready()).toBe(null)
  })

  it('passes non-object elements through', async () => {
    const r = await readBoth('mixed.json', '[1, -2.5e3, "s", true, null, [1], {}]', { format: 'json' })
    expect(r.records).toEqual([1, new JsonNumber('-2.5e3'), 's', true, null, [1], {}]) // numbers as written
  })

  it('reads an empty array', async () => {
    const r = await readBoth('empty.json', ' [ ] ', { format: 'json' })
    expect(r.error).toBe(null)
    expect(r.records).toEqual([])
  })

  it('handles escapes, braces and brackets inside strings', async () => {
    const content = '[{"a":"x\\"}]{[","b":"\\\\"},{"c":"\\u00e9\\n"}]'
    const r = await readBoth('esc.json', content, { format: 'json' })
    expect(r.records).toEqual([{ a: 'x"}]{[', b: '\\' }, { c: 'é\n' }])
  })

  it('reads gzip transparently', async () => {
    const content = '[{"id":1},{"id":2}]'
    const gz = gzip(content)
    const file = tmpFile('data.json.gz', gz)
    const r = await readAll({ name: 'data.json.gz', path: file }, { format: 'json' })
    expect(r.records).toEqual([{ id: 1 }, { id: 2 }])
    expect(r.offsets).toEqual([1, 10])
    expect(r.batches.at(-1).bytesRead).toBe(gz.length)
  })

  it('skips a BOM and handles CRLF', async () => {
    const content = '\ufeff[\r\n{"id":1},\r\n{"id":2}\r\n]\r\n'
    const r = await readBoth('bom.json', content, { format: 'json' })
    expect(r.records).toEqual([{ id: 1 }, { id: 2 }])
    expect(r.lines).toEqual([2, 3])
    expect(r.offsets).toEqual(offsetsOf(content, ['{"id":1', '{"id":2']))
  })

  it('decodes multi-byte UTF-8 split across chunks', async () => {
    const content = '[{"name":"José"},{"city":"東京"},"🙂",{"🙂":"😀"}]'
    const r = await readBoth('utf8.json', content, { format: 'json' })
    expect(r.records).toEqual([{ name: 'José' }, { city: '東京' }, '🙂', { '🙂': '😀' }])
    expect(r.offsets).toEqual(offsetsOf(content, ['{"name"', '{"city"', '"🙂",', '{"🙂"']))
  })

  it('keeps empty strings and leading zeros in strings', async () => {
    const r = await readBoth('zeros.json', '[{"zip":"00501","a":""}]', { format: 'json' })
    expect(r.records).toEqual([{ zip: '00501', a: '' }])
  })

  it('reads a 1 MB value', async () => {
    const big = 'x'.repeat(1024 * 1024)
    const file = tmpFile('big.json', JSON.stringify([{ id: 1, blob: big }, { id: 2 }]))
    const r = await readAll({ name: 'big.json', path: file }, { format: 'json' })
    expect(r.error).toBe(null)
    expect(r.records[0].blob.length).toBe(big.length)
    expect(r.records[1]).toEqual({ id: 2 })
  })

  it('finds the array at jsonPath, skipping other members whatever they hold', async () => {
    const content = '{"meta":{"a":[1,{"b":"]}"}],"n":-1},"x":"a\\"b","a":{"skip":true,"b":[\n{"id":1},\n{"id":2}\n],"c":[3]},"z":{}}'
    const r = await readBoth('nested.json', content, { format: 'json', jsonPath: 'a.b' })
    expect(r.error).toBe(null)
    expect(r.records).toEqual([{ id: 1 }, { id: 2 }])
    expect(r.lines).toEqual([2, 3])
    expect(r.offsets).toEqual(offsetsOf(content, ['{"id":1', '{"id":2']))
  })

  it('finds a one-level jsonPath', async () => {
    const r = await readBoth('one.json', '{"data":[1,2]}', { format: 'json', jsonPath: 'data' })
    expect(r.records).toEqual([1, 2])
  })

  describe('errors', () => {
    it('truncated inside an element: names the line where the element starts', async () => {
      const r = await readBoth('data.json', '[\n{"id":1},\n{"id":2,\n"name":"b', { format: 'json' })
      expect(r.records).toEqual([{ id: 1 }])
      expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.error.message).toMatch(/^data\.json:3: unexpected end of input/)
      expect(r.error).toMatchObject({ file: 'data.json', line: 3, offset: 12 })
    })

    it('truncated between elements', async () => {
      const r = await readBoth('data.json', '[\n{"id":1},\n', { format: 'json' })
      expect(r.records).toEqual([{ id: 1 }])
      expect(r.error.message).toMatch(/^data\.json:3: unexpected end of input: the array is not closed/)
    })

    it('an invalid element: names its line, earlier elements come first', async () => {
      const r = await readBoth('data.json', '[\n{"id":1},\n{"id":x}\n]', { format: 'json' })
      expect(r.records).toEqual([{ id: 1 }])
      expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.error.message).toMatch(/^data\.json:3: not valid JSON: /)
      expect(r.error.line).toBe(3)
    })

    it('a missing comma between elements', async () => {
      const r = await readBoth('data.json', '[{"id":1}\n{"id":2}]', { format: 'json' })
      expect(r.error.message).toBe("data.json:2: expected ',' or ']' after an array element, got '{'")
    })

    it('an object keyed by id: members as records with their key under MEMBER_KEY, as a file and in 1-byte chunks', async () => {
      const { MEMBER_KEY } = require('../lib/read/row')
      const content = '{"wrap": 1, "by": { "A\\"1" : {"v": [1, {"x": "}"}]},\n "\u00e9": {"v": 2} }}'
      const r = await readBoth('keyed.json', content, { format: 'json', jsonPath: 'by' })
      expect(JSON.parse(JSON.stringify(r.records))).toEqual([{ v: [1, { x: '}' }] }, { v: 2 }]) // JSON text leaves the symbol out
      expect(r.records.map(x => x[MEMBER_KEY])).toEqual(['A"1', 'é'])
      expect(Object.keys(r.records[0])).toEqual(['v'])
      expect(r.lines).toEqual([1, 2])
      expect(r.error).toBe(null)
      const bad = await readBoth('keyed.json', '{"A":{"v":1},}', { format: 'json' })
      expect(bad.error.message).toBe("keyed.json:1: expected an object key, got '}'")
    })

    it('a document that is neither an array nor an object: an error of the whole input (no line property)', async () => {
      const r = await readBoth('data.json', '\n"items"', { format: 'json' })
      expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.error.message).toMatch(/^data\.json:2: expected a JSON array, or an object keyed by id, at the top level, got '"'/)
      expect(r.error.line).toBe(undefined)
    })

    it('an object whose member is an array, without jsonPath: the hint names the path', async () => {
      const r = await readBoth('data.json', '\n{"items":[]}', { format: 'json' })
      // Issue 34 item 6: the whole input is refused at the array's first byte (it was a failed record).
      expect(r.error.message).toBe('data.json:2: the document is an object whose member "items" is an array: for the records in it, --json-path "items"')
      expect(r.error.line).toBe(undefined)
    })

    it('jsonPath that does not exist: names --json-path as written and the keys there', async () => {
      const r = await readBoth('data.json', '{"a":{"c":[1],"d":2}\n}', { format: 'json', jsonPath: '$.a.b[*]' })
      expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.error.message).toBe('data.json:1: --json-path "$.a.b[*]": no key "b" in "a" (its keys: "c", "d")')
      expect(r.error.line).toBe(undefined)
      expect(r.error.offset).toBe(undefined)
    })

    it('jsonPath that leads to something else than an array or an object', async () => {
      const r = await readBoth('data.json', '{"a":{"b":"c"}}', { format: 'json', jsonPath: 'a.b' })
      expect(r.error.message).toBe('data.json:1: --json-path "a.b" is not an array or an object (got \'"\')')
      const s = await readBoth('data.json', '{"a":[1]}', { format: 'json', jsonPath: 'a.b' })
      expect(s.error.message).toBe('data.json:1: --json-path "a.b": "a" is not an object (got \'[\')')
    })

    it('data after the array', async () => {
      const r = await readBoth('data.json', '[1] [2]', { format: 'json' })
      expect(r.records).toEqual([1])
      expect(r.error.message).toBe("data.json:1: unexpected '[' after the end of the document")
      // On a line of its own after a whole first line: NDJSON, refused before a record is read.
      const nd = await readBoth('data.json', '[1]\n[2]', { format: 'json' })
      expect(nd.records).toEqual([])
      expect(nd.error.message).toBe('data.json:2: a second JSON value after the one on line 1: this looks like NDJSON (one JSON value per line), not one JSON document: --format ndjson (or name it data.ndjson)')
    })

    it('empty input', async () => {
      for (const text of ['', '  \n', '\r\n\t ']) {
        const r = await readBoth('data.json', text, { format: 'json' })
        expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
        // the file is wrong, not a record of it: no line, so it is not counted as a record
        expect(r.error.message).toBe('data.json: the input is empty (no JSON document), expected a JSON array')
        expect(r.error.line).toBe(undefined)
      }
    })

    it('an element larger than maxRecordSize, even before it ends', async () => {
      const r = await readBoth('data.json', `[{"id":1},\n{"blob":"${'x'.repeat(500)}"}]`, { format: 'json', maxRecordSize: 100 })
      expect(r.records).toEqual([{ id: 1 }])
      expect(r.error.code).toBe('PIPELOAD_RECORD_TOO_LARGE')
      expect(r.error.message).toMatch(/^data\.json:2: /)
      const s = await readAll({ name: 'data.json', stream: chunked(`[{"blob":"${'x'.repeat(500)}`, 10) }, { format: 'json', maxRecordSize: 100 })
      expect(s.error.code).toBe('PIPELOAD_RECORD_TOO_LARGE')
    })
  })
})
