'use strict'

const fs = require('node:fs')
const { PipeloadError } = require('../../errors')

// A Parquet file on disk as the AsyncBuffer hyparquet reads: its length and byte ranges, read
// with one open descriptor (hyparquet's own asyncBufferFromFile opens a stream per range).
// `bytesRead` counts what was read, for the progress line.

// The longest range read at once: a column chunk (hyparquet takes it whole, as one ArrayBuffer).
// Node 20 cannot allocate more (buffer.constants.MAX_LENGTH); Node 24 could, and a footer that
// claims a chunk of 5 GiB would have it read into memory. Also http.js's.
const MAX_RANGE = 4 * 2 ** 30

/** Why a range of `start`-`end` (exclusive) is not read, over MAX_RANGE; null when it may be. */
function tooLong (start, end) {
  return end - start > MAX_RANGE ? `bytes ${start}-${end - 1}: a read of ${(end - start).toLocaleString('en-US')} bytes, over the 4 GiB a column chunk may take` : null
}

/**
 * @param {string} path
 * @param {string} name the input's name in messages
 * @returns {Promise<{ byteLength: number, bytesRead: number, slice(start: number, end?: number): Promise<ArrayBuffer>, close(): Promise<void> }>}
 */
async function fileBuffer (path, name = path) {
  let fh
  try {
    fh = await fs.promises.open(path, 'r')
  } catch (err) {
    const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.code === 'EISDIR' ? 'it is a directory' : err.message
    throw new PipeloadError(err.code === 'ENOENT' ? 'PIPELOAD_INPUT_NOT_FOUND' : 'PIPELOAD_INPUT_INVALID', `cannot read ${name}: ${why}`, { file: name, cause: err })
  }
  const { size } = await fh.stat()
  let closed = false
  return {
    byteLength: size,
    bytesRead: 0,
    async slice (start, end = size) {
      if (end > size) throw new Error(`the file ends at byte ${size}, before byte ${end} (truncated?)`)
      const long = tooLong(start, end)
      if (long) throw new Error(long)
      const length = Math.max(0, end - start)
      // Its own memory, not the pool's: hyparquet takes the whole ArrayBuffer.
      const buf = Buffer.allocUnsafeSlow(length)
      let got = 0
      while (got < length) {
        const { bytesRead } = await fh.read(buf, got, length - got, start + got)
        if (bytesRead === 0) throw new Error(`the file ends at byte ${start + got}, before byte ${end} (truncated?)`)
        got += bytesRead
      }
      this.bytesRead += length
      return buf.buffer
    },
    async close () {
      if (closed) return
      closed = true
      await fh.close()
    }
  }
}

module.exports = { fileBuffer, tooLong }
