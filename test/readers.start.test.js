'use strict'

// Reading from the middle of an input (reader option `start`), which the parallel parse
// (fallback after a chunk it cannot decide), --shard and --resume over a Range request
// build on: from any record boundary, with the header and line known, the records, lines,
// offsets and errors are those of reading the whole input.
/* global describe, it, expect */ // vitest globals (see vitest.config.js)
const { tmpFile, chunked, readAll } = require('./fixtures/readers/helpers')
const { openReader } = require('../lib/read/reader')

const CSV = 'id,name,note\n1,a,"x\ny"\n2,b,plain\n\n3,"c,d",""""\r\n4,e,f\n5,g,h'
const NDJSON = '{"id":1}\n{"id":2,"t":"a\\nb"}\n\n  \n{"id":3}\r\n[1,2]\n{"id":4}'

/** Every record of the whole read, then a read from each record's offset, compared. */
async function fromEachRecord (name, text, options, columnsOf) {
  const file = tmpFile(name, text)
  const whole = await readAll({ name, path: file }, options)
  expect(whole.error).toBeNull()
  for (let k = 0; k < whole.records.length; k++) {
    const start = { offset: whole.offsets[k], line: whole.lines[k], columns: columnsOf(whole) }
    for (const source of [
      { name, path: file, range: { start: start.offset, end: null } },
      { name, stream: chunked(Buffer.from(text).subarray(start.offset), 3) }
    ]) {
      const part = await readAll(source, { ...options, start })
      expect(part.error).toBeNull()
      expect(part.records, `${name} from record ${k}`).toEqual(whole.records.slice(k))
      expect(part.lines).toEqual(whole.lines.slice(k))
      expect(part.offsets).toEqual(whole.offsets.slice(k))
    }
  }
  return whole
}

describe('reader start: from the middle of an input', () => {
  it('csv with a header: the header given, quoted newlines, blank lines, CRLF', async () => {
    const whole = await fromEachRecord('s.csv', CSV, { format: 'csv' }, w => w.columns)
    expect(whole.records).toHaveLength(5)
  })

  it('headerless csv: the fields per record given', async () => {
    const text = CSV.split('\n').slice(1).join('\n')
    await fromEachRecord('h.csv', text, { format: 'csv', header: false }, () => null)
  })

  it('tsv', async () => {
    await fromEachRecord('s.tsv', 'a\tb\n1\t2\n3\t"4\n5"\n6\t7\n', { format: 'tsv' }, w => w.columns)
  })

  it('ndjson: blank lines, CRLF, non-object values', async () => {
    await fromEachRecord('s.ndjson', NDJSON, { format: 'ndjson' }, () => null)
  })

  it('a byte range ends the read where it says', async () => {
    const file = tmpFile('r.ndjson', '{"a":1}\n{"a":2}\n{"a":3}\n')
    const out = await readAll({ name: 'r.ndjson', path: file, range: { start: 8, end: 16 } }, { format: 'ndjson', start: { offset: 8, line: 2 } })
    expect(out.records).toEqual([{ a: 2 }])
    expect(out.lines).toEqual([2])
    const empty = await readAll({ name: 'r.ndjson', path: file, range: { start: 16, end: 16 } }, { format: 'ndjson', start: { offset: 16, line: 3 } })
    expect(empty.records).toEqual([])
  })

  it('errors name the line and offset in the whole input', async () => {
    const text = 'a,b\n1,2\n3,4\n5,6,7\n'
    const out = await readAll({ name: 'e.csv', stream: chunked(Buffer.from(text).subarray(8)) }, { format: 'csv', start: { offset: 8, line: 3, columns: ['a', 'b'] } })
    expect(out.records).toHaveLength(1)
    expect(out.error.line).toBe(4)
    expect(out.error.offset).toBe(12)
    expect(out.error.message).toMatch(/^e\.csv:4: /)
    const nd = await readAll({ name: 'e.ndjson', stream: chunked('{"a":1}\nnot json\n') }, { format: 'ndjson', start: { offset: 100, line: 41 } })
    expect(nd.error.message).toMatch(/^e\.ndjson:42: /)
    expect(nd.error.offset).toBe(108)
  })

  it('bytes from the middle are plain: no gzip header or BOM is looked for', async () => {
    const text = '\ufeff{"a":1}\n'
    const out = await readAll({ name: 'b.ndjson', stream: chunked(text) }, { format: 'ndjson', start: { offset: 0, line: 1 } })
    expect(out.error.code).toBe('PIPELOAD_INPUT_INVALID') // the BOM is data here
  })

  it('a JSON document cannot start in its middle; a bad start is refused', () => {
    expect(() => openReader({ name: 'x.json', path: '/nonexistent' }, { format: 'json', start: { offset: 0, line: 1 } })).toThrow(/JSON document/)
    expect(() => openReader({ name: 'x.csv', path: '/nonexistent' }, { format: 'csv', start: { offset: -1, line: 1 } })).toThrow(/start: expected/)
  })
})
