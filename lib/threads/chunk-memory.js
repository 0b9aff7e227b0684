'use strict'

/**
 * Chunk memory shared with the parse workers (./chunks.js): posted without a copy, kept here
 * for a fallback, and used again for a later chunk once its chunk is done (parsed, encoded and
 * yielded). Fresh SharedArrayBuffers, one per chunk, were freed only when this thread's garbage
 * collector got round to them: RSS grew with the input. A buffer is a little larger than a
 * chunk (which ends at the first record end after the chunk size) so most chunks fit one.
 */
class ChunkMemory {
  constructor (chunkSize, max) {
    this.chunkSize = chunkSize
    this.size = chunkSize + (chunkSize >> 2)
    this.max = max
    this.free = []
  }

  alloc (n) {
    const i = this.free.findIndex(ab => ab.byteLength >= n)
    const ab = i === -1 ? new SharedArrayBuffer(Math.max(n, this.size)) : this.free.splice(i, 1)[0]
    return Buffer.from(ab, 0, n)
  }

  /** A chunk no thread reads any more. */
  release (buf) {
    if (this.free.length < this.max) this.free.push(buf.buffer)
  }
}

module.exports = { ChunkMemory }
