'use strict'

// What the stages above read/ know of a Parquet row without loading the Parquet reader (a
// CSV or JSON run loads none of it): the symbol under which a record names its row group, and
// where the RESP bulk string of a value kept as one starts (parquet/arena.js keeps them so).

/** A Parquet record's row group (a symbol property: not a field, not in `*` or {$}), named in failures. */
const ROW_GROUP = Symbol('pipeload row group')

/**
 * Where the bulk string of the text at [start, end) starts: `$`, the length's digits and CRLF
 * before it (parquet/text.js writes each value so).
 */
function headOf (start, end) {
  const len = end - start
  return start - 3 - (len < 10 ? 1 : len < 100 ? 2 : len < 1000 ? 3 : len < 10000 ? 4 : String(len).length)
}

module.exports = { ROW_GROUP, headOf }
