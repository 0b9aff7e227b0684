'use strict'

// Copying bytes into or out of memory that threads share (the parallel parse's chunks and
// batches). V8 copies a typed array into or out of a SharedArrayBuffer (Buffer#copy,
// TypedArray#set) with a relaxed-atomic loop, byte by byte where the offsets are not
// word-aligned: 253 µs per MiB here, against 35 µs for memcpy. Buffer#fill with a Buffer
// value as long as the range is one memcpy in Node, whatever the memory; its call costs
// more than Buffer#copy below ~256 bytes (measured: equal at 256, 4096 bytes 168 ns vs 845).
const FILL_FROM = 256

/** Copy src[start, end) into target at `at`; returns the number of bytes copied. */
function copyBytes (src, target, at, start = 0, end = src.length) {
  const n = end - start
  if (n < FILL_FROM) return n > 0 ? src.copy(target, at, start, end) : 0
  target.fill(start === 0 && end === src.length ? src : src.subarray(start, end), at, at + n)
  return n
}

module.exports = { copyBytes }
