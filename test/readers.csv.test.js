'use strict'

const fs = require('node:fs')
const { Readable } = require('node:stream')
/* global describe, it, expect */ // vitest globals (see vitest.config.js): vitest 4 refuses require('vitest')
const { openReader, Rejected } = require('../lib/read/reader')
const { CsvRow } = require('../lib/read/csv/row')
const { tmpFile, gzip, chunked, readAll, readBoth, offsetsOf } = require('./fixtures/readers/helpers')

/**
 * Reads `content` on both CSV paths (the fast path's CsvRows and csv-parse), whole, in
 * 1-byte chunks and cut in two at every byte (a cut between CR and LF included): all
 * must agree. Records as arrays, rejected ones as { rejected: message }.
 */
async function readEverySplit (content, options) {
  const buf = Buffer.from(content)
  const splits = [[buf], Array.from(buf, (_, i) => buf.subarray(i, i + 1))]
  for (let i = 1; i < buf.length; i++) splits.push([buf.subarray(0, i), buf.subarray(i)])
  let first = null
  for (const rows of [false, true]) {
    for (const chunks of splits) {
      const r = await readAll({ name: 'in.csv', stream: Readable.from(chunks) }, { format: 'csv', ...options, rows })
      const out = {
        columns: r.columns,
        records: r.records.map(x => x instanceof CsvRow ? x.toArray() : x instanceof Rejected ? { rejected: x.message, raw: x.raw } : x),
        lines: r.lines,
        offsets: r.offsets,
        error: r.error && { code: r.error.code, message: r.error.message, line: r.error.line, offset: r.error.offset }
      }
      if (first === null) first = out
      else expect(out, `rows: ${rows}, chunks of ${chunks.map(c => c.length)}`).toEqual(first)
    }
  }
  return first
}

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

  describe('line ends: LF and CRLF, mixed in one file', () => {
    const CASES = [
      { name: 'LF header, CRLF rows', content: 'id,v\n1,a\r\n2,b\r\n', records: [['1', 'a'], ['2', 'b']], lines: [2, 3] },
      { name: 'CRLF header, LF rows', content: 'id,v\r\n1,a\n2,b\n', records: [['1', 'a'], ['2', 'b']], lines: [2, 3] },
      { name: 'alternating, last line without a line end', content: 'id,v\n1,a\r\n2,b\n3,c\r\n4,d', records: [['1', 'a'], ['2', 'b'], ['3', 'c'], ['4', 'd']], lines: [2, 3, 4, 5] },
      { name: 'quoted last fields', content: 'id,v\r\n1,"x"\r\n2,"y"\n3,"z"', records: [['1', 'x'], ['2', 'y'], ['3', 'z']], lines: [2, 3, 4] },
      { name: 'empty last fields', content: 'id,v\n1,\r\n2,\n3,', records: [['1', ''], ['2', ''], ['3', '']], lines: [2, 3, 4] },
      { name: 'empty lines of both kinds', content: 'id,v\r\n\n\r\n1,a\n\r\n2,b\r\n\n', records: [['1', 'a'], ['2', 'b']], lines: [4, 6] },
      { name: 'line breaks of both kinds inside quotes stay', content: 'id,v\n1,"a\r\nb"\r\n2,"c\nd"\n3,e\r\n', records: [['1', 'a\r\nb'], ['2', 'c\nd'], ['3', 'e']], lines: [2, 4, 6] },
      { name: 'TSV', content: 'id\tv\n1\ta\r\n2\t"b"\r\n', options: { format: 'tsv', delimiter: '\t' }, records: [['1', 'a'], ['2', 'b']], lines: [2, 3] },
      { name: 'headerless', content: '1,a\r\n2,b\n3,c\r\n', options: { header: false }, records: [['1', 'a'], ['2', 'b'], ['3', 'c']], lines: [1, 2, 3] },
      { name: 'multi-byte delimiter (csv-parse only)', content: 'id||v\n1||a\r\n2||b\n', options: { delimiter: '||' }, records: [['1', 'a'], ['2', 'b']], lines: [2, 3] }
    ]
    for (const c of CASES) {
      it(`${c.name}: no CR left in any field, on both paths, at every chunk boundary`, async () => {
        for (const onError of ['abort', 'skip']) {
          const r = await readEverySplit(c.content, { ...c.options, onError })
          expect(r.error).toBe(null)
          expect(r.columns).toEqual(c.options && c.options.header === false ? null : ['id', 'v'])
          expect(r.records).toEqual(c.records)
          expect(r.lines).toEqual(c.lines)
          expect(r.offsets).toEqual(offsetsOf(c.content, c.records.map(rec => rec[0] + (c.options?.delimiter || ','))))
        }
      })
    }

    it('a CR inside quotes is data, at the end of a value too', async () => {
      const r = await readEverySplit('id,v\n1,"a\rb"\n2,"c\r"\r\n3,"\r"\n', {})
      expect(r.error).toBe(null)
      expect(r.records).toEqual([['1', 'a\rb'], ['2', 'c\r'], ['3', '\r']])
    })
  })

  describe('a lone CR outside quotes is bad input', () => {
    const LONE = /^in\.csv:(\d+): Lone CR in field \d+( "\w+")?: a carriage return not followed by a line feed, outside quotes \(lines end with LF or CRLF\)$/
    const CASES = [
      { name: 'inside an unquoted field', content: 'id,v\n1,a\n2,b\rc\n3,d\n', line: 3, field: 'field 2 "v"', raw: '2,b\rc' },
      { name: 'ending a line', content: 'id,v\n1,a\n2,b\r3,d\n4,e\n', line: 3, field: 'field 2 "v"', raw: '2,b\r3,d', kept: [['1', 'a'], ['4', 'e']] },
      { name: 'shifting the field count', content: 'id,v\n1,a\n2\r,b,c\n3,d\n', line: 3, field: 'field 1 "id"', raw: '2\r,b,c' },
      { name: 'after a closing quote', content: 'id,v\n1,a\n2,"b"\rc\n3,d\n', line: 3, field: 'field 2 "v"', raw: '2,"b"\rc' },
      { name: 'at the very end of the input', content: 'id,v\n1,a\n3,d\r', line: 3, field: 'field 2 "v"', raw: '3,d', kept: [['1', 'a']] },
      { name: 'after a multi-line quoted field', content: 'id,v\r\n1,a\r\n2,"x\r\ny"\r,\r\n3,d\r\n', line: 3, field: 'field 2 "v"', raw: '2,"x\r\ny"\r,' }
    ]
    for (const c of CASES) {
      it(`${c.name}: abort stops at its line, on both paths`, async () => {
        const r = await readEverySplit(c.content, {})
        expect(r.records).toEqual([['1', 'a']])
        expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
        expect(r.error.message).toMatch(LONE)
        expect(r.error.message).toContain(`:${c.line}: Lone CR in ${c.field}:`)
        expect(r.error.line).toBe(c.line)
        expect(r.error.offset).toBe(Buffer.from(c.content).indexOf(`\n${c.raw[0]}`, 5) + 1)
      })

      it(`${c.name}: skip rejects that record and reads on`, async () => {
        const r = await readEverySplit(c.content, { onError: 'skip' })
        expect(r.error).toBe(null)
        const kept = c.kept || [['1', 'a'], ['3', 'd']]
        expect(r.records.filter(x => Array.isArray(x))).toEqual(kept)
        const rejected = r.records.filter(x => !Array.isArray(x))
        expect(rejected).toHaveLength(1)
        expect(rejected[0].rejected).toMatch(LONE)
        expect(rejected[0].rejected.startsWith(`in.csv:${c.line}:`)).toBe(true)
        expect(rejected[0].raw).toBe(c.raw)
      })
    }

    it('in a header: fatal in skip mode too', async () => {
      const r = await readEverySplit('id,v\rx\n1,a\n', { onError: 'skip' })
      expect(r.records).toEqual([])
      expect(r.error).toMatchObject({ code: 'PIPELOAD_INPUT_INVALID', line: 1 })
      expect(r.error.message).toMatch(/^in\.csv:1: Lone CR in field 2: /)
    })

    it('classic Mac line ends (CR only) are refused at line 1, not read as one long record', async () => {
      const r = await readEverySplit('1,a\r2,b\r3,c\r', { header: false })
      expect(r.records).toEqual([])
      expect(r.error).toMatchObject({ code: 'PIPELOAD_INPUT_INVALID', line: 1, offset: 0 })
      expect(r.error.message).toMatch(/^in\.csv:1: Lone CR in field 2: /)
    })
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
      expect(r.error.message).toMatch(/\(field 2 "name"\); --relax-quotes \(relaxQuotes\) keeps such a field as written, quotes included$/)
    })

    it('a record larger than maxRecordSize', async () => {
      const r = await readBoth('users.csv', `id,name\n1,ann\n2,${'x'.repeat(200)}\n`, { format: 'csv', maxRecordSize: 100 })
      expect(r.records).toEqual([['1', 'ann']])
      expect(r.error.code).toBe('PIPELOAD_RECORD_TOO_LARGE')
      expect(r.error.message).toMatch(/^users\.csv:3: /)
    })
  })
})

describe('a source that gives large buffers', () => {
  it('is parsed a piece at a time: the first batch comes before the rest of a 4 MB buffer is parsed', async () => {
    // A parallel parse's chunk may be maxRecordSize long, and a stream may give any size:
    // parsed whole, every record of it was held at once (a 66 MB chunk: 627 MB of RSS).
    const rows = Array.from({ length: 60000 }, (_, i) => `${i},name${i},note ${i}`)
    const buf = Buffer.from('id,name,note\n' + rows.join('\n') + '\n')
    expect(buf.length).toBeGreaterThan(4 * 256 * 1024)
    for (const rowsOption of [true, false]) {
      const reader = openReader({ name: 'big.csv', stream: Readable.from([buf]) }, { format: 'csv', rows: rowsOption })
      const it = reader[Symbol.asyncIterator]()
      const first = await it.next()
      expect(first.value.records.length).toBeGreaterThan(0)
      // What the parser has taken in so far: one piece, not the whole buffer.
      const core = reader._core
      expect(core.received ?? core.base).toBeLessThanOrEqual(256 * 1024)
      let n = first.value.records.length
      for (let r = await it.next(); !r.done; r = await it.next()) n += r.value.records.length
      expect(n).toBe(60000)
    }
  })
})
