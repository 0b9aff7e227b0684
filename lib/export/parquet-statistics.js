'use strict'

// The Parquet writer keeps each row group's column statistics (min and max) until the footer
// is written, at the end of the file. hyparquet-writer keeps them as the values themselves:
// here Buffers that the reply parser sliced out of a socket chunk (64 KiB), so that every
// row group held a few dozen chunks alive until the export ended: memory that grew with the
// keyspace (1M hashes: ~100 MB of the 200 MB peak RSS). detach() swaps each for a copy of its
// first TRUNCATE + 1 bytes, which is all the footer uses: the writer truncates a binary
// min/max to TRUNCATE bytes (a max rounded up) and marks it inexact when it was longer, which
// TRUNCATE + 1 bytes still show. A max whose first TRUNCATE bytes are all 0xff has no shorter
// upper bound: the writer keeps it whole, so it is copied whole.

const TRUNCATE = 16 // statisticsTruncateLength given to the ParquetWriter (its default too)

/** Copies the byte statistics of the row group's column chunks, so they hold no shared buffer. */
function detach (rowGroup) {
  for (const chunk of rowGroup.columns) {
    const s = chunk.meta_data?.statistics
    if (s === undefined) continue
    if (s.min_value instanceof Uint8Array) s.min_value = copy(s.min_value, false)
    if (s.max_value instanceof Uint8Array) s.max_value = copy(s.max_value, true)
  }
}

function copy (bytes, isMax) {
  if (bytes.length <= TRUNCATE + 1 || (isMax && allFF(bytes))) return new Uint8Array(bytes)
  return new Uint8Array(bytes.subarray(0, TRUNCATE + 1))
}

function allFF (bytes) {
  for (let i = 0; i < TRUNCATE; i++) if (bytes[i] !== 0xff) return false
  return true
}

module.exports = { detach, TRUNCATE }
