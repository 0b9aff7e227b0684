'use strict'

// Parquet files written byte by byte, for what no writer writes: hostile or damaged files (a
// page whose data decompresses to more than its header says, a dictionary index past the
// dictionary, strings that are not UTF-8, a schema nested 5,000 levels deep). The footer and
// page headers are Thrift's compact protocol, written here from the Parquet format's
// parquet.thrift field numbers: independent of the reader under test (hyparquet).
//
// parquetFile({ schema, rowGroups }) -> Buffer:
//   schema: [{ name, type?, repetition?, children?, converted?, logical?, length?, scale?, precision? }]
//     in depth-first order, the root first (children: its number of children)
//   rowGroups: [{ rows, columns: [{ path: [name], type, codec, pages: [page] }] }]
//   page: { kind: 'data' | 'dictionary', values (count), encoding, body (the page's bytes as
//     stored, compressed already), size (uncompressed_page_size as the header says; the
//     body's length by default) }

const zlib = require('node:zlib')
const { once } = require('node:events')

const TYPE = Object.freeze({ BOOLEAN: 0, INT32: 1, INT64: 2, INT96: 3, FLOAT: 4, DOUBLE: 5, BYTE_ARRAY: 6, FIXED_LEN_BYTE_ARRAY: 7 })
const REPETITION = Object.freeze({ REQUIRED: 0, OPTIONAL: 1, REPEATED: 2 })
const CONVERTED = Object.freeze({ UTF8: 0, MAP: 1, MAP_KEY_VALUE: 2, LIST: 3, ENUM: 4, DECIMAL: 5, JSON: 19 })
const ENCODING = Object.freeze({ PLAIN: 0, PLAIN_DICTIONARY: 2, RLE: 3, RLE_DICTIONARY: 8 })
const CODEC = Object.freeze({ UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, BROTLI: 4, LZ4: 5, ZSTD: 6, LZ4_RAW: 7 })
const PAGE = Object.freeze({ data: 0, dictionary: 2 })

// Compact protocol types.
const T = Object.freeze({ I32: 5, I64: 6, BINARY: 8, LIST: 9, STRUCT: 12 })

function varint (n) {
  let v = BigInt(n)
  const out = []
  do {
    let byte = Number(v & 0x7fn)
    v >>= 7n
    if (v > 0n) byte |= 0x80
    out.push(byte)
  } while (v > 0n)
  return Buffer.from(out)
}

function zigzag (n) {
  const v = BigInt(n)
  return varint(v >= 0n ? 2n * v : -2n * v - 1n)
}

/** A struct: [[id, type, value]] in id order; a value of type STRUCT is such an array, of LIST { type, items }. */
function struct (fields) {
  const parts = []
  let last = 0
  for (const [id, type, value] of fields) {
    if (value === undefined) continue
    const delta = id - last
    if (delta > 0 && delta <= 15) parts.push(Buffer.from([(delta << 4) | type]))
    else parts.push(Buffer.from([type]), zigzag(id))
    last = id
    parts.push(valueOf(type, value))
  }
  parts.push(Buffer.from([0]))
  return Buffer.concat(parts)
}

function valueOf (type, value) {
  switch (type) {
    case T.I32: case T.I64: return zigzag(value)
    case T.BINARY: {
      const b = Buffer.isBuffer(value) ? value : Buffer.from(value)
      return Buffer.concat([varint(b.length), b])
    }
    case T.STRUCT: return struct(value)
    case T.LIST: {
      const { type: t, items } = value
      const head = items.length < 15 ? Buffer.from([(items.length << 4) | t]) : Buffer.concat([Buffer.from([0xf0 | t]), varint(items.length)])
      return Buffer.concat([head, ...items.map(i => valueOf(t, i))])
    }
    default: throw new Error(`no such type ${type}`)
  }
}

function schemaElement (e) {
  return [
    [1, T.I32, e.type === undefined ? undefined : TYPE[e.type]],
    [2, T.I32, e.length],
    [3, T.I32, e.repetition === undefined ? undefined : REPETITION[e.repetition]],
    [4, T.BINARY, e.name],
    [5, T.I32, e.children],
    [6, T.I32, e.converted == null ? undefined : CONVERTED[e.converted]],
    [7, T.I32, e.scale],
    [8, T.I32, e.precision],
    [10, T.STRUCT, e.logical]
  ]
}

/** A page: its header, then its bytes. */
function page (p) {
  const header = [
    [1, T.I32, PAGE[p.kind]],
    [2, T.I32, p.size ?? p.body.length],
    [3, T.I32, p.body.length]
  ]
  if (p.kind === 'data') {
    header.push([5, T.STRUCT, [[1, T.I32, p.values], [2, T.I32, ENCODING[p.encoding]], [3, T.I32, ENCODING.RLE], [4, T.I32, ENCODING.RLE]]])
  } else {
    header.push([7, T.STRUCT, [[1, T.I32, p.values], [2, T.I32, ENCODING[p.encoding || 'PLAIN']]]])
  }
  return Buffer.concat([struct(header), p.body])
}

/** A whole file. */
function parquetFile ({ schema, rowGroups }) {
  const parts = [Buffer.from('PAR1')]
  let at = 4
  const groups = []
  for (const g of rowGroups) {
    const chunks = []
    for (const c of g.columns) {
      const start = at
      let dictionary
      let data
      const bytes = []
      for (const p of c.pages) {
        if (p.kind === 'dictionary' && dictionary === undefined) dictionary = at
        if (p.kind === 'data' && data === undefined) data = at
        const b = page(p)
        bytes.push(b)
        at += b.length
      }
      parts.push(...bytes)
      const size = at - start
      const encodings = [...new Set(c.pages.map(p => ENCODING[p.encoding || 'PLAIN']).concat(ENCODING.RLE))]
      chunks.push([
        [2, T.I64, start],
        [3, T.STRUCT, [
          [1, T.I32, TYPE[c.type]],
          [2, T.LIST, { type: T.I32, items: encodings }],
          [3, T.LIST, { type: T.BINARY, items: c.path }],
          [4, T.I32, CODEC[c.codec || 'UNCOMPRESSED']],
          [5, T.I64, g.rows],
          [6, T.I64, size],
          [7, T.I64, size],
          [9, T.I64, data],
          [11, T.I64, dictionary]
        ]]
      ])
    }
    groups.push([
      [1, T.LIST, { type: T.STRUCT, items: chunks }],
      [2, T.I64, 0],
      [3, T.I64, g.rows]
    ])
  }
  const footer = struct([
    [1, T.I32, 1],
    [2, T.LIST, { type: T.STRUCT, items: schema.map(schemaElement) }],
    [3, T.I64, rowGroups.reduce((n, g) => n + g.rows, 0)],
    [4, T.LIST, { type: T.STRUCT, items: groups }],
    [6, T.BINARY, 'pipeload tests']
  ])
  const length = Buffer.alloc(4)
  length.writeUInt32LE(footer.length)
  parts.push(footer, length, Buffer.from('PAR1'))
  return Buffer.concat(parts)
}

/** PLAIN values: INT64s (BigInts or numbers), INT32s, byte arrays (Buffers or strings). */
function plainInt64 (values) {
  const b = Buffer.alloc(8 * values.length)
  values.forEach((v, i) => b.writeBigInt64LE(BigInt(v), 8 * i))
  return b
}

function plainInt32 (values) {
  const b = Buffer.alloc(4 * values.length)
  values.forEach((v, i) => b.writeInt32LE(v, 4 * i))
  return b
}

function plainBytes (values) {
  return Buffer.concat(values.map(v => {
    const bytes = Buffer.isBuffer(v) ? v : Buffer.from(v)
    const len = Buffer.alloc(4)
    len.writeUInt32LE(bytes.length)
    return Buffer.concat([len, bytes])
  }))
}

/** A dictionary-encoded page's body: the bit width, then each index as an RLE run of one. */
function dictionaryIndices (indices, width = 8) {
  const bytes = Math.ceil(width / 8)
  const parts = [Buffer.from([width])]
  for (const idx of indices) {
    const v = Buffer.alloc(bytes)
    v.writeUIntLE(idx, 0, bytes)
    parts.push(varint(1 << 1), v)
  }
  return Buffer.concat(parts)
}

/** One REQUIRED top-level column: a schema and one row group of one chunk. */
function oneColumn ({ name = 'v', type, converted, logical, rows, codec = 'UNCOMPRESSED', pages, scale, precision, length }) {
  return parquetFile({
    schema: [{ name: 'schema', children: 1 }, { name, type, repetition: 'REQUIRED', converted, logical, scale, precision, length }],
    rowGroups: [{ rows, columns: [{ path: [name], type, codec, pages }] }]
  })
}

/**
 * A zstd frame of `size` bytes of `byte`, no content size in its header, made of RLE blocks
 * (RFC 8878: a block header of 3 bytes, last-block bit, type 1, the regenerated size; then the
 * byte): a few bytes per 128 KiB.
 */
function zstdRle (size, byte = 0) {
  const BLOCK = 128 * 1024
  const blocks = Math.max(1, Math.ceil(size / BLOCK))
  const out = Buffer.alloc(6 + 4 * blocks)
  out.writeUInt32LE(0xfd2fb528, 0)
  out[4] = 0x00 // frame header descriptor: no content size, not single-segment, no checksum, no dictionary
  out[5] = 7 << 3 // window descriptor: 2^(10 + 7) = 128 KiB
  let left = size
  for (let i = 0; i < blocks; i++) {
    const n = Math.min(BLOCK, left)
    left -= n
    const header = (n << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0)
    out.writeUIntLE(header, 6 + 4 * i, 3)
    out[6 + 4 * i + 3] = byte
  }
  return out
}

/**
 * `size` zero bytes compressed by zlib's 'gzip' or 'brotli' (quality 1: fast), fed a MiB at a
 * time: the bomb is made without holding what it decompresses to.
 */
async function compressZeros (codec, size) {
  const z = codec === 'gzip' ? zlib.createGzip() : zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } })
  const chunks = []
  z.on('data', c => chunks.push(c))
  const block = Buffer.alloc(1024 * 1024)
  for (let left = size; left > 0; left -= block.length) {
    if (!z.write(left >= block.length ? block : block.subarray(0, left))) await once(z, 'drain')
  }
  z.end()
  await once(z, 'end')
  return Buffer.concat(chunks)
}

module.exports = { parquetFile, oneColumn, plainInt64, plainInt32, plainBytes, dictionaryIndices, zstdRle, compressZeros, varint }
