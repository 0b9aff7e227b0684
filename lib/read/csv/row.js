'use strict'

/**
 * A CSV record as byte ranges of its input buffer, without a string per field: the
 * mapper copies the bytes straight into RESP (lib/writer.js spans). Field k spans
 * [b[i + 2k], b[i + 2k + 1]) of `buf`; a quoted field holding `""` stores its start as
 * -(start + 1), and its bytes are copied with each `""` turned into `"`.
 * `b` is a bounds table shared by many rows (see FastCsvCore).
 */
class CsvRow {
  constructor (buf, b, i, n) {
    this.buf = buf
    this.b = b
    this.i = i
    this.n = n // number of fields
  }

  /** Field k as a string. */
  field (k) {
    const s = this.b[this.i + 2 * k]
    const e = this.b[this.i + 2 * k + 1]
    if (s >= 0) return this.buf.toString('utf8', s, e)
    return this.buf.toString('utf8', -s - 1, e).replaceAll('""', '"')
  }

  /** The record as csv-parse gives it: an array of strings. */
  toArray () {
    const out = new Array(this.n)
    for (let k = 0; k < this.n; k++) out[k] = this.field(k)
    return out
  }

  toJSON () {
    return this.toArray()
  }
}

module.exports = { CsvRow }
