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
// Each is given the page's size from its header (`outputLength`); hyparquet checks the result
// against it.

let codecs = null
let wasm = null // the zstd WebAssembly module, once loaded (a promise until then)

// Codecs Node or WebAssembly decode: hyparquet-compressors (its module sets up every codec's
// tables when loaded, ~13 ms) is loaded only for a file that has pages of another codec.
const OWN = new Set(['UNCOMPRESSED', 'GZIP', 'BROTLI', 'ZSTD'])

/** The decompressors by codec name (hyparquet's `compressors` option); one object per thread. */
function pageCodecs () {
  if (codecs === null) {
    codecs = {
      GZIP: input => zlib.gunzipSync(input),
      BROTLI: input => zlib.brotliDecompressSync(input)
    }
    if (typeof zlib.zstdDecompressSync === 'function') codecs.ZSTD = input => zlib.zstdDecompressSync(input)
  }
  return codecs
}

/** Loads what the file's codecs need before its pages are read: hyparquet-compressors' codecs, the zstd decoder where Node has none. */
async function prepareCodecs (metadata) {
  const table = pageCodecs()
  const used = codecsOf(metadata)
  if ([...used].some(c => !OWN.has(c))) {
    for (const [name, codec] of Object.entries(require('hyparquet-compressors').compressors)) table[name] ??= codec
  }
  if (typeof zlib.zstdDecompressSync === 'function' || !used.has('ZSTD')) return
  if (wasm === null) wasm = loadZstdWasm()
  const module = await wasm
  table.ZSTD = (input, outputLength) => wasmDecompress(module, input, outputLength)
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

/**
 * One zstd page into exactly `outputLength` bytes (the page header's size): ZSTD_decompress
 * with our own size, not the package's decompress(), which trusts the frame's content size
 * and would allocate from an unknown or damaged one.
 */
function wasmDecompress (M, input, outputLength) {
  const src = M._malloc(Math.max(1, input.length))
  const dst = M._malloc(Math.max(1, outputLength))
  try {
    M.HEAPU8.set(input, src) // HEAPU8 read after both mallocs: growing the heap replaces it
    const n = M._ZSTD_decompress(dst, outputLength, src, input.length)
    if (M._ZSTD_isError(n)) throw new Error(`zstd: the page does not decompress (error ${-n >>> 0})`)
    return M.HEAPU8.slice(dst, dst + n)
  } finally {
    M._free(dst)
    M._free(src)
  }
}

module.exports = { pageCodecs, prepareCodecs }
