'use strict'

// Copying bytes into or out of memory that threads share (the parallel parse's chunks and
// batches). V8 copies a typed array into or out of a SharedArrayBuffer (Buffer#copy,
// TypedArray#set) with a relaxed-atomic loop, byte by byte where the offsets are not
// word-aligned: 253 µs per MiB here, against 35 µs for memcpy. Buffer#fill with a Buffer
// value as long as the range is one memcpy in Node, whatever the memory; its call costs
// more than Buffer#copy below ~256 bytes (measured: equal at 256, 4096 bytes 168 ns vs 845).
const FILL_FROM = 256

/**
 * Copy src[start, end) to where `into` writes ({ buf, pos }: a buffer and the position in it,
 * made once by the caller for all its copies), moving `into.pos` past the bytes; returns
 * their number.
 */
function copyBytes (src, start, end, into) {
  const n = end - start
  const at = into.pos
  if (n >= FILL_FROM) into.buf.fill(start === 0 && end === src.length ? src : src.subarray(start, end), at, at + n)
  else if (n > 0) src.copy(into.buf, at, start, end)
  else return 0
  into.pos = at + n
  return n
}

/**
 * `buf` in pieces of at most `size` bytes, for a reader: it parses what it is given before
 * it yields a batch, so a piece bounds the records it holds at once (a chunk may be
 * maxRecordSize long). `copy`: each piece in memory of its own, not shared.
 */
function * pieces (buf, size, copy = false) {
  for (let at = 0; at < buf.length; at += size) {
    const end = Math.min(buf.length, at + size)
    if (!copy) {
      yield buf.subarray(at, end)
      continue
    }
    const own = Buffer.allocUnsafe(end - at)
    copyBytes(buf, at, end, { buf: own, pos: 0 })
    yield own
  }
}

module.exports = { copyBytes, pieces }
