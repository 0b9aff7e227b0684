'use strict'

const { PipeloadError, where } = require('../../errors')

// A CSV/TSV header read with the wrong delimiter: the delimiter the file uses shows inside
// its column names. Two places say so, with the same hint: a template naming a column the
// header lacks (./row.js), and a header that reads as one column (checkOneColumn, below).

const HINTS = [
  [';', "the header contains ';': try --delimiter ';'"],
  ['\t', "the header contains a tab: try --delimiter '\\t' or --format tsv"],
  ['|', "the header contains '|': try --delimiter '|'"],
  [',', "the header contains ',': try --delimiter ','"]
]

/**
 * `; the header contains ';': try --delimiter ';'` when a column name holds another
 * delimiter than `delimiter` (the one the header was split on), else ''. `format`: the
 * input's, when known; a one-column TSV header holding ',' is a CSV file, and says so.
 */
function delimiterHint (columns, delimiter = null, format = null) {
  if (!columns) return ''
  for (const [d, hint] of HINTS) {
    if (delimiter !== null && delimiter.includes(d)) continue
    if (!columns.some(c => typeof c === 'string' && c.includes(d))) continue
    return `; ${hint}${d === ',' && format === 'tsv' ? ' or --format csv' : ''}`
  }
  return ''
}

const SHOWN = 80 // characters of the header quoted in the message

/**
 * A header that reads as one column but holds another delimiter (`id;name;country` split on
 * ',') is almost always a file read with the wrong one: refused, whatever the templates name,
 * unless --delimiter or --columns was given (the user chose how to split it). --format does not
 * count: it only picks the delimiter that has just failed, and stdin always needs it.
 * `o`: load()'s options; `format`: the input's (csv or tsv); `name`: the input's.
 */
function checkOneColumn (header, o, format, name) {
  if (!header || header.length !== 1 || o.delimiter != null || o.columns) return
  const used = format === 'tsv' ? '\t' : ','
  const hint = delimiterHint(header, used, format)
  if (hint === '') return
  const text = header[0].length > SHOWN ? `${header[0].slice(0, SHOWN)}…` : header[0]
  throw new PipeloadError('PIPELOAD_OPTION_INVALID',
    `${where(name, 1)}: the header split on ${used === '\t' ? 'tabs' : "','"} is one column, ${JSON.stringify(text)}${hint} (if one column is meant, give --delimiter or --columns)`,
    { option: 'delimiter', file: name })
}

module.exports = { delimiterHint, checkOneColumn }
