'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// The cutter (lib/read/cut.js): chunks end at record boundaries, quotes counted across
// pushes, each chunk as short as chunkSize allows. Checked against a plain reference: the
// positions after a line break outside quotes, by walking the whole input byte by byte.

const { Cutter } = require('../lib/read/cut')
const { prng } = require('./helpers/prng')

/** Every record boundary of `buf` (the position after an LF outside quotes). */
function boundaries (buf, csv) {
  const out = new Set()
  let inQuote = false
  for (let i = 0; i < buf.length; i++) {
    if (csv && buf[i] === 0x22) inQuote = !inQuote
    else if (buf[i] === 0x0a && !inQuote) out.add(i + 1)
  }
  return out
}

/** Push `buf` in random pieces; returns the chunks, with the rest. */
function cutAll (buf, format, chunkSize, rnd, offset = 0) {
  const cutter = new Cutter({ format, chunkSize, offset })
  const chunks = []
  for (let p = 0; p < buf.length;) {
    const n = 1 + rnd.int(Math.min(64, buf.length - p))
    chunks.push(...cutter.push(buf.subarray(p, p + n)))
    p += n
  }
  const last = cutter.end()
  if (last) chunks.push(last)
  return chunks
}

function csvText (rnd, rows) {
  const field = () => rnd.pick(['a', 'bc', '', '"q""uote"', '"multi\nline"', '"x,y"', '"\r\n"', 'plain text', '""'])
  let s = 'id,name,note\n'
  for (let i = 0; i < rows; i++) s += `${i},${field()},${field()}${rnd.chance(0.2) ? '\r\n' : '\n'}`
  return s
}

function ndjsonText (rnd, rows) {
  let s = ''
  for (let i = 0; i < rows; i++) s += JSON.stringify({ id: i, t: rnd.pick(['a', 'b\nc', '"', '']) }) + (rnd.chance(0.2) ? '\r\n' : '\n') + (rnd.chance(0.1) ? '\n' : '')
  return s
}

describe('Cutter', () => {
  for (const [format, gen] of [['csv', csvText], ['ndjson', ndjsonText]]) {
    it(`${format}: chunks cover the input, end at boundaries, as short as chunkSize allows`, () => {
      const rnd = prng(format.length * 31)
      for (let round = 0; round < 30; round++) {
        const buf = Buffer.from(gen(rnd, 1 + rnd.int(60)) + (rnd.chance(0.5) ? 'tail,"no\nnewline"' : ''))
        const bounds = boundaries(buf, format === 'csv')
        for (const chunkSize of [1, 2, 3, 7, 16, 100, 1 << 20]) {
          const chunks = cutAll(buf, format, chunkSize, rnd, 3)
          expect(Buffer.concat(chunks.map(c => c.buf)).equals(buf)).toBe(true)
          let at = 0
          chunks.forEach((c, i) => {
            expect(c.index).toBe(i)
            expect(c.offset).toBe(at + 3)
            at += c.buf.length
            if (i === chunks.length - 1) return
            expect(bounds.has(at), `cut at ${at}, chunk size ${chunkSize}`).toBe(true)
            expect(c.buf.length).toBeGreaterThanOrEqual(chunkSize)
            // The first boundary at or after chunkSize: none earlier in the chunk.
            for (let b = at - c.buf.length + chunkSize; b < at; b++) expect(bounds.has(b)).toBe(false)
          })
        }
      }
    })
  }

  it('an escaped quote does not flip the parity; a quote across pushes is remembered', () => {
    const cutter = new Cutter({ format: 'csv', chunkSize: 1 })
    expect(cutter.push(Buffer.from('"a""'))).toEqual([])
    expect(cutter.push(Buffer.from('\nb"'))).toEqual([]) // the LF is inside the quotes
    const [c] = cutter.push(Buffer.from(',c\nd'))
    expect(c.buf.toString()).toBe('"a""\nb",c\n')
    expect(cutter.end().buf.toString()).toBe('d')
  })

  it('tsv is cut like csv: quotes may hold line breaks', () => {
    const cutter = new Cutter({ format: 'tsv', chunkSize: 1 })
    const chunks = cutter.push(Buffer.from('a\t"x\ny"\nb\tc\n'))
    expect(chunks.map(c => c.buf.toString())).toEqual(['a\t"x\ny"\n', 'b\tc\n'])
  })

  it('no boundary within maxRecordSize + chunkSize: overflow, the bytes kept for the caller', () => {
    const cutter = new Cutter({ format: 'ndjson', chunkSize: 4, maxRecordSize: 10 })
    expect(cutter.push(Buffer.from('{"a":1}\n{"b":"'))).toHaveLength(1)
    expect(cutter.push(Buffer.from('x'.repeat(20)))).toEqual([])
    expect(cutter.overflow).toBe(true)
    expect(cutter.push(Buffer.from('"}\n'))).toEqual([])
    expect(cutter.end()).toBe(null)
    expect(Buffer.concat(cutter.rest()).toString()).toBe('{"b":"' + 'x'.repeat(20) + '"}\n')
    expect(cutter.index).toBe(1)
  })

  it('a chunk owns its memory (the given allocator), so it can be shared with a thread', () => {
    const cutter = new Cutter({ format: 'ndjson', chunkSize: 2, alloc: n => Buffer.from(new SharedArrayBuffer(n)) })
    const [c] = cutter.push(Buffer.from('1\n2\n'))
    expect(c.buf.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(c.buf.byteLength).toBe(c.buf.buffer.byteLength)
  })
})
