'use strict'

const { PipeloadError, where } = require('../errors')
const { shellQuote } = require('./utf8')

// Binary files under a text format's name (`data.csv` that is Parquet or a zip archive) or
// `--format`: told by their first bytes, before a record is read, instead of the invalid
// UTF-8 advice the bytes would otherwise get. gzip under any name is read already (its bytes
// are recognised and inflated, lib/read/source.js): gzip found after that is gzip twice.

const KINDS = [
  ['parquet', Buffer.from('PAR1')],
  ['zip', Buffer.from([0x50, 0x4b, 0x03, 0x04])],
  ['gzip', Buffer.from([0x1f, 0x8b])]
]

const SNIFF = 4 // bytes the longest magic needs

/** The binary kind `head` (an input's first bytes, SNIFF of them unless it is shorter) starts with, or null. */
function binaryKind (head) {
  for (const [kind, magic] of KINDS) {
    if (head.length >= magic.length && head.subarray(0, magic.length).equals(magic)) return kind
  }
  return null
}

const LABELS = { csv: 'CSV', tsv: 'TSV', json: 'JSON', ndjson: 'NDJSON' }

/** Is `name` a stream's (`<stdin>`, `<stream>`) rather than a path or URL? */
const isStream = name => name === '' || /^<.*>$/.test(name)
const isUrl = name => /^https?:\/\//i.test(name)

/**
 * The error for an input of a text `format` whose bytes are `kind`. `gzip`: the bytes were
 * inflated from gzip first.
 */
function notTextError (kind, { file, format, gzip }) {
  const name = String(file || '')
  const not = `not ${LABELS[format] || format} text`
  let why
  if (kind === 'parquet') why = gzip ? `this is gzip-compressed Parquet, ${not}: ${parquetInGzip(name)}` : `this is a Parquet file, ${not}: ${parquetFix(name)}`
  else if (kind === 'zip') why = `this is a zip archive, ${not}: pipeload does not read zip archives; ${unzipFix(name, format)}`
  else why = `this is gzip data inside gzip (compressed twice), ${not}: ${gunzipFix(name, format)}`
  return new PipeloadError('PIPELOAD_INPUT_INVALID', `${where(name, 1)}: ${why}`, { file: name, binary: kind })
}

function parquetFix (name) {
  if (isStream(name)) return 'Parquet is read from its end, which a stream cannot seek to: save it to a file and load that (--format parquet, or a .parquet name)'
  return `load it with --format parquet${isUrl(name) ? '' : ` (or name it ${renamed(name, '.parquet')})`}`
}

/** `name` with its extension (and a `.gz` after it) replaced by `ext`. */
function renamed (name, ext) {
  return name.replace(/(\.[a-z0-9]+)?(\.gz)?$/i, ext)
}

function parquetInGzip (name) {
  const into = isStream(name) || isUrl(name) ? '… | gunzip -c > data.parquet' : `gunzip -c ${shellQuote(name)} > data.parquet`
  return `Parquet is read from its end, which gzip cannot seek to: inflate it to a file first (${into}) and load that`
}

function unzipFix (name, format) {
  const into = `pipeload import - --format ${format} …`
  if (isStream(name)) return `save it to a file and unzip it first (unzip -l lists its files; unzip -p FILE NAME | ${into})`
  const source = isUrl(name) ? `curl -sLo data.zip ${shellQuote(name)} && unzip -p data.zip` : `unzip -p ${shellQuote(name)}`
  return `unzip it first, e.g. ${source} | ${into} (unzip -l lists its files; name one after the archive to take it alone)`
}

function gunzipFix (name, format) {
  const source = isStream(name) ? '… | gunzip -c' : isUrl(name) ? `curl -sL ${shellQuote(name)} | gunzip -c` : `gunzip -c ${shellQuote(name)}`
  return `inflate it once first, e.g. ${source} | pipeload import - --format ${format} …`
}

/**
 * A Parquet file that is gzip or a zip archive (a `.parquet` name, `--format parquet`): its
 * footer cannot be found, and the first bytes say why. null for any other bytes.
 */
function notParquetError (kind, name) {
  const file = isUrl(name) ? null : shellQuote(name)
  let why
  if (kind === 'gzip') why = `this is gzip data, not a Parquet file: Parquet is read from its end, which gzip cannot seek to; inflate it to a file first (${file === null ? `curl -sL ${shellQuote(name)} | gunzip -c` : `gunzip -c ${file}`} > data.parquet) and load that, or, for gzipped CSV or JSON, give --format`
  else if (kind === 'zip') why = `this is a zip archive, not a Parquet file: pipeload does not read zip archives; unzip it first${file === null ? '' : ` (unzip -l ${file} lists its files)`}`
  else return null
  return new PipeloadError('PIPELOAD_INPUT_INVALID', `${name}: ${why}`, { file: name, binary: kind })
}

module.exports = { SNIFF, binaryKind, notTextError, notParquetError, renamed }
