'use strict'
/* global describe, it, expect */

// lib/read/cut.js: chunks at record boundaries, the same cuts however the bytes arrive.
const { parse } = require('csv-parse/sync')
const { Cutter, countLines } = require('../lib/read/cut')
const { prng } = require('./helpers/prng')

/**
 * Record ends by a byte-by-byte state machine (not the indexOf scan under test), reading
 * quotes as csv-parse does: a quote opens a field only at its start; `""` inside is a
 * quote; a closing quote is followed by the delimiter, LF or CR. A quote anywhere else is
 * a fault, and the faulty record ends at the next LF (where csv-parse's skip mode resumes).
 */
function referenceEnds (buf, quoted, delimiter = 0x2c) {
  const ends = []
  let state = 'out'
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]
    if (!quoted || state === 'fault') {
      if (c === 0x0a) { ends.push(i + 1); state = 'out' }
    } else if (state === 'in') {
      if (c !== 0x22) continue
      const next = buf[i + 1]
      if (next === 0x22) i++
      else state = next === undefined || next === delimiter || next === 0x0a || next === 0x0d ? 'out' : 'fault'
    } else if (c === 0x22) {
      const prev = i === 0 ? 0x0a : buf[i - 1]
      state = prev === 0x0a || prev === delimiter ? 'in' : 'fault'
    } else if (c === 0x0a) ends.push(i + 1)
  }
  return ends
}

/** Chunk ends by the rule: the first record end at or after `size` bytes from the chunk's start. */
function expectedCuts (buf, quoted, size) {
  const cuts = []
  let start = 0
  for (const e of referenceEnds(buf, quoted)) {
    if (e - start >= size) { cuts.push(e); start = e }
  }
  if (start < buf.length) cuts.push(buf.length)
  return cuts
}

function cut (buf, format, size, pieceSize) {
  const c = new Cutter({ format, chunkSize: size })
  const out = []
  for (let i = 0; i < buf.length; i += pieceSize) out.push(...c.push(buf.subarray(i, i + pieceSize)))
  const last = c.end()
  if (last) out.push(last)
  return out
}

function randomCsv (rand, rows) {
  const field = () => {
    const r = rand()
    if (r < 0.4) return String(Math.floor(rand() * 1000))
    const words = ['a', 'b c', '""', ',', '\n', '\r\n', 'x"y', 'é']
    let s = ''
    for (let k = Math.floor(rand() * 4); k > 0; k--) s += words[Math.floor(rand() * words.length)]
    return '"' + s.replace(/"/g, '""') + '"'
  }
  let text = 'id,a,b\n'
  for (let i = 0; i < rows; i++) text += [i, field(), field()].join(',') + (rand() < 0.2 ? '\r\n' : '\n')
  return text
}

describe('Cutter', () => {
  it('cuts CSV at the first LF outside quotes at or after size bytes, whatever the pieces', () => {
    const rand = prng(7).next
    for (let t = 0; t < 30; t++) {
      const buf = Buffer.from(randomCsv(rand, 40))
      const whole = parse(buf, { record_delimiter: ['\n', '\r\n'] })
      for (const size of [1, 2, 7, 30, 100, 5000]) {
        const want = expectedCuts(buf, true, size)
        for (const piece of [1, 3, 64, buf.length]) {
          const chunks = cut(buf, 'csv', size, piece)
          expect(chunks.map(c => c.offset + c.buf.length), `size ${size} piece ${piece}`).toEqual(want)
          expect(chunks.map(c => c.index)).toEqual(chunks.map((_, i) => i))
          expect(Buffer.concat(chunks.map(c => c.buf)).equals(buf)).toBe(true)
          // Every chunk holds whole records: parsed alone, they give the whole file's records.
          const parts = chunks.flatMap(c => parse(c.buf, { record_delimiter: ['\n', '\r\n'] }))
          expect(parts).toEqual(whole)
        }
      }
    }
  })

  it('NDJSON: every LF ends a record, quotes do not matter', () => {
    const buf = Buffer.from('{"a":"\\"x"}\n{"b":"\\n"}\n"\n{"c":1}')
    for (const size of [1, 5, 12, 100]) {
      const want = expectedCuts(buf, false, size)
      for (const piece of [1, 2, buf.length]) {
        expect(cut(buf, 'ndjson', size, piece).map(c => c.offset + c.buf.length)).toEqual(want)
      }
    }
    // Read as CSV, the same bytes cut elsewhere: the quotes count there.
    expect(cut(buf, 'csv', 1, 4).map(c => c.offset + c.buf.length)).toEqual(expectedCuts(buf, true, 1))
    expect(expectedCuts(buf, true, 1)).not.toEqual(expectedCuts(buf, false, 1))
  })

  it('empty input: no chunks; a tail without a line break is the last chunk', () => {
    expect(cut(Buffer.alloc(0), 'csv', 4, 1)).toEqual([])
    const chunks = cut(Buffer.from('a\nbb'), 'ndjson', 1, 1)
    expect(chunks.map(c => [c.index, c.offset, c.buf.toString()])).toEqual([[0, 0, 'a\n'], [1, 2, 'bb']])
  })

  it('countLines counts LFs in a range', () => {
    const b = Buffer.from('a\nb\r\n\nc')
    expect(countLines(b)).toBe(3)
    expect(countLines(b, 2, 5)).toBe(1)
    expect(countLines(b, 6, 6)).toBe(0)
  })
})

// The cutter (lib/read/cut.js): chunks end at record boundaries, quotes counted across
// pushes, each chunk as short as chunkSize allows. Checked against a plain reference: the
// positions after a line break outside quotes, by walking the whole input byte by byte.


/** Every record boundary of `buf` (the position after an LF outside quotes). */
function boundaries (buf, csv) {
  return new Set(referenceEnds(buf, csv))
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

// Malformed CSV, as dirty files have it: a quote inside an unquoted field, text after a
// closing quote, quoted fields of several lines around them. The cuts follow csv-parse's
// reading (skip mode resumes after the first LF past a fault), so a chunk read on its own
// gives the records, rejected ones included, that a read of the whole input gives there.
const { Readable } = require('node:stream')
const { openReader, Rejected } = require('../lib/read/reader')
const { CsvRow } = require('../lib/read/csv/row')

function dirtyCsv (rnd, rows) {
  const field = () => rnd.pick(['a', '7', '', '"q""uote"', '"multi\nline"', '"x,y"', 'ab"c', '"x"y', 'say "hi"', '"a\nb"z', '"""', '"\r\n"'])
  let s = 'id,name,note\n'
  for (let i = 0; i < rows; i++) s += `${i},${field()},${field()}${rnd.chance(0.2) ? '\r\n' : '\n'}`
  return s
}

/** Everything a skip-mode read of `buf` from `start` gives, lines made absolute. */
async function readSkip (buf, start) {
  const reader = openReader({ name: 'd.csv', stream: Readable.from([buf]) }, { format: 'csv', onError: 'skip', start, rows: true })
  const out = []
  try {
    for await (const b of reader) {
      b.records.forEach((r, i) => out.push({ line: b.lines[i], offset: b.offsets[i], value: r instanceof Rejected ? ['rejected', r.code, r.message.replace(/^d\.csv:\d+: /, '')] : r instanceof CsvRow ? r.toArray() : r }))
    }
  } catch (err) {
    return { out, error: err.code }
  }
  return { out, error: null }
}

describe('Cutter on malformed CSV', () => {
  it('cuts where csv-parse reads record ends, faults and all, whatever the pieces', () => {
    const rnd = prng(41)
    for (let round = 0; round < 40; round++) {
      const buf = Buffer.from(dirtyCsv(rnd, 1 + rnd.int(40)))
      const bounds = boundaries(buf, true)
      for (const chunkSize of [1, 5, 64]) {
        const chunks = cutAll(buf, 'csv', chunkSize, rnd)
        expect(Buffer.concat(chunks.map(c => c.buf)).equals(buf)).toBe(true)
        let at = 0
        for (const c of chunks.slice(0, -1)) {
          at += c.buf.length
          expect(bounds.has(at), `cut at ${at}, chunk size ${chunkSize}: ${JSON.stringify(buf.toString())}`).toBe(true)
        }
      }
    }
  })

  it('each chunk read alone in skip mode gives what the whole read gives there', async () => {
    const rnd = prng(43)
    for (let round = 0; round < 40; round++) {
      const buf = Buffer.from(dirtyCsv(rnd, 1 + rnd.int(40)))
      const whole = await readSkip(buf, null)
      if (whole.error !== null) continue // a quote left open: fatal in every mode
      for (const chunkSize of [1, 16, 200]) {
        const chunks = cutAll(buf, 'csv', chunkSize, rnd)
        const got = []
        let line = 1
        for (const c of chunks) {
          const start = c.index === 0 ? null : { offset: c.offset, line, columns: ['id', 'name', 'note'], fields: 3 }
          const part = await readSkip(c.buf, start)
          expect(part.error, `chunk ${c.index} of ${JSON.stringify(buf.toString())}`).toBe(null)
          got.push(...part.out)
          line += countLines(c.buf)
        }
        expect(got, `chunk size ${chunkSize}: ${JSON.stringify(buf.toString())}`).toEqual(whole.out)
      }
    }
  })

  it('a stray quote in a field does not leave the rest of the input uncut', () => {
    for (const tail of ['plain', '"a\nb"']) {
      const rows = Array.from({ length: 50 }, (_, i) => i === 3 ? '3,Bad "quote,x' : `${i},n${i},${tail}`)
      const buf = Buffer.from('id,name,note\n' + rows.join('\n') + '\n')
      const bounds = boundaries(buf, true)
      const chunks = cutAll(buf, 'csv', 40, prng(1))
      // Quote parity alone (the cutter before) read every line after the stray quote as
      // quoted: no cut at all, or cuts inside the quoted fields.
      expect(chunks.length).toBeGreaterThan(10)
      expect(chunks.every(c => c.buf.length < 80)).toBe(true)
      let at = 0
      for (const c of chunks) expect(bounds.has(at += c.buf.length) || at === buf.length).toBe(true)
      expect(bounds.has(buf.indexOf('4,n4'))).toBe(true) // the record after the stray quote starts a line
    }
  })
})

describe('Cutter#flush (an input that pauses: its whole records go out now)', () => {
  /** Push `buf` in random pieces, flushing after some of them; the chunks and which came from flush(). */
  function cutFlushing (buf, format, chunkSize, rnd) {
    const cutter = new Cutter({ format, chunkSize })
    const chunks = []
    for (let p = 0; p < buf.length;) {
      const n = 1 + rnd.int(Math.min(64, buf.length - p))
      chunks.push(...cutter.push(buf.subarray(p, p + n)).map(c => ({ ...c, flushed: false, pending: null })))
      p += n
      if (rnd.chance(0.3)) {
        const pending = Buffer.concat(cutter.parts)
        const c = cutter.flush()
        if (c) chunks.push({ ...c, flushed: true, pending })
        else chunks.push({ flushed: true, none: true, pending })
      }
    }
    const last = cutter.end()
    if (last) chunks.push({ ...last, flushed: false, pending: null })
    return chunks
  }

  for (const [format, gen, quoted] of [['csv', csvText, true], ['csv', dirtyCsv, true], ['ndjson', ndjsonText, false]]) {
    it(`${format} (${gen.name}): chunks cover the input and end at record boundaries; a flush takes up to the last whole record`, () => {
      const rnd = prng(gen.name.length * 7 + 1)
      for (let round = 0; round < 40; round++) {
        const buf = Buffer.from(gen(rnd, 1 + rnd.int(50)))
        const bounds = boundaries(buf, quoted)
        for (const chunkSize of [1, 3, 7, 16, 64, 1 << 20]) {
          const out = cutFlushing(buf, format, chunkSize, rnd)
          const chunks = out.filter(c => !c.none)
          expect(Buffer.concat(chunks.map(c => c.buf)).equals(buf)).toBe(true)
          let at = 0
          chunks.forEach((c, i) => {
            expect(c.index).toBe(i)
            expect(c.offset).toBe(at)
            at += c.buf.length
            if (i < chunks.length - 1) expect(bounds.has(at), `cut at ${at}, chunk size ${chunkSize}`).toBe(true)
          })
          // What a flush took: everything pending up to its last record end, nothing after one.
          at = 0
          for (const c of out) {
            if (c.flushed) {
              const ends = referenceEnds(c.pending, quoted)
              const want = ends.length ? ends[ends.length - 1] : 0
              expect(c.none ? 0 : c.buf.length, `flush at ${at}`).toBe(want)
            }
            if (!c.none) at += c.buf.length
          }
        }
      }
    })
  }

  it('after a flush, the scan for the next cut starts at the record after it, not inside a quote it had seen', () => {
    const cutter = new Cutter({ format: 'csv', chunkSize: 10 })
    expect(cutter.push(Buffer.from('1,2\n3,4\n"a'))).toEqual([]) // 10 bytes: no record end at or after the 9th, the scan is inside "a
    expect(cutter.flush().buf.toString()).toBe('1,2\n3,4\n')
    expect(cutter.push(Buffer.from('b"\n'))).toEqual([]) // 5 bytes pending: no scan
    expect(cutter.flush().buf.toString()).toBe('"ab"\n')
    // Read as still inside the quote, the next line break would not end a record.
    const [next] = cutter.push(Buffer.from('5,67890\n8,9\n'))
    expect(next.buf.toString()).toBe('5,67890\n8,9\n')
    expect(cutter.end()).toBe(null)
  })

  it('a quoted line break pending at the pause stays with its record', () => {
    const cutter = new Cutter({ format: 'csv', chunkSize: 1 << 20 })
    cutter.push(Buffer.from('id,note\n1,"first\nhalf'))
    expect(cutter.flush().buf.toString()).toBe('id,note\n')
    expect(cutter.flush()).toBe(null) // nothing whole yet
    cutter.push(Buffer.from(' and more"\n2,x\n3,"y'))
    expect(cutter.flush().buf.toString()).toBe('1,"first\nhalf and more"\n2,x\n')
    expect(cutter.end().buf.toString()).toBe('3,"y')
  })
})
