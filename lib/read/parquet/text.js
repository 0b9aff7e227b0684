'use strict'

const { leafRule, int64Value, NEGATIVE_ZERO } = require('./values')
const { readPages, readDefs, checkLengths, checkIndices, storedValues, pages, BYTES: BYTE_TYPES, STRING_RULES } = require('./flat')
const { ParquetRow, headOf, NUMBER, BYTES, STRING } = require('./row')
const { Arena, ColumnBatch, putValue } = require('./arena')

// A row group's flat columns as text rows (ParquetRow, row.js), a batch at a time:
// each column's values of the batch are the bytes the mapper sends for them (a ColumnBatch:
// a buffer and each row's [start, end) in it), written once, instead of a record object per
// row whose values the mapper turns into text one by one. A dictionary's entries are made
// text once: a batch of a dictionary-encoded column points into them; the common PLAIN pages
// (integers, doubles, strings, bytes) are written from the page's bytes as a batch takes its
// rows, without a JS value per row; every other page goes through hyparquet's decoders and
// values.js, value by value. Used where the mapper needs nothing but the values' bytes
// (ParquetFile.readsAsText).

/** A dictionary's entries as text, each copied into a batch's arena once, when a row first uses it. */
class TextDictionary {
  constructor (entries, value, prefix) {
    const arena = new Arena(1024, prefix)
    this.pre = prefix.length
    const n = entries.length
    this.entries = ColumnBatch.of(n)
    for (let k = 0; k < n; k++) putValue(arena, value(entries[k]), this.entries, k)
    this.bytes = arena.buf
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length)
    this.stamp = new Int32Array(n).fill(-1) // the batch an entry was last copied into
    this.at = new Int32Array(n) // where, in that batch's arena
  }
}

let batchNo = 0

/** A dictionary-encoded page: its indices, taken in order. */
class DictionaryPage {
  constructor (indices, dictionary, rows, defs) {
    checkIndices(indices, dictionary === null ? null : dictionary.stamp)
    this.indices = indices
    this.dictionary = dictionary
    this.rows = rows
    this.defs = defs
    this.k = 0
  }

  /**
   * The next `count` values into out[o…]: pointing into the dictionary's bytes (`arena` null:
   * the batch's buffer is the dictionary's), or each entry copied into the arena once (an
   * entry stamped with the arena's batch number is there already).
   */
  values (count, arena, out, o) {
    if (arena === null) return this.pointing(count, out, o)
    const { entries: { spans, tags }, stamp, at, bytes, pre } = this.dictionary
    const no = arena.batch
    const outSpans = out.spans
    const indices = this.indices
    const size = stamp.length
    for (let end = o + count; o < end; o++) {
      const idx = indices[this.k++]
      if (!(idx < size)) throw new Error(`a dictionary index ${idx} past the dictionary's ${size} entries`)
      const s = spans[2 * idx]
      const e = spans[2 * idx + 1]
      const h = headOf(s, e) - pre
      if (stamp[idx] !== no) { // the entry's bulk string (and prefix), copied
        at[idx] = arena.pos
        arena.copy(bytes, h, e + 2)
        stamp[idx] = no
      }
      outSpans[2 * o] = at[idx] + s - h
      outSpans[2 * o + 1] = at[idx] + e - h
      out.tags[o] = tags[idx]
    }
  }

  /** values() where the batch's buffer is the dictionary's: the spans of the entries. */
  pointing (count, out, o) {
    const { spans, tags } = this.dictionary.entries
    const outSpans = out.spans
    const outTags = out.tags
    const indices = this.indices
    const size = tags.length
    let k = this.k
    for (let end = o + count; o < end; o++) {
      const idx = indices[k++]
      if (!(idx < size)) throw new Error(`a dictionary index ${idx} past the dictionary's ${size} entries`)
      outSpans[2 * o] = spans[2 * idx]
      outSpans[2 * o + 1] = spans[2 * idx + 1]
      outTags[o] = tags[idx]
    }
    this.k = k
  }
}

/** A page of values decoded whole by hyparquet, each turned into text by `value` (values.js). */
class ValuesPage {
  constructor (stored, value, rows, defs) {
    this.stored = stored
    this.value = value
    this.rows = rows
    this.defs = defs
    this.k = 0
  }

  values (count, arena, out, o) {
    for (let end = o + count; o < end; o++) putValue(arena, this.value(this.stored[this.k++]), out, o)
  }
}

/**
 * A PLAIN page of fixed-size numbers read from its bytes as they are taken: int32, uint32,
 * int64 (a JsonNumber's digits past 2^53, as int64Value), double (-0 as "-0", as doubleValue).
 */
class NumberPage {
  /** The page's values from `reader`'s offset on ({ view, offset }: the page's, past its levels). */
  constructor (reader, rule, rows, defs) {
    this.view = reader.view
    this.p = reader.offset
    this.rule = rule
    this.unsigned = rule === 'uint32'
    this.rows = rows
    this.defs = defs
  }

  values (count, arena, out, o) {
    if (this.rule === 'int64') this.int64s(count, arena, out, o)
    else if (this.rule === 'double') this.doubles(count, arena, out, o)
    else this.int32s(count, arena, out, o)
  }

  int64s (count, arena, out, o) {
    const view = this.view
    let p = this.p
    for (let end = o + count; o < end; o++, p += 8) {
      const v = view.getInt32(p + 4, true) * 4294967296 + view.getUint32(p, true)
      if (!Number.isSafeInteger(v)) {
        putValue(arena, int64Value(view.getBigInt64(p, true)), out, o)
        continue
      }
      arena.bulkInt(v, out, o)
      out.tags[o] = NUMBER
    }
    this.p = p
  }

  doubles (count, arena, out, o) {
    const view = this.view
    let p = this.p
    for (let end = o + count; o < end; o++, p += 8) {
      const x = view.getFloat64(p, true)
      putValue(arena, x === 0 && 1 / x < 0 ? NEGATIVE_ZERO : x, out, o)
    }
    this.p = p
  }

  /** int32s, or uint32s where the rule is uint32 (`unsigned`). */
  int32s (count, arena, out, o) {
    const view = this.view
    const unsigned = this.unsigned
    let p = this.p
    for (let end = o + count; o < end; o++, p += 4) {
      arena.bulkInt(unsigned ? view.getUint32(p, true) : view.getInt32(p, true), out, o)
      out.tags[o] = NUMBER
    }
    this.p = p
  }
}

const NUMBER_SIZES = Object.freeze({ int32: 4, uint32: 4, int64: 8, double: 8 })
const NUMBER_TYPES = Object.freeze({ int32: 'INT32', uint32: 'INT32', int64: 'INT64', double: 'DOUBLE' })

/**
 * A PLAIN page of byte arrays (4-byte length, bytes) or fixed-length ones, copied as they are
 * taken: strings (their UTF-8 checked with the page: checkLengths) or bytes. `reader`: the
 * page's { view, offset } past its levels; `column`: its TextPages (the decoder, the rule).
 */
class BytesPage {
  constructor (reader, column, rows, defs) {
    const view = reader.view
    const decoder = column.decoder
    this.bytes = Buffer.from(view.buffer, view.byteOffset, view.byteLength)
    this.view = view
    this.p = reader.offset
    this.size = decoder.type === 'FIXED_LEN_BYTE_ARRAY' ? decoder.element.type_length : 0
    this.tag = column.rule.rule === 'bytes' ? BYTES : STRING
    this.rows = rows
    this.defs = defs
  }

  values (count, arena, out, o) {
    const bytes = this.bytes
    for (let end = o + count; o < end; o++) {
      let len = this.size
      if (len === 0) {
        len = this.view.getUint32(this.p, true)
        this.p += 4
      }
      const s = this.p
      const e = s + len
      this.p = e
      const start = arena.open()
      arena.copy(bytes, s, e)
      arena.close(start, out, o)
      out.tags[o] = this.tag
    }
  }
}


/**
 * A flat column's pages made segments, for flat.js readPages (its `maker`): `rule` the leaf's
 * (values.js leafRule), `value` the column's record value function (values.js), used for
 * dictionaries and the pages not read here; `prefix` the bytes before each value. readPages
 * sets `decoder` (hyparquet's, for the chunk) and `maxDef` before the first page.
 */
class TextPages {
  constructor (rule, value, prefix) {
    this.rule = rule
    this.value = value
    this.prefix = prefix
    this.entries = null // the TextDictionary, once the dictionary page is read
    this.decoder = null
    this.maxDef = 0
  }

  dictionary (entries) {
    this.entries = new TextDictionary(entries, this.value, this.prefix)
  }

  /**
   * The segment for a decompressed DATA_PAGE: the fast pages for PLAIN numbers, strings and
   * bytes and for dictionary indices; hyparquet's decoders for the rest.
   */
  v1 (raw, daph) {
    const { readDataPage, readRleBitPackedHybrid, readPlain, convert } = pages()
    const { decoder, rule } = this
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength)
    const reader = { view, offset: 0 }
    const encoding = daph.encoding
    const fast = encoding === 'PLAIN' || encoding === 'PLAIN_DICTIONARY' || encoding === 'RLE_DICTIONARY'
    if (!fast || decoder.type === 'BOOLEAN') {
      const { definitionLevels, dataPage } = readDataPage(raw, daph, decoder)
      return this.stored(definitionLevels, dataPage, encoding, daph.num_values)
    }
    const { defs, present } = readDefs(reader, daph.num_values, this.maxDef)
    if (encoding !== 'PLAIN') {
      const width = view.getUint8(reader.offset++)
      const indices = new Int32Array(present)
      if (width && present) readRleBitPackedHybrid(reader, width, indices, view.byteLength - reader.offset)
      return new DictionaryPage(indices, this.entries, daph.num_values, defs)
    }
    const size = NUMBER_SIZES[rule.rule]
    if (size !== undefined && NUMBER_TYPES[rule.rule] === decoder.type) {
      if (reader.offset + present * size > view.byteLength) throw new Error(`a PLAIN page of ${present} values of ${size} bytes is ${view.byteLength - reader.offset} bytes long`)
      return new NumberPage(reader, rule.rule, daph.num_values, defs)
    }
    if (BYTE_TYPES.has(decoder.type) && (STRING_RULES.has(rule.rule) || rule.rule === 'bytes')) {
      checkLengths(reader, present, decoder, STRING_RULES.has(rule.rule))
      return new BytesPage(reader, this, daph.num_values, defs)
    }
    return new ValuesPage(convert(readPlain(reader, decoder.type, present, decoder.element.type_length), decoder), this.value, daph.num_values, defs)
  }

  /** A DATA_PAGE_V2, read by hyparquet ({ definitionLevels, dataPage }). */
  v2 (page, encoding) {
    return this.stored(page.definitionLevels, page.dataPage, encoding, page.dataPage.length)
  }

  /** A page hyparquet decoded whole: dictionary indices, or values. */
  stored (definitionLevels, dataPage, encoding, numValues) {
    const defs = definitionLevels && definitionLevels.length ? definitionLevels : null
    const rows = defs ? defs.length : numValues
    if (encoding.endsWith('_DICTIONARY')) return new DictionaryPage(dataPage, this.entries, rows, defs)
    return new ValuesPage(storedValues(dataPage, this.decoder, STRING_RULES.has(this.rule.rule)), this.value, rows, defs)
  }
}

/**
 * A flat column's chunk (flat.js readPages' arguments) as a TextColumn. `prefix`: the bytes
 * before each value (the column name's bulk string, for `*`), or an empty Buffer.
 * @returns {Promise<TextColumn>}
 */
async function readTextColumn (chunk, prefix) {
  const rule = leafRule(chunk.node.element) // the file's own element: chunk.element has the annotations hyparquet must not apply removed
  const segments = await readPages(chunk, new TextPages(rule, chunk.value, prefix))
  return new TextColumn(segments, chunk.rows, prefix)
}

/** A row group's flat column, taken in row order, a batch of rows at a time (take). */
class TextColumn {
  constructor (segments, rows, prefix) {
    this.prefix = prefix
    this.segments = segments
    this.rows = rows
    this.s = 0 // the segment being taken
    this.row = 0 // the row within it
    this.scratch = ColumnBatch.of(0) // the values present of a segment with nulls
    this.perRow = 32 // the bytes a row takes in a batch's arena, as the last batch's (a little more)
  }

  /** The next `m` rows' values into `out`, a ColumnBatch of m rows. */
  take (m, out) {
    const dictionary = this.oneDictionary(m)
    const arena = dictionary === null ? new Arena(64 + Math.ceil(this.perRow * m), this.prefix, batchNo++ & 0x7fffffff) : null
    let r = 0
    while (r < m) {
      const seg = this.segments[this.s]
      const count = Math.min(m - r, seg.rows - this.row)
      if (seg.defs === null) {
        seg.values(count, arena, out, r)
      } else {
        seg.values(this.present(seg, count), arena, this.scratch, 0)
        this.spread(seg, count, out, r)
      }
      r += count
      this.row += count
      if (this.row === seg.rows) {
        this.segments[this.s] = null // taken: its bytes can go
        this.s++
        this.row = 0
      }
    }
    if (arena !== null) this.perRow = 1.125 * arena.pos / m
    out.pre = this.prefix.length
    out.buf = dictionary === null ? arena.buf : dictionary.bytes
    out.view = dictionary === null ? new DataView(out.buf.buffer, out.buf.byteOffset, out.buf.length) : dictionary.view
    return out
  }

  /** The dictionary, where the next `m` rows are all on dictionary-encoded pages (they point into it); else null. */
  oneDictionary (m) {
    let dictionary = null
    for (let s = this.s, left = m + this.row; left > 0; s++) {
      const seg = this.segments[s]
      if (!(seg instanceof DictionaryPage) || (dictionary !== null && seg.dictionary !== dictionary)) return null
      dictionary = seg.dictionary
      left -= seg.rows
    }
    return dictionary
  }

  /**
   * How many of a segment's next `count` rows (some null) have a value; `scratch` made room
   * for them. take() reads them into it, then spread() spreads them over the rows.
   */
  present (seg, count) {
    const { defs, maxDef } = seg
    let present = 0
    for (let d = this.row; d < this.row + count; d++) if (defs[d] === maxDef) present++
    if (this.scratch.tags.length < present) this.scratch = ColumnBatch.of(Math.max(present, 1024))
    return present
  }

  /** The values present of a segment's next `count` rows, in `scratch`, into out[r…] with the nulls. */
  spread (seg, count, out, r) {
    const { defs, maxDef } = seg
    const scratch = this.scratch
    for (let i = 0, v = 0; i < count; i++) {
      if (defs[this.row + i] !== maxDef) {
        out.spans[2 * (r + i)] = -1
        continue
      }
      out.spans[2 * (r + i)] = scratch.spans[2 * v]
      out.spans[2 * (r + i) + 1] = scratch.spans[2 * v + 1]
      out.tags[r + i] = scratch.tags[v]
      v++
    }
  }
}

/**
 * Rows [start, end) of a row group read as TextColumns (`texts`, one per column of `columns`),
 * taken in order from row 0: a ParquetRow per row, over one ColumnBatch per column. `shape`:
 * the RowShape (row.js) of the group's rows.
 */
function textRows (texts, start, end, shape) {
  const m = end - start
  const n = texts.length
  const spans = new Int32Array(2 * m * n)
  const tags = new Uint8Array(m * n)
  const cols = texts.map((t, k) => t.take(m, new ColumnBatch(spans.subarray(2 * m * k, 2 * m * (k + 1)), tags.subarray(m * k, m * (k + 1)))))
  const out = new Array(m)
  for (let r = 0; r < m; r++) out[r] = new ParquetRow(cols, r, shape)
  return out
}

module.exports = { readTextColumn, textRows, TextColumn }
