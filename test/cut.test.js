'use strict'
/* global describe, it, expect */

// lib/read/cut.js: chunks at record boundaries, the same cuts however the bytes arrive.
const { parse } = require('csv-parse/sync')
const { Cutter, countLines } = require('../lib/read/cut')
const { prng } = require('./helpers/prng')

/** Record ends by a byte-by-byte state machine (not the indexOf scan under test). */
function referenceEnds (buf, quoted) {
  const ends = []
  let inQuote = false
  for (let i = 0; i < buf.length; i++) {
    if (quoted && buf[i] === 0x22) inQuote = !inQuote
    else if (buf[i] === 0x0a && !inQuote) ends.push(i + 1)
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
  const c = new Cutter({ format, size })
  const out = []
  for (let i = 0; i < buf.length; i += pieceSize) out.push(...c.push(buf.subarray(i, i + pieceSize)))
  out.push(...c.end())
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
