'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// lib/read/copy.js: bytes copied into and out of shared memory, short and long, at any offset.
const { copyBytes } = require('../lib/read/copy')

describe('copyBytes', () => {
  const src = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31 + 7) & 0xff))
  for (const [what, make] of [['a SharedArrayBuffer', n => Buffer.from(new SharedArrayBuffer(n))], ['an ArrayBuffer', n => Buffer.alloc(n)]]) {
    it(`into ${what}: every length around the switch to one memcpy, at odd offsets, and nothing around the range`, () => {
      for (const n of [0, 1, 31, 255, 256, 257, 1000, 4093]) {
        for (const [at, start] of [[0, 0], [3, 1], [7, 13]]) {
          const target = make(n + at + 8).fill(0xee)
          const into = { buf: target, pos: at }
          expect(copyBytes(src, start, start + n, into)).toBe(n)
          expect(into.pos).toBe(at + n)
          expect(target.subarray(at, at + n).equals(src.subarray(start, start + n)), `${n} bytes at ${at} from ${start}`).toBe(true)
          expect(target.subarray(0, at).every(b => b === 0xee)).toBe(true)
          expect(target.subarray(at + n).every(b => b === 0xee)).toBe(true)
        }
      }
    })
  }

  it('out of shared memory, whole', () => {
    const shared = Buffer.from(new SharedArrayBuffer(3000))
    copyBytes(src, 0, 3000, { buf: shared, pos: 0 })
    const target = Buffer.alloc(3000)
    expect(copyBytes(shared, 0, 3000, { buf: target, pos: 0 })).toBe(3000)
    expect(target.equals(src.subarray(0, 3000))).toBe(true)
  })
})
