'use strict'
/* global describe, it, expect */

// The rules turning stored Parquet values into text (lib/read/parquet/values.js), over many
// values each, against oracles that share no code with them: JavaScript's Date for dates and
// timestamps, text generated first (and its digits made the stored integer) for decimals,
// BigInt.asIntN for two's complement, an exact BigInt search for float32's shortest text.
const { prng } = require('./helpers/prng')
const { shortestFloat32 } = require('./helpers/parquet')
const { float32Value, decimalText, dateText, timestampText, timeText, int96Text, bytesToBigInt, leafValue } = require('../lib/read/parquet/values')
const { convertParts } = require('../lib/read/parquet/reader')

const r = prng(2024)
const MAX_DAYS = 100000000 // JS Date's range: ±1e8 days around 1970

describe('Parquet values as text', () => {
  it('float32: the shortest text that reads back, for 50k random floats and the edges', () => {
    const bits = [0x00000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0x3dcccccd, 0x4b800000, 0x4c3fa7e7]
    for (let i = 0; i < 50000; i++) bits.push((r.int(65536) * 65536 + r.int(65536)) >>> 0)
    const f32 = new Float32Array(1)
    const u32 = new Uint32Array(f32.buffer)
    for (const b of bits) {
      u32[0] = b
      const f = f32[0]
      if (!Number.isFinite(f) || f === 0) continue
      const text = String(float32Value(f))
      expect(Math.fround(Number(text)), text).toBe(f)
      expect(text, `bits ${b.toString(16)}`).toBe(shortestFloat32(f))
    }
    expect(String(float32Value(-0))).toBe('-0')
    expect(String(float32Value(NaN))).toBe('NaN')
    expect(String(float32Value(-Infinity))).toBe('-Infinity')
  })

  it('decimals: the unscaled integer with exactly `scale` digits after the point', () => {
    for (let i = 0; i < 20000; i++) {
      const scale = r.int(20)
      const whole = r.chance(0.3) ? '0' : String(1 + r.int(9)) + Array.from({ length: r.int(25) }, () => r.int(10)).join('')
      const frac = Array.from({ length: scale }, () => r.int(10)).join('')
      let text = scale ? `${whole}.${frac}` : whole
      if (/[1-9]/.test(text) && r.chance(0.5)) text = '-' + text
      expect(decimalText(BigInt(text.replace('.', '')), scale)).toBe(text)
    }
    expect(decimalText(-5n, 2)).toBe('-0.05')
    expect(decimalText(12n, -2)).toBe('1200')
  })

  it('two\'s complement bytes (DECIMAL in FIXED_LEN_BYTE_ARRAY) as BigInt', () => {
    for (let i = 0; i < 5000; i++) {
      const bytes = Buffer.from(Array.from({ length: 1 + r.int(16) }, () => r.int(256)))
      expect(bytesToBigInt(bytes)).toBe(BigInt.asIntN(bytes.length * 8, BigInt('0x' + bytes.toString('hex'))))
    }
  })

  it('dates as YYYY-MM-DD over JS Date\'s whole range (extended years ±YYYYYY)', () => {
    const days = [0, -1, -719162, 2932896, 2932897, 11016, -MAX_DAYS, MAX_DAYS]
    for (let i = 0; i < 50000; i++) days.push(r.int(2 * MAX_DAYS) - MAX_DAYS)
    for (const d of days) expect(dateText(d), String(d)).toBe(new Date(d * 86400000).toISOString().split('T')[0])
  })

  it('timestamps: ISO 8601 with the unit\'s digits, before 1970 too; Z only for instants', () => {
    for (let i = 0; i < 20000; i++) {
      const ms = r.int(2 * 8.64e15) - 8.64e15 // the whole Date range
      const iso = new Date(ms).toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ, ±YYYYYY beyond 0000-9999
      expect(timestampText(ms, 'MILLIS', true)).toBe(iso)
      const us = r.int(1000)
      expect(timestampText(BigInt(ms) * 1000n + BigInt(us), 'MICROS', false)).toBe(iso.slice(0, -1) + String(us).padStart(3, '0'))
      const ns = r.int(1000000)
      expect(timestampText(BigInt(ms) * 1000000n + BigInt(ns), 'NANOS', true)).toBe(iso.slice(0, -1) + String(ns).padStart(6, '0') + 'Z')
    }
    expect(int96Text(-1n)).toBe('1969-12-31T23:59:59.999999999Z')
  })

  it('times of day, and the types by schema element', () => {
    expect(timeText(49500250, 'MILLIS', false)).toBe('13:45:00.250')
    expect(timeText(86399999999n, 'MICROS', true)).toBe('23:59:59.999999Z')
    expect(leafValue({ type: 'INT64', converted_type: 'UINT_64' })(-1n).text).toBe('18446744073709551615')
    expect(leafValue({ type: 'INT32', converted_type: 'UINT_32' })(-1)).toBe(4294967295)
    expect(leafValue({ type: 'INT64' })(9007199254740993n).text).toBe('9007199254740993')
    expect(leafValue({ type: 'INT64' })(-9007199254740991n)).toBe(-9007199254740991)
    expect(leafValue({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } })(Buffer.from('00112233445566778899aabbccddeeff', 'hex'))).toBe('00112233-4455-6677-8899-aabbccddeeff')
    expect(leafValue({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 12, converted_type: 'INTERVAL' })(Buffer.from([1, 0, 0, 0, 2, 0, 0, 0, 0xac, 0x0d, 0, 0]))).toBe('P1M2DT3.5S')
    expect(leafValue({ type: 'DOUBLE' })(-0).text).toBe('-0')
    const blob = new Uint8Array([0xff, 0x00, 0xc3])
    expect(leafValue({ type: 'BYTE_ARRAY' })(blob)).toEqual(Buffer.from([0xff, 0x00, 0xc3]))
  })

  it('a column given in several chunks, in any order, is one array in row order', () => {
    // hyparquet 1.31 appends a chunk's pages into one array (no Parquet file written here gave
    // several), but its onChunk may call several times per column: the join must not rely on one.
    const parts = [{ rowStart: 105, columnData: [5, 6] }, { rowStart: 100, columnData: new Int32Array([0, 1, 2]) }, { rowStart: 103, columnData: [3, 4] }]
    expect(convertParts(parts, 7, v => v)).toEqual([0, 1, 2, 3, 4, 5, 6])
    // Converted on the way: each value once, into a new array.
    const one = [7, 8]
    const got = convertParts([{ rowStart: 0, columnData: one }], 2, v => v * 10)
    expect(got).toEqual([70, 80])
    expect(one).toEqual([7, 8])
  })
})
