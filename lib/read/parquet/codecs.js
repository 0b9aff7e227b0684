'use strict'

const path = require('node:path')
const zlib = require('node:zlib')

// The page decompressors given to hyparquet: hyparquet-compressors' (snappy, lz4 and the
// rest, in JavaScript), with the ones Node or WebAssembly decode faster in their place:
// - gzip and brotli: Node's zlib, on every Node;
// - zstd: Node's zlib where it has it (22.15 and later), else zstd's own C decoder built to
//   WebAssembly (@bokuweb/zstd-wasm), loaded once per thread by prepareCodecs() for a file
//   that has zstd pages. The 99 zstd pages (34 MB) of the 3M-row flights file: fzstd, the
//   JavaScript decoder, 0.45-0.6 s; the WebAssembly one ~0.1 s; Node 24's ~0.06 s.
//
// Each is given the page's size from its header (`outputLength`) and makes no more than that:
// a page is a decompression bomb otherwise (8 KB to 3 MB files took 4-6 GB: zlib's decoders
// went on to the end of the stream whatever the header said, and a snappy header claiming
// 2 GiB was allocated and copied). So every codec is bounded() here: a declared size over
// MAX_PAGE_BYTES is refused before anything is allocated, zlib stops at the declared size
// (maxOutputLength), snappy's own length (its preamble) must be the header's, and what comes
// out must be exactly the declared size. The error is the page's: reader.js names the file,
// row group and column.

// The most one page may hold uncompressed. Parquet writes a page's sizes as int32 (2 GiB);
// writers cut data pages at ~1 MiB (parquet-mr, Arrow) to 100 MB (DuckDB), and DuckDB's
// dictionary pages go up to 1e9 bytes: 1 GiB takes every page those write.
const MAX_PAGE_BYTES = 1024 * 1024 * 1024

let codecs = null
let loaded = false // hyparquet-compressors' codecs are in the table
let wasm = null // the zstd WebAssembly module, once loaded (a promise until then)

// Codecs Node or WebAssembly decode: hyparquet-compressors (its module sets up every codec's
// tables when loaded, ~13 ms) is loaded only for a file that has pages of another codec.
const OWN = new Set(['UNCOMPRESSED', 'GZIP', 'BROTLI', 'ZSTD'])

/** The decompressors by codec name (hyparquet's `compressors` option); one object per thread. */
function pageCodecs () {
  if (codecs === null) {
    codecs = {
      GZIP: bounded('gzip', zlibDecoder('gzip', zlib.gunzipSync)),
      BROTLI: bounded('brotli', zlibDecoder('brotli', zlib.brotliDecompressSync)),
      // hyparquet's own snappy (it would decode into an array of the header's size unchecked),
      // until hyparquet-compressors' faster one is loaded.
      SNAPPY: bounded('snappy', snappyDecoder((input, size) => {
        const out = new Uint8Array(size)
        require('hyparquet/src/snappy.js').snappyUncompress(input, out)
        return out
      }))
    }
    if (typeof zlib.zstdDecompressSync === 'function') codecs.ZSTD = bounded('zstd', zlibDecoder('zstd', zlib.zstdDecompressSync))
  }
  return codecs
}

/**
 * A codec that decodes no more than the page's declared size (`size`, hyparquet's
 * outputLength), which must be a size at most MAX_PAGE_BYTES, into exactly that many bytes.
 */
function bounded (name, decode) {
  return (input, size) => {
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`the page header gives its uncompressed size as ${size}`)
    if (size > MAX_PAGE_BYTES) {
      throw new Error(`the page header says it holds ${size} bytes uncompressed, more than a page may (${MAX_PAGE_BYTES} bytes, 1 GiB)`)
    }
    const out = decode(input, size)
    if (out.length !== size) throw new Error(`${name}: the page decompresses to ${out.length} bytes, not the ${size} its header says`)
    return out
  }
}

/** One of zlib's sync decoders, stopped once it has made more than `size` bytes. */
function zlibDecoder (name, decompress) {
  return (input, size) => {
    try {
      return decompress(input, { maxOutputLength: Math.max(1, size) })
    } catch (err) {
      if (err.code === 'ERR_BUFFER_TOO_LARGE') throw new Error(`${name}: the page decompresses to more than the ${size} bytes its header says`)
      throw err
    }
  }
}

/**
 * Snappy: its data starts with its length (a varint), which must be the header's, and cannot
 * be more than the data can make (a copy of at most 64 bytes takes 3 bytes or more: 64/3 per
 * byte), checked before `decode` allocates it.
 */
function snappyDecoder (decode) {
  return (input, size) => {
    let length = 0
    let p = 0
    for (let shift = 0; ; shift += 7) {
      if (p >= input.length || shift > 28) throw new Error('snappy: the page does not start with its length')
      const byte = input[p++]
      length += (byte & 0x7f) * 2 ** shift
      if (byte < 0x80) break
    }
    if (length !== size) throw new Error(`snappy: the page's data says it holds ${length} bytes, its header ${size}`)
    if (size > Math.ceil((input.length - p) * 64 / 3)) throw new Error(`snappy: ${input.length - p} bytes of snappy data cannot hold the ${size} bytes its header says`)
    return decode(input, size)
  }
}

/** Loads what the file's codecs need before its pages are read: hyparquet-compressors' codecs, the zstd decoder where Node has none. */
async function prepareCodecs (metadata) {
  const table = pageCodecs()
  const used = codecsOf(metadata)
  if (!loaded && [...used].some(c => !OWN.has(c))) {
    // Not its gzip, brotli and zstd: Node's and WebAssembly's are faster, and fzstd would size
    // its output from the frame, not from the page header.
    for (const [name, codec] of Object.entries(require('hyparquet-compressors').compressors)) {
      if (!OWN.has(name)) table[name] = bounded(name.toLowerCase(), name === 'SNAPPY' ? snappyDecoder(codec) : codec)
    }
    loaded = true
  }
  if (typeof zlib.zstdDecompressSync === 'function' || !used.has('ZSTD')) return
  if (wasm === null) wasm = loadZstdWasm()
  const module = await wasm
  table.ZSTD = bounded('zstd', (input, outputLength) => wasmDecompress(module, input, outputLength))
}

/** The codecs of a file's column chunks. */
function codecsOf (metadata) {
  const used = new Set()
  for (const g of metadata.row_groups) for (const c of g.columns) if (c.meta_data) used.add(c.meta_data.codec)
  return used
}

/**
 * The package's Emscripten module, initialised. Its exports name only the simple functions; the
 * module is its index's sibling file (the same instance: the same path in require's cache).
 */
async function loadZstdWasm () {
  const main = require.resolve('@bokuweb/zstd-wasm')
  await require(main).init()
  return require(path.join(path.dirname(main), 'module.js')).Module
}

// zstd_errors.h: ZSTD_error_dstSize_tooSmall, the page makes more than the header's size.
const ZSTD_DST_TOO_SMALL = 70

/**
 * One zstd page into exactly `outputLength` bytes (the page header's size): ZSTD_decompress
 * with our own size, not the package's decompress(), which trusts the frame's content size
 * and would allocate from an unknown or damaged one.
 */
function wasmDecompress (M, input, outputLength) {
  const src = M._malloc(Math.max(1, input.length))
  const dst = M._malloc(Math.max(1, outputLength))
  try {
    if (src === 0 || dst === 0) throw new Error(`zstd: no memory for a page of ${outputLength} bytes`)
    M.HEAPU8.set(input, src) // HEAPU8 read after both mallocs: growing the heap replaces it
    const n = M._ZSTD_decompress(dst, outputLength, src, input.length)
    if (M._ZSTD_isError(n)) {
      const code = -n >>> 0
      if (code === ZSTD_DST_TOO_SMALL) throw new Error(`zstd: the page decompresses to more than the ${outputLength} bytes its header says`)
      throw new Error(`zstd: the page does not decompress (error ${code})`)
    }
    return M.HEAPU8.slice(dst, dst + n)
  } finally {
    M._free(dst)
    M._free(src)
  }
}

module.exports = { pageCodecs, prepareCodecs, MAX_PAGE_BYTES }
