'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js): vitest 4 refuses require('vitest')

const { Readable } = require('node:stream')
const { PipeloadError } = require('../lib/errors')
const { openReader, detectFormat } = require('../lib/read/reader')
const { tmpFile, gzip, readAll, dir } = require('./fixtures/readers/helpers')

describe('detectFormat', () => {
  it('maps extensions, ignoring a trailing .gz and case', () => {
    expect(detectFormat('users.csv')).toBe('csv')
    expect(detectFormat('/x/users.CSV.gz')).toBe('csv')
    expect(detectFormat('a.tsv')).toBe('tsv')
    expect(detectFormat('a.json')).toBe('json')
    expect(detectFormat('a.json.gz')).toBe('json')
    expect(detectFormat('a.ndjson')).toBe('ndjson')
    expect(detectFormat('a.jsonl.gz')).toBe('ndjson')
    expect(detectFormat('a.txt')).toBe(null)
    expect(detectFormat('a.gz')).toBe(null)
    expect(detectFormat('<stdin>')).toBe(null)
  })
})

describe('openReader options', () => {
  const src = { name: 'x.csv', stream: Readable.from([]) }

  it('rejects an unknown format', () => {
    expect(() => openReader(src, { format: 'xml' })).toThrow(expect.objectContaining({ code: 'PIPELOAD_FORMAT_UNKNOWN' }))
  })

  it('rejects bad option values, saying what was expected and got', () => {
    expect(() => openReader(src, { format: 'csv', batchRecords: 0 }))
      .toThrow('batchRecords: expected a positive integer, got 0')
    expect(() => openReader(src, { format: 'csv', header: 'yes' })).toThrow(PipeloadError)
    expect(() => openReader(src, { format: 'csv', delimiter: '' })).toThrow(PipeloadError)
    expect(() => openReader(src, { format: 'json', jsonPath: 'a..b' })).toThrow(/jsonPath/)
    expect(() => openReader(src, { format: 'json', maxRecordSize: -1 })).toThrow(/maxRecordSize/)
  })

  it('requires exactly one of path and stream', () => {
    expect(() => openReader({ name: 'x' }, { format: 'csv' })).toThrow(/exactly one of path and stream/)
    expect(() => openReader({ name: 'x', path: 'a', stream: Readable.from([]) }, { format: 'csv' })).toThrow(PipeloadError)
  })
})

describe('reader input handling', () => {
  it('a missing file is PIPELOAD_INPUT_NOT_FOUND, from the iterator and from ready()', async () => {
    const options = { format: 'csv' }
    const r = await readAll({ name: 'x.csv', path: `${dir}/does-not-exist.csv` }, options)
    expect(r.error).toBeInstanceOf(PipeloadError)
    expect(r.error.code).toBe('PIPELOAD_INPUT_NOT_FOUND')
    expect(r.error.message).toBe('cannot read x.csv: no such file')
    const reader = openReader({ name: 'x.csv', path: `${dir}/does-not-exist.csv` }, options)
    await expect(reader.ready()).rejects.toMatchObject({ code: 'PIPELOAD_INPUT_NOT_FOUND' })
    await expect(reader[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'PIPELOAD_INPUT_NOT_FOUND' })
  })

  it('truncated gzip is PIPELOAD_INPUT_INVALID naming the file and byte offset', async () => {
    const gz = gzip('id,name\n' + '1,ann\n'.repeat(5000))
    const file = tmpFile('cut.csv.gz', gz.subarray(0, gz.length - 20))
    const r = await readAll({ name: 'cut.csv.gz', path: file }, { format: 'csv' })
    expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
    expect(r.error.message).toMatch(/^cut\.csv\.gz@\d+: gzip data is corrupt or truncated/)
    expect(r.error.file).toBe('cut.csv.gz')
    expect(r.error.compressedOffset).toBe(gz.length - 20)
    // what could be decompressed before the cut was read
    expect(r.records.length).toBeGreaterThan(0)
  })

  it('corrupt gzip is PIPELOAD_INPUT_INVALID', async () => {
    const gz = Buffer.from(gzip('{"a":1}\n'.repeat(100)))
    gz.fill(0x55, 12, 30)
    const r = await readAll({ name: 'bad.ndjson.gz', stream: Readable.from([gz]) }, { format: 'ndjson' })
    expect(r.error.code).toBe('PIPELOAD_INPUT_INVALID')
    expect(r.error.message).toMatch(/^bad\.ndjson\.gz@\d+: gzip data is corrupt or truncated/)
  })

  it('string chunks (a stream with setEncoding) are accepted', async () => {
    const stream = Readable.from(['{"a":"é"}\n', '{"b":2}\n'])
    const r = await readAll({ name: 's.ndjson', stream }, { format: 'ndjson' })
    expect(r.records).toEqual([{ a: 'é' }, { b: 2 }])
  })

  it('an error of the source stream reaches the consumer, coded, with the error as cause', async () => {
    const cause = new Error('socket hang up')
    const stream = new Readable({ read () { this.destroy(cause) } })
    const r = await readAll({ name: 'upload.csv', stream }, { format: 'csv' })
    expect(r.error).toMatchObject({ code: 'PIPELOAD_INPUT_FAILED', file: 'upload.csv', message: 'upload.csv@0: the input stream failed: socket hang up' })
    expect(r.error.cause).toBe(cause)
  })

  it('stopping early destroys the source stream', async () => {
    let i = 0
    const stream = new Readable({ read () { this.push(`{"i":${i++}}\n`) } }) // endless
    const reader = openReader({ name: 'endless.ndjson', stream }, { format: 'ndjson', batchRecords: 10 })
    let seen = 0
    for await (const batch of reader) {
      seen += batch.records.length
      if (seen >= 100) break
    }
    expect(stream.destroyed).toBe(true)
  })

  it('stopping early on a gzip stream destroys it too', async () => {
    const gz = gzip('{"a":1}\n'.repeat(100000))
    const chunks = []
    for (let i = 0; i < gz.length; i += 1000) chunks.push(gz.subarray(i, i + 1000))
    const stream = Readable.from(chunks)
    const reader = openReader({ name: 'x.ndjson.gz', stream }, { format: 'ndjson' })
    for await (const batch of reader) if (batch.records.length) break
    await new Promise((resolve) => setImmediate(resolve))
    expect(stream.destroyed).toBe(true)
  })

  it('an empty input gives no records', async () => {
    for (const format of ['csv', 'ndjson']) {
      const r = await readAll({ name: 'empty', stream: Readable.from([]) }, { format })
      expect(r.error).toBe(null)
      expect(r.records).toEqual([])
    }
  })

  it('yields records as they arrive rather than waiting for a full batch', async () => {
    let push
    const stream = new Readable({ read () {} })
    push = (s) => stream.push(s)
    const it = openReader({ name: 'live.ndjson', stream }, { format: 'ndjson', batchRecords: 1000 })[Symbol.asyncIterator]()
    push('{"a":1}\n{"a":2}\n')
    const first = await it.next()
    expect(first.value.records).toEqual([{ a: 1 }, { a: 2 }])
    push(null)
    expect((await it.next()).done).toBe(true)
  })

  it('a reader can be iterated only once', async () => {
    const reader = openReader({ name: 'x', stream: Readable.from([]) }, { format: 'ndjson' })
    reader[Symbol.asyncIterator]()
    expect(() => reader[Symbol.asyncIterator]()).toThrow(PipeloadError)
  })
})
