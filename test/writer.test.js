'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// lib/encode/writer.js: the buffers batches are written into, given back and used again.
const { ByteWriter } = require('../lib/encode/writer')

describe('ByteWriter buffers', () => {
  it('writes the next batch into a given-back buffer that holds its first write, even one smaller than the last batch', () => {
    const free = []
    const w = new ByteWriter(1024, free)
    w.bytes(Buffer.alloc(200 * 1024, 1))
    const big = w.take() // a 256 KiB buffer: the next one is sized for about 225 KiB
    const small = Buffer.allocUnsafeSlow(96 * 1024)
    w.recycle(small.subarray(0, 10))
    expect(free).toHaveLength(1)
    w.bytes(Buffer.from('*1\r\n'))
    expect(w.buf.buffer).toBe(small.buffer) // not a fresh allocation beside it
    expect(free).toHaveLength(0)
    w.bytes(Buffer.alloc(150 * 1024, 2)) // too small now: grows, the bytes so far kept
    expect(w.buf.buffer).not.toBe(small.buffer)
    const out = w.take()
    expect(out.length).toBe(4 + 150 * 1024)
    expect(out.subarray(0, 4).toString()).toBe('*1\r\n')
    expect(big.length).toBe(200 * 1024)
  })

  it('a writer that is done holds no buffer: take() leaves it empty until the next write', () => {
    const free = [Buffer.allocUnsafeSlow(64 * 1024)]
    const w = new ByteWriter(1024, free)
    expect(free).toHaveLength(1) // not taken before the first write
    w.bytes(Buffer.from('abc'))
    expect(free).toHaveLength(0)
    expect(w.take().toString()).toBe('abc')
    expect(w.buf.length).toBe(0)
    expect(w.take().length).toBe(0)
  })
})
