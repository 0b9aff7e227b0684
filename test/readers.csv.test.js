'use strict'

const fs = require('node:fs')
/* global describe, it, expect */ // vitest globals (see vitest.config.js): vitest 4 refuses require('vitest')
const { openReader } = require('../lib/readers')
const { tmpFile, gzip, chunked, readAll, readBoth, offsetsOf } = require('./fixtures/readers/helpers')

describe('csv reader', () => {
  it('reads records as string arrays with header, lines, offsets and bytesRead', async () => {
    const content = 'id,name\n1,ann\n2,bob\n'
    const r = await readBoth('users.csv', content, { format: 'csv' })
    expect(r.error).toBe(null)
    expect(r.columns).toEqual(['id', 'name'])
    expect(r.records).toEqual([['1', 'ann'], ['2', 'bob']])
    expect(r.lines).toEqual([2, 3])
    expect(r.offsets).toEqual(offsetsOf(content, ['1,ann', '2,bob']))
    expect(r.batches.at(-1).bytesRead).toBe(Buffer.byteLength(content))
  })

  it('ready() resolves with the header before iteration, and no record is lost', async () => {
    const file = tmpFile('ready.csv', 'a,b\n1,2\n3,4\n')
    const reader = openReader({ name: 'ready.csv', path: file }, { format: 'csv' })
    expect(await reader.ready()).toEqual(['a', 'b'])
    expect(reader.columns).toEqual(['a', 'b'])
    const records = []
    for await (const batch of reader) records.push(...batch.records)
    expect(records).toEqual([['1', '2'], ['3', '4']])
  })

  it('ready() resolves with the header of a header-only file, null when headerless', async () => {
    const file = tmpFile('only-header.csv', 'a,b\n')
    expect(await openReader({ name: 'x.csv', path: file }, { format: 'csv' }).ready()).toEqual(['a', 'b'])
    expect(await openReader({ name: 'x.csv', path: file }, { format: 'csv', header: false }).ready()).toBe(null)
  })

  it('reads gzip transparently; bytesRead counts compressed bytes', async () => {
    const content = 'id,name\n1,ann\n2,bob\n'
    const gz = gzip(content)
    const file = tmpFile('users.csv.gz', gz)
    const r = await readAll({ name: 'users.csv.gz', path: file }, { format: 'csv' })
    expect(r.records).toEqual([['1', 'ann'], ['2', 'bob']])
    expect(r.lines).toEqual([2, 3])
    expect(r.offsets).toEqual(offsetsOf(content, ['1,ann', '2,bob']))
    expect(r.batches.at(-1).bytesRead).toBe(gz.length)
    // gzip magic split over 1-byte chunks too
    const s = await readAll({ name: 'users.csv.gz', stream: chunked(gz) }, { format: 'csv' })
    expect(s.records).toEqual(r.records)
  })

  it('skips a UTF-8 BOM; offsets still count it', async () => {
    const content = '\ufeffid,name\n1,ann\n'
    const r = await readBoth('bom.csv', content, { format: 'csv' })
    expect(r.columns).toEqual(['id', 'name'])
    expect(r.records).toEqual([['1', 'ann']])
    expect(r.offsets).toEqual([11])
  })

  it('handles CRLF line endings', async () => {
    const content = 'id,name\r\n1,ann\r\n2,bob\r\n'
    const r = await readBoth('crlf.csv', content, { format: 'csv' })
    expect(r.records).toEqual([['1', 'ann'], ['2', 'bob']])
    expect(r.lines).toEqual([2, 3])
    expect(r.offsets).toEqual(offsetsOf(content, ['1,ann', '2,bob']))
  })

  it('handles quoted fields with delimiters, quotes and newlines; later line numbers stay right', async () => {
    const content = 'id,text\n1,"a,b"\n2,"say ""hi"""\n3,"line1\nline2\nline3"\n4,after\n5,"x\r\ny"\n6,end\n'
    const r = await readBoth('quotes.csv', content, { format: 'csv' })
    expect(r.error).toBe(null)
    expect(r.records).toEqual([
      ['1', 'a,b'], ['2', 'say "hi"'], ['3', 'line1\nline2\nline3'], ['4', 'after'], ['5', 'x\r\ny'], ['6', 'end']
    ])
    expect(r.lines).toEqual([2, 3, 4, 7, 8, 10])
    expect(r.offsets).toEqual(offsetsOf(content, ['1,', '2,', '3,', '4,', '5,', '6,']))
  })

  it('decodes multi-byte UTF-8 split across chunks', async () => {
    const content = 'name,city\nJosé,Zürich\n李,東京\n🙂,"😀,x"\n'
    const r = await readBoth('utf8.csv', content, { format: 'csv' })
    expect(r.records).toEqual([['José', 'Zürich'], ['李', '東京'], ['🙂', '😀,x']])
    expect(r.offsets).toEqual(offsetsOf(content, ['José', '李', '🙂']))
  })

  it('keeps empty fields and leading zeros as strings', async () => {
    const r = await readBoth('zeros.csv', 'zip,a,b\n00501,,\n0,"",x\n', { format: 'csv' })
    expect(r.records).toEqual([['00501', '', ''], ['0', '', 'x']])
  })

  it('skips empty lines, counting them in line numbers and offsets', async () => {
    const content = 'a,b\n\n1,2\n\n\n3,4\n\n'
    const r = await readBoth('empty-lines.csv', content, { format: 'csv' })
    expect(r.records).toEqual([['1', '2'], ['3', '4']])
    expect(r.lines).toEqual([3, 6])
    expect(r.offsets).toEqual(offsetsOf(content, ['1,2', '3,4']))
  })

  it('reads a last record without a trailing newline', async () => {
    const r = await readBoth('no-eol.csv', 'a,b\n1,2\n3,4', { format: 'csv' })
    expect(r.records).toEqual([['1', '2'], ['3', '4']])
    expect(r.lines).toEqual([2, 3])
  })

  it('reads a 1 MB value', async () => {
    const big = 'x'.repeat(1024 * 1024)
    const content = `id,blob\n1,${big}\n2,"${big}"\n3,small\n`
    const file = tmpFile('big-value.csv', content)
    const r = await readAll({ name: 'big-value.csv', path: file }, { format: 'csv' })
    expect(r.error).toBe(null)
    expect(r.records.map((rec) => rec[1].length)).toEqual([big.length, big.length, 5])
    expect(r.lines).toEqual([2, 3, 4])
    expect(r.offsets).toEqual(offsetsOf(content, ['1,', '2,', '3,']))
  })

  it('reads headerless files: every row is a record, columns stay null', async () => {
    const r = await readBoth('nohead.csv', '1,ann\n2,bob\n', { format: 'csv', header: false })
    expect(r.columns).toBe(null)
    expect(r.records).toEqual([['1', 'ann'], ['2', 'bob']])
    expect(r.lines).toEqual([1, 2])
    expect(r.offsets).toEqual([0, 6])
  })

  it('reads TSV with a tab delimiter by default', async () => {
    const r = await readBoth('data.tsv', 'id\tname\n1\tann, jr\n2\t"b\tc"\n', { format: 'tsv' })
    expect(r.columns).toEqual(['id', 'name'])
    expect(r.records).toEqual([['1', 'ann, jr'], ['2', 'b\tc']])
  })

  it('reads a custom delimiter, including a multi-character one', async () => {
    const r = await readBoth('semi.csv', 'a;b\n1;2,5\n', { format: 'csv', delimiter: ';' })
    expect(r.records).toEqual([['1', '2,5']])
    const m = await readBoth('multi.csv', 'a||b\n1||2\n', { format: 'csv', delimiter: '||' })
    expect(m.records).toEqual([['1', '2']])
  })

  it('yields batches of at most batchRecords', async () => {
    const rows = Array.from({ length: 1200 }, (_, i) => `${i},v${i}`).join('\n')
    const file = tmpFile('many.csv', 'id,v\n' + rows + '\n')
    const r = await readAll({ name: 'many.csv', path: file }, { format: 'csv', batchRecords: 100 })
    expect(r.records.length).toBe(1200)
    expect(r.batches.every((b) => b.records.length <= 100 && b.records.length === b.lines.length && b.lines.length === b.offsets.length)).toBe(true)
    expect(r.lines[1199]).toBe(1201)
    expect(r.batches.at(-1).bytesRead).toBe(fs.statSync(file).size)
  })

  describe('errors', () => {
    it('unclosed quote: names the line where the record starts, earlier records come first', async () => {
      const r = await readBoth('users.csv', 'id,name\n1,ann\n2,"bob\n3,cy\n', { format: 'csv' })
      expect(r.records).toEqual([['1', 'ann']])
      expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.error.message).toMatch(/^users\.csv:3: Quote Not Closed/)
      expect(r.error).toMatchObject({ file: 'users.csv', line: 3, offset: 14 })
    })

    it('ragged row: names its line', async () => {
      const content = 'id,name\n1,ann\n2,"b\nob"\n3,cy,extra\n4,dee\n'
      const r = await readBoth('users.csv', content, { format: 'csv' })
      expect(r.records).toEqual([['1', 'ann'], ['2', 'b\nob']])
      expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.error.message).toBe('users.csv:5: Invalid Record Length: the header has 2 fields, got 3')
      expect(r.error.line).toBe(5)
      expect(r.error.offset).toBe(Buffer.from(content).indexOf('3,cy'))
    })

    it('ragged row in a headerless file', async () => {
      const r = await readBoth('nohead.csv', '1,2\n3\n', { format: 'csv', header: false })
      expect(r.records).toEqual([['1', '2']])
      expect(r.error.message).toMatch(/^nohead\.csv:2: Invalid Record Length: expect 2, got 1/)
    })

    it('invalid closing quote: names line and field', async () => {
      const r = await readBoth('users.csv', 'id,name\n1,"ann"x\n', { format: 'csv' })
      expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
      expect(r.error.message).toMatch(/^users\.csv:2: Invalid Closing Quote: got "x"/)
      expect(r.error.message).toMatch(/\(field 2 "name"\)$/)
    })

    it('a record larger than maxRecordSize', async () => {
      const r = await readBoth('users.csv', `id,name\n1,ann\n2,${'x'.repeat(200)}\n`, { format: 'csv', maxRecordSize: 100 })
      expect(r.records).toEqual([['1', 'ann']])
      expect(r.error.code).toBe('PIPELOAD_RECORD_TOO_LARGE')
      expect(r.error.message).toMatch(/^users\.csv:3: /)
    })
  })
})
