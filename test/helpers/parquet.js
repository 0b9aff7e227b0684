'use strict'

// Parquet fixtures for the tests, written by DuckDB (@duckdb/node-api, a devDependency): an
// implementation independent of the reader under test (hyparquet), so that expected values
// come from what the test generated, never from the code that reads them back.
//
// writeRows(): the test's rows (column -> text, null for null) go to DuckDB as a CSV of
// texts, each cast there to its column's SQL type, then COPY ... TO a Parquet file with the
// options given (codec, row group size, page version).

const fs = require('node:fs')
const path = require('node:path')

let instance = null

async function duck () {
  if (instance === null) {
    const { DuckDBInstance } = require('@duckdb/node-api')
    instance = (await DuckDBInstance.create(':memory:')).connect()
  }
  return instance
}

/** Runs SQL; returns its rows as arrays. */
async function sql (text) {
  const c = await duck()
  return (await c.runAndReadAll(text)).getRows()
}

function csvField (v) {
  if (v === null || v === undefined) return '\\N'
  return '"' + String(v).replace(/"/g, '""') + '"'
}

function quoteId (name) {
  return '"' + name.replace(/"/g, '""') + '"'
}

/**
 * Writes `rows` (objects of text) as a Parquet file. `columns`: [[name, sqlType, expr?]]:
 * expr (SQL over the text column `v`) turns the text into the value, CAST(v AS sqlType) by
 * default. `options`: the COPY options, e.g. "COMPRESSION zstd, ROW_GROUP_SIZE 2048".
 */
async function writeRows (file, columns, rows, options = 'COMPRESSION zstd', prelude = []) {
  const csv = file + '.src.csv'
  const lines = [columns.map(([name]) => csvField(name)).join(',')]
  for (const r of rows) lines.push(columns.map(([name]) => csvField(r[name])).join(','))
  fs.writeFileSync(csv, lines.join('\n') + '\n')
  for (const p of prelude) await sql(p)
  const types = columns.map(([name]) => `${quoteId(name)}: 'VARCHAR'`).join(', ')
  const select = columns.map(([name, type, expr]) => `${(expr || 'CAST(v AS TYPE)').replace(/\bv\b/g, quoteId(name)).replace('TYPE', type)} AS ${quoteId(name)}`).join(', ')
  await sql(`COPY (SELECT ${select} FROM read_csv('${csv}', header = true, quote = '"', escape = '"', nullstr = '\\N', allow_quoted_nulls = false, columns = {${types}})) TO '${file}' (FORMAT parquet, ${options})`)
  fs.unlinkSync(csv)
  return file
}

/** Writes the rows of a SELECT as a Parquet file. */
async function writeQuery (file, select, options = 'COMPRESSION zstd') {
  await sql(`COPY (${select}) TO '${file}' (FORMAT parquet, ${options})`)
  return file
}

/** DuckDB's view of a file's column chunks: [{ rowGroup, column, codec, encodings, start, end }]. */
async function chunksOf (file) {
  const rows = await sql(`SELECT row_group_id, path_in_schema, compression, encodings, coalesce(dictionary_page_offset, data_page_offset), total_compressed_size FROM parquet_metadata('${file}')`)
  return rows.map(([g, p, codec, enc, start, size]) => ({ rowGroup: Number(g), column: p, codec, encodings: enc, start: Number(start), end: Number(start) + Number(size) }))
}

/**
 * DuckDB's view of a file's row groups, in file order: [{ rows, start, end }], the byte span
 * [start, end) their column chunks take (for tests of which row groups are read).
 */
async function rowGroupsOf (file) {
  const rows = await sql(`SELECT row_group_id, any_value(row_group_num_rows), min(coalesce(dictionary_page_offset, data_page_offset)), max(coalesce(dictionary_page_offset, data_page_offset) + total_compressed_size)
    FROM parquet_metadata('${file}') GROUP BY row_group_id ORDER BY row_group_id`)
  return rows.map(([, n, start, end]) => ({ rows: Number(n), start: Number(start), end: Number(end) }))
}

/** A temporary folder for a test file's fixtures. */
function fixtureDir (tmp, name) {
  const dir = path.join(tmp, name)
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

/**
 * The shortest decimal that reads back as float32 `f`, as JS prints that number: for 1, 2, …
 * significant digits, the d-digit decimals just below, at and above |f| (toExponential's
 * mantissa - 1, + 0, + 1); of those that read back, the closest to f by exact (BigInt)
 * arithmetic, a tie going to the even last digit (as JS and Ryu choose).
 */
function shortestFloat32 (f) {
  const a = Math.abs(f)
  const sign = f < 0 ? '-' : ''
  const bits = new Uint32Array(new Float32Array([a]).buffer)[0]
  const ef = bits >>> 23
  const M = BigInt(ef === 0 ? bits & 0x7fffff : (bits & 0x7fffff) | 0x800000)
  const E = ef === 0 ? -149 : ef - 150
  const distance = (c, s) => { // |c·10^s − M·2^E|, scaled to an integer
    const ta = BigInt(Math.max(0, -s))
    const tb = BigInt(Math.max(0, -E))
    const v = c * 10n ** (BigInt(s) + ta) * 2n ** tb
    const w = M * 2n ** (BigInt(E) + tb) * 10n ** ta
    return v > w ? v - w : w - v
  }
  for (let d = 1; d <= 9; d++) {
    const [mantissa, exp] = a.toExponential(d - 1).split('e')
    const m = BigInt(mantissa.replace('.', ''))
    const scale = Number(exp) - (d - 1)
    const fits = [m - 1n, m, m + 1n].filter(c => c > 0n && Math.fround(Number(`${c}e${scale}`)) === a)
    if (fits.length === 0) continue
    fits.sort((x, y) => { const dx = distance(x, scale); const dy = distance(y, scale); return dx < dy ? -1 : dx > dy ? 1 : Number(x % 2n) - Number(y % 2n) })
    return sign + String(Number(`${fits[0]}e${scale}`))
  }
  throw new Error(`no text for ${f}`)
}

/**
 * A Parquet file's bytes with its footer edited: `edit(path, value)` is called for each i64
 * field of the footer's Thrift (compact protocol), `path` its field ids and list indexes from
 * FileMetaData (row_groups is 4, a RowGroup's columns 1, a ColumnChunk's meta_data 3, its
 * total_compressed_size 7: [4, g, 1, c, 3, 7]), and returns a new value (a BigInt) or
 * undefined. What no writer here would write (a column chunk of 5 GiB), for the reader to meet.
 */
function editFooter (bytes, edit) {
  const length = bytes.readUInt32LE(bytes.length - 8)
  const start = bytes.length - 8 - length
  const r = { buf: bytes, at: start }
  const out = []
  const copy = from => { for (let i = from; i < r.at; i++) out.push(bytes[i]) }
  const varint = () => {
    let v = 0n
    for (let shift = 0n; ; shift += 7n) {
      const b = bytes[r.at++]
      v |= BigInt(b & 0x7f) << shift
      if (!(b & 0x80)) return v
    }
  }
  const i64 = v => { // zigzag, then varint
    let u = v >= 0n ? v << 1n : ((-v) << 1n) - 1n
    do { out.push(Number(u & 0x7fn) | (u > 0x7fn ? 0x80 : 0)); u >>= 7n } while (u > 0n)
  }
  const value = (type, path) => {
    const from = r.at
    if (type === 6) {
      const u = varint()
      const was = u & 1n ? -((u + 1n) >> 1n) : u >> 1n
      const now = edit(path, was)
      return now === undefined ? copy(from) : i64(now)
    }
    if (type === 3) r.at++
    else if (type === 4 || type === 5) varint()
    else if (type === 7) r.at += 8
    else if (type === 8) { const n = Number(varint()); r.at += n }
    else if (type === 12) return struct(path)
    else if (type === 9) {
      const head = bytes[r.at++]
      let n = head >> 4
      if (n === 15) n = Number(varint())
      copy(from)
      const elem = head & 0x0f
      for (let i = 0; i < n; i++) {
        if (elem === 1 || elem === 2) { out.push(bytes[r.at++]); continue }
        value(elem, [...path, i])
      }
      return
    }
    copy(from)
  }
  const struct = path => {
    let fid = 0
    for (;;) {
      const from = r.at
      const head = bytes[r.at++]
      const type = head & 0x0f
      if (type === 0) return copy(from)
      if (head >> 4) fid += head >> 4
      else { const u = varint(); fid = Number(u & 1n ? -((u + 1n) >> 1n) : u >> 1n) }
      copy(from)
      if (type !== 1 && type !== 2) value(type, [...path, fid])
    }
  }
  struct([])
  const footer = Buffer.from(out)
  const tail = Buffer.alloc(8)
  tail.writeUInt32LE(footer.length, 0)
  tail.write('PAR1', 4)
  return Buffer.concat([bytes.subarray(0, start), footer, tail])
}

module.exports = { sql, writeRows, writeQuery, chunksOf, rowGroupsOf, fixtureDir, shortestFloat32, editFooter }
