'use strict'

const { isUtf8 } = require('node:buffer')
const { PipeloadError } = require('../errors')
const { Output } = require('./backpressure')
const { TableWriter, normalize, checkTable } = require('./table')
const { shown, keyName } = require('./names')
const { FORMAT_TYPES } = require('./formats')

// The CSV writer of `pipeload export` (docs/export.md, "The CSV format"): hashes only, one
// row per key, the columns `key` and then the fields. Quoting as RFC 4180: a cell holding a
// comma, a double quote, CR or LF is quoted, its quotes doubled; lines end with LF. A field
// a hash lacks is an empty cell. Bytes that are not valid UTF-8 are refused (CSV is text,
// and `pipeload import` refuses them in a CSV too), naming the key.

const FIXED = ['key']
const CHUNK = 64 * 1024 // lines are gathered into writes of about this many characters

/** One CSV cell. */
function cell (text) {
  return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text
}

/** One CSV line (with its LF) of texts. */
function line (texts) {
  let s = ''
  for (let i = 0; i < texts.length; i++) s += (i === 0 ? '' : ',') + cell(texts[i])
  return s + '\n'
}

/** A row's texts: the key, then each column's value or '' where the hash lacks it. */
function rowTexts (row, fields) {
  const texts = [text(row, row.key, 'the key')]
  for (const f of fields) {
    const v = row.fields.get(f)
    texts.push(v === undefined ? '' : text(row, v, `the value of the field ${JSON.stringify(f)}`))
  }
  return texts
}

function text (row, buf, what) {
  if (isUtf8(buf)) return buf.toString('utf8')
  throw new PipeloadError('PIPELOAD_EXPORT_NOT_TEXT', `${keyName(row.key)}: ${what} is not valid UTF-8 (${shown(buf)}), which CSV cannot hold: export this key to NDJSON (bytes that are not UTF-8 are kept there as base64) or to Parquet (bytes as they are)`, { key: row.key })
}

class CsvSink {
  constructor (out) {
    this.output = new Output(out)
    this.fields = null
    this.text = ''
  }

  begin (columns) {
    this.fields = columns.fields
    return this.add(line([...FIXED, ...this.fields]))
  }

  row (row) {
    return this.add(line(rowTexts(row, this.fields)))
  }

  add (s) {
    this.text += s
    if (this.text.length < CHUNK) return undefined
    return this.send()
  }

  send () {
    const s = this.text
    this.text = ''
    return this.output.write(s)
  }

  async end () {
    if (this.text !== '') await this.send()
    await this.output.flush()
  }
}

/**
 * A CSV writer to `out` (not ended by end()). options: fields (the field columns; default:
 * the fields of the first `sample` keys), sample (100), maxRecordSize (bytes one hash may
 * hold, 64 MiB).
 */
function createWriter (out, options) {
  return new TableWriter(new CsvSink(out), normalize(options), HOW)
}

const HOW = Object.freeze({ format: 'CSV', types: FORMAT_TYPES.csv.types, typeHint: FORMAT_TYPES.csv.hint, fixed: FIXED })

/** Throws PIPELOAD_OPTION_INVALID for options createWriter() would refuse. */
function checkOptions (options) {
  checkTable(options, HOW)
}

module.exports = { createWriter, checkOptions, cell, line }
