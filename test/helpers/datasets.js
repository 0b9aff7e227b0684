'use strict'

// Deterministic test datasets and serializers written independently of lib/: the
// expectation a test checks against must not come from the code under test (nor from
// csv-parse, which lib uses). Records are plain objects of string fields.

const fs = require('node:fs')
const path = require('node:path')
const zlib = require('node:zlib')
const { Readable } = require('node:stream')
const { prng } = require('./prng')

// Values that break naive CSV/TSV/JSON handling or type coercion. Every one must come
// back from Redis byte-for-byte.
const NASTY = Object.freeze([
  'He said "hi"',
  '"',
  '""',
  '"quoted at both ends"',
  'a,b,c',
  ',',
  ',leading comma',
  'tab\there',
  '\t',
  'line1\nline2',
  '\n',
  'crlf\r\nline',
  'trailing newline\n',
  '\r\n\r\n',
  'mixed "quote", comma\tand\nnewline',
  '漢字テスト',
  '中文，全角逗号',
  '😀🚀👩‍👩‍👧',
  'e\u0301 combining acute',
  'a\u0308\u0304 stacked marks',
  'Zalgo z\u0351\u0352\u0353',
  '\u00a0nbsp\u00a0',
  '\u2028line sep\u2029para sep',
  '',
  ' ',
  ' leading space',
  'trailing space ',
  '007',
  '0',
  '-0',
  '00',
  '1e5',
  '3.14',
  '-2.50',
  '0x1F',
  'NaN',
  'Infinity',
  '9007199254740993',
  'null',
  'true',
  'false',
  'undefined',
  '[1,2]',
  '{"a":1}',
  '{id}',
  '*',
  '\\',
  'back\\slash\\n not a newline',
  "it's",
  '#not a comment',
  '=SUM(A1)',
  '\u0000nul byte',
  'ÿþ looks like a BOM',
  '\ufeffreal BOM char inside'
])

// The subset that a plain, unquoted TSV (and a naive split on tabs/lines) can carry.
const TSV_SAFE = Object.freeze(NASTY.filter((v) => !/[\t\r\n"]/.test(v)))

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta']

/**
 * Generate records.
 * @param {object} [opts]
 * @param {number} [opts.count=200] records to generate
 * @param {number} [opts.seed=1]
 * @param {boolean} [opts.tsvSafe=false] only values without tab, CR, LF or '"'
 * @param {number} [opts.duplicates] how many records reuse an earlier id (default ~5%)
 * @param {number} [opts.bigValueBytes] put one value of this many bytes in a record
 * @param {string[]} [opts.extraIds] ids to use for the first records (e.g. unicode ids)
 * @returns {Array<Record<string,string>>} every record has the same fields, id first
 */
function generateRecords (opts = {}) {
  const {
    count = 200,
    seed = 1,
    tsvSafe = false,
    duplicates = Math.max(1, Math.floor(count / 20)),
    bigValueBytes = 0,
    extraIds = []
  } = opts
  const rnd = prng(seed)
  const pool = tsvSafe ? TSV_SAFE : NASTY
  const value = (i) => {
    // Cycle through every nasty value in the first records so small datasets still
    // cover all of them, then pick at random.
    const r = rnd.int(4)
    if (r === 0) return pool[(i + rnd.int(pool.length)) % pool.length]
    if (r === 1) return `${rnd.pick(WORDS)} ${rnd.int(100000)}`
    if (r === 2) return String(rnd.int(1000)).padStart(rnd.int(5) + 1, '0')
    return rnd.pick(pool)
  }

  const records = []
  for (let i = 0; i < count; i++) {
    let id
    if (i < extraIds.length) id = extraIds[i]
    else id = String(i + 1)
    records.push({
      id,
      name: i < pool.length ? pool[i] : value(i),
      note: i < pool.length ? pool[pool.length - 1 - i] : value(i + 7),
      code: value(i + 13),
      empty: i % 3 === 0 ? '' : value(i + 17),
      seq: String(i)
    })
  }

  // Later records re-using earlier ids: with HSET the later values must win.
  if (count > 2) {
    for (let d = 0; d < duplicates; d++) {
      const target = 1 + rnd.int(Math.floor(count / 2)) // an earlier record
      const at = Math.floor(count / 2) + rnd.int(count - Math.floor(count / 2))
      records[at] = { ...records[at], id: records[target].id }
    }
  }

  if (bigValueBytes > 0) {
    // One huge value, multi-byte characters included, with delimiters and newlines so
    // a reader's buffering and quoting paths meet it, placed mid-file.
    const unit = tsvSafe ? 'abc,漢字😀 "x" ' : 'abc,"漢字"\n😀\ttab\r\n'
    const big = unit.repeat(Math.ceil(bigValueBytes / Buffer.byteLength(unit)))
    const at = Math.floor(count / 3)
    records[at] = { ...records[at], note: big }
  }
  return records
}

/**
 * The Redis state `HSET <prefix><key> *` per record produces: HSET merges fields, so a
 * later record with the same key overwrites the fields it has and keeps the others.
 * @returns {Map<string, Record<string,string>>} key (without prefix) → hash
 */
function expectedHashes (records, keyField = 'id') {
  const out = new Map()
  for (const rec of records) {
    const k = String(rec[keyField])
    const prev = out.get(k)
    out.set(k, prev ? { ...prev, ...rec } : { ...rec })
  }
  return out
}

// ---- serializers -------------------------------------------------------------------

function columnsOf (records) {
  const cols = []
  const seen = new Set()
  for (const r of records) {
    for (const k of Object.keys(r)) if (!seen.has(k)) { seen.add(k); cols.push(k) }
  }
  return cols
}

/** RFC 4180 field: quoted when it holds the delimiter, a quote, CR or LF; quotes doubled. */
function csvField (value, delimiter, quoteAll) {
  const s = value == null ? '' : String(value)
  if (quoteAll || s.includes(delimiter) || /["\r\n]/.test(s)) return '"' + s.replace(/"/g, '""') + '"'
  return s
}

/**
 * Records (objects, or arrays for headerless rows) to CSV.
 * @param {object} [o]
 * @param {string} [o.delimiter=',']
 * @param {boolean} [o.header=true] write a header row (objects only)
 * @param {boolean} [o.crlf=false] CRLF record separators (embedded newlines untouched)
 * @param {boolean} [o.bom=false] prefix a UTF-8 BOM
 * @param {boolean} [o.quoteAll=false] quote every field
 * @param {boolean} [o.trailingNewline=true]
 * @param {string[]} [o.columns] column order (default: union of keys, first seen first)
 */
function toCSV (records, o = {}) {
  const { delimiter = ',', header = true, crlf = false, bom = false, quoteAll = false, trailingNewline = true } = o
  const eol = crlf ? '\r\n' : '\n'
  const lines = []
  const arrays = records.length > 0 && Array.isArray(records[0])
  const cols = arrays ? null : (o.columns || columnsOf(records))
  if (header && !arrays) lines.push(cols.map((c) => csvField(c, delimiter, quoteAll)).join(delimiter))
  for (const r of records) {
    const row = arrays ? r : cols.map((c) => r[c])
    lines.push(row.map((v) => csvField(v, delimiter, quoteAll)).join(delimiter))
  }
  let text = lines.join(eol) + (trailingNewline ? eol : '')
  if (bom) text = '\ufeff' + text
  return text
}

/**
 * Records to TSV. Fields holding tab, CR, LF or '"' are quoted CSV-style (csv-parse with
 * delimiter '\t' reads them); generate with `tsvSafe: true` for a plain, quote-free TSV.
 */
function toTSV (records, o = {}) {
  return toCSV(records, { ...o, delimiter: '\t' })
}

/** Escape every non-ASCII UTF-16 unit as \uXXXX (emoji become surrogate-pair escapes). */
function escapeNonAscii (json) {
  return json.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
}

/**
 * Records to a JSON document: a top-level array, or nested under `path` ('a.b' →
 * {"a":{"b":[...]}}), with sibling keys around it so a reader must skip them.
 * @param {object} [o]
 * @param {string} [o.path]
 * @param {number} [o.indent] pretty-print
 * @param {boolean} [o.escapeUnicode] write non-ASCII as \u escapes
 */
function toJSON (records, o = {}) {
  const { path: jsonPath, indent, escapeUnicode = false } = o
  let doc = records
  if (jsonPath) {
    const keys = jsonPath.split('.')
    for (let i = keys.length - 1; i >= 0; i--) {
      // Decoys before and after the target: same-looking arrays and objects.
      doc = {
        [`before_${i}`]: { items: [{ id: 'decoy' }], n: 1, s: 'x]}' },
        [keys[i]]: doc,
        [`after_${i}`]: [[{ id: 'decoy2' }]]
      }
    }
  }
  let text = JSON.stringify(doc, null, indent)
  if (escapeUnicode) text = escapeNonAscii(text)
  return text + '\n'
}

/** One JSON object per line; `crlf` line ends; `blankLines` sprinkles empty lines. */
function toNDJSON (records, o = {}) {
  const { crlf = false, blankLines = false, trailingNewline = true } = o
  const eol = crlf ? '\r\n' : '\n'
  const lines = records.map((r) => JSON.stringify(r))
  let text = blankLines ? lines.map((l, i) => (i % 10 === 5 ? eol + l : l)).join(eol) : lines.join(eol)
  if (trailingNewline) text += eol
  return text
}

const SERIALIZERS = { csv: toCSV, tsv: toTSV, json: toJSON, ndjson: toNDJSON }
const EXT = { csv: 'csv', tsv: 'tsv', json: 'json', ndjson: 'ndjson' }

function gzip (text) {
  return zlib.gzipSync(Buffer.from(text, 'utf8'))
}

/**
 * Serialize records and write them to `dir`. Returns { file, bytes, text }.
 * @param {string} dir
 * @param {'csv'|'tsv'|'json'|'ndjson'} format
 * @param {object[]} records
 * @param {object} [o] serializer options plus `gzip`, `name`
 */
function writeDataset (dir, format, records, o = {}) {
  const serialize = SERIALIZERS[format]
  if (!serialize) throw new Error(`unknown test format ${format}`)
  const text = serialize(records, o)
  const name = o.name || `data.${EXT[format]}${o.gzip ? '.gz' : ''}`
  const file = path.join(dir, name)
  const bytes = o.gzip ? gzip(text) : Buffer.from(text, 'utf8')
  fs.writeFileSync(file, bytes)
  return { file, bytes: bytes.length, text }
}

/**
 * A Readable that emits `data` in chunks of `size` bytes, splitting multi-byte
 * characters, CRLF pairs and quoted fields across chunk boundaries.
 */
function chunkedReadable (data, size = 7) {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8')
  let pos = 0
  return new Readable({
    read () {
      if (pos >= buf.length) { this.push(null); return }
      this.push(buf.subarray(pos, pos + size))
      pos += size
    }
  })
}

/** Number of lines in a text (1 + number of LF). */
function countLines (text) {
  let n = 1
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++
  return n
}

module.exports = {
  prng,
  NASTY,
  TSV_SAFE,
  generateRecords,
  expectedHashes,
  columnsOf,
  toCSV,
  toTSV,
  toJSON,
  toNDJSON,
  gzip,
  writeDataset,
  chunkedReadable,
  countLines
}
