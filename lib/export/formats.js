'use strict'

const { PipeloadError } = require('../errors')

// The export formats: name -> the module of its writer, loaded when asked for. A writer
// module exports createWriter(out, options): out is a Writable; the writer's write(record)
// returns undefined or a Promise to await (backpressure), its async end() writes what is
// left to `out` (the caller ends `out`). A record: { key: Buffer, type, ttl: ms | null,
// part: 1, 2, …, value } (lib/export/master.js).

// Loaded on first use, so a run pulls in only its own format's code (Parquet's writer
// library is an ES module, imported when a Parquet export begins).
const FORMATS = Object.freeze({
  ndjson: () => require('./ndjson'),
  csv: () => require('./csv'),
  parquet: () => require('./parquet')
})

const FORMAT_NAMES = Object.freeze(Object.keys(FORMATS))

// The key types each format can hold (NDJSON: every type), and how messages say it. An
// export to CSV or Parquet reads only these unless `types` asks otherwise, and refuses a
// `types` naming another (lib/export/options.js): a user who asks for a CSV asks for its hashes.
const FORMAT_TYPES = Object.freeze({
  csv: Object.freeze({ types: Object.freeze(['hash']), hint: 'hashes only', label: 'CSV' }),
  parquet: Object.freeze({ types: Object.freeze(['hash', 'string']), hint: 'hashes and strings', label: 'Parquet' })
})

/** The writer module of a format. */
function writerOf (format) {
  const entry = FORMATS[format]
  if (entry === undefined) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `format must be one of ${FORMAT_NAMES.join(', ')}, got ${JSON.stringify(format)}`, { option: 'format' })
  }
  return entry()
}

module.exports = { FORMATS, FORMAT_NAMES, FORMAT_TYPES, writerOf }
