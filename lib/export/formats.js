'use strict'

const { PipeloadError } = require('../errors')

// The export formats: name -> the module of its writer, loaded when asked for. A writer
// module exports createWriter(out, options): out is a Writable; the writer's write(record)
// returns undefined or a Promise to await (backpressure), its async end() writes what is
// left to `out` (the caller ends `out`). A record: { key: Buffer, type, ttl: ms | null,
// part: 1, 2, …, value } (lib/export/master.js).

const FORMATS = Object.freeze({
  ndjson: () => require('./ndjson')
})

const FORMAT_NAMES = Object.freeze(Object.keys(FORMATS))

/** The writer module of a format. */
function writerOf (format) {
  const entry = FORMATS[format]
  if (entry === undefined) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `format must be one of ${FORMAT_NAMES.join(', ')}, got ${JSON.stringify(format)}`, { option: 'format' })
  }
  return entry()
}

module.exports = { FORMATS, FORMAT_NAMES, writerOf }
