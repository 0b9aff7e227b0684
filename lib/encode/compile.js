'use strict'

const { PipeloadError } = require('../errors')
const { FIELD } = require('./template')
const { bulkBytes, utf8Bytes } = require('./writer')
const { toArg, writeValue } = require('./values')
const { fieldGetter, altGetter } = require('./fields')
const { compileSpanWord, rowLocators, jsonLocators, compileColumnWord } = require('./span-words')
const { compileStar, vectorPairs } = require('./star')

// A parsed template (template.js) bound to the shape of the input (CSV columns or JSON
// objects) and compiled once into a command: its arguments for a record, and one writer per
// kind of record (plain, CsvRow, JsonRow, ParquetRow) that puts its RESP bytes into a
// ByteWriter. mapper.js composes the commands of all the templates.

/**
 * Compile one word (literal text with {field} parts) into { value(rec) -> string,
 * write(rec, w), writeRow(csvRow, w), writeJson(jsonRow, w) }; the writes put the word's
 * bulk string into a ByteWriter (writeRow/writeJson are null for the other shape).
 */
function compileWord (word, shape, template) {
  if (word.parts.some(p => p.alt)) return compileExtendedWord(word, shape, template)
  const parts = word.parts.map(p => p.type === FIELD
    ? { name: p.name, get: fieldGetter(p.name, shape, template) }
    : p.text)
  if (parts.length === 1 && typeof parts[0] === 'string') {
    const text = parts[0]
    const bytes = bulkBytes(text)
    const write = (rec, w) => w.bytes(bytes)
    return { constant: text, value: () => text, write, writeRow: write, writeJson: write, writeParquet: write }
  }
  const rowWrite = shape.columns !== undefined ? compileSpanWord(word, rowLocators(word, shape, template)) : null
  const jsonWrite = shape.columns === undefined ? compileSpanWord(word, jsonLocators(word)) : null
  const parquetWrite = shape.parquetColumns ? compileColumnWord(word, shape.parquetColumns) : null
  if (parts.length === 1) {
    const { name, get } = parts[0]
    return {
      value: rec => toArg(get(rec), name),
      write: (rec, w) => writeValue(get(rec), name, w),
      writeRow: rowWrite,
      writeJson: jsonWrite,
      writeParquet: parquetWrite
    }
  }
  const scratch = new Array(parts.length)
  // The parts as strings, or as Buffers when a value is binary (`k:{blob}`: its bytes as they are).
  const fill = rec => {
    let binary = false
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]
      const v = typeof p === 'string' ? p : toArg(p.get(rec), p.name)
      if (typeof v !== 'string') binary = true
      scratch[i] = v
    }
    return binary
  }
  const joined = binary => binary
    ? Buffer.concat(scratch.map(v => typeof v === 'string' ? utf8Bytes(v) : v))
    : scratch.join('')
  return {
    value: rec => joined(fill(rec)),
    write: (rec, w) => fill(rec) ? w.arg(joined(true)) : w.bulkParts(scratch, parts.length),
    writeRow: rowWrite,
    writeJson: jsonWrite,
    writeParquet: parquetWrite
  }
}

/**
 * A word with {$…}, spread or vector parts: `{ extended, spread, value(rec, ctx) }` on plain
 * records only (a CsvRow or JsonRow is made an array or object first). value() gives the
 * word's argument, or for a spread word an array of arguments.
 */
function compileExtendedWord (word, shape, template) {
  const parts = word.parts.map(p => p.type === FIELD
    ? { name: p.name, get: p.alt ? altGetter(p, shape, template) : fieldGetter(p.name, shape, template) }
    : p.text)
  if (parts.length === 1 && word.parts[0].alt.kind === 'spread') {
    return { extended: true, spread: true, value: parts[0].get }
  }
  const value = (rec, ctx) => {
    let binary = false
    const vals = parts.map(p => {
      const v = typeof p === 'string' ? p : toArg(p.get(rec, ctx), p.name)
      if (typeof v !== 'string') binary = true
      return v
    })
    if (vals.length === 1) return vals[0]
    return binary ? Buffer.concat(vals.map(v => typeof v === 'string' ? utf8Bytes(v) : v)) : vals.join('')
  }
  return { extended: true, spread: false, value }
}

/** Compile one parsed template for a shape into { args(rec), write(rec, w), key }. */
function compileCommand (parsed, shape, vectors) {
  const words = parsed.words.map(w => w.star ? { star: compileStar(shape) } : Object.assign(compileWord(w, shape, parsed.source), { id: wordId(w) }))
  const starAt = words.findIndex(w => w.star)
  if (words.findIndex((w, i) => w.star && i > starAt) !== -1) {
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `template "${parsed.source}" uses * more than once (it already writes every field)`, { template: parsed.source })
  }
  if (words.some(w => w.extended) || (starAt !== -1 && vectors.size)) return { ...extendedCommand(words, starAt, shape, vectors), words, source: parsed.source }
  const fixed = words.filter(w => !w.star).length
  const head = Buffer.concat([Buffer.from(`*${fixed}\r\n`), bulkBytes(words[0].constant)])
  const name = bulkBytes(words[0].constant)
  const args = rec => {
    const out = []
    for (const w of words) {
      if (w.star) pushAll(out, w.star.pairs(rec))
      else out.push(w.value(rec))
    }
    return out
  }
  // One writer per kind of record (plain, CsvRow, JsonRow, ParquetRow), from its words' writers of that kind.
  const writers = kind => words.slice(1).map(w => w[kind])
  let rowWriter
  if (starAt === -1) {
    rowWriter = kind => {
      const ws = writers(kind)
      return (rec, w) => {
        w.bytes(head)
        for (let i = 0; i < ws.length; i++) ws[i](rec, w)
      }
    }
  } else {
    // The pair count is known only from the record (CSV rows have a fixed length; objects vary).
    const star = words[starAt].star
    Object.assign(words[starAt], { write: star.write, writeRow: star.writeRow, writeJson: star.writeJson, writeParquet: star.writeParquet })
    const counts = { write: star.count, writeRow: star.countRow, writeJson: star.countJson, writeParquet: star.countParquet }
    rowWriter = kind => {
      const ws = writers(kind)
      const count = counts[kind]
      return (rec, w) => {
        w.arrayHeader(fixed + count(rec))
        w.bytes(name)
        for (let i = 0; i < ws.length; i++) ws[i](rec, w)
      }
    }
  }
  const write = rowWriter('write')
  const writeRow = shape.columns !== undefined ? rowWriter('writeRow') : null
  // A dotted path has no JsonRow writer, a field that is no column no ParquetRow one: the record is made an object first.
  const viaObject = kind => words.some(w => !w[kind]) ? (row, w) => write(row.toObject(), w) : rowWriter(kind)
  const writeJson = shape.columns === undefined ? viaObject('writeJson') : null
  const writeParquet = shape.parquetColumns ? viaObject('writeParquet') : null
  return { args, write, writeRow, writeJson, writeParquet, key: words.length > 1 && !words[1].star ? words[1] : null, words, source: parsed.source }
}

/** out.push(...items) without spreading them as call arguments: `*` of 200k keys overflows the stack. */
function pushAll (out, items) {
  for (let i = 0; i < items.length; i++) out.push(items[i])
}

/** The same text for words that write the same argument (`u:{id}` in two templates). */
function wordId (word) {
  return JSON.stringify(word.parts.map(p => p.type === FIELD ? [p.name] : p.text))
}

/**
 * A command with {$…}, spread or vector words, or a `*` with --vector fields, built per
 * record from a plain record: `write(rec, w, ctx)` returns 1, or 0 when the command's spread
 * words all came out empty (nothing to add, so the command is skipped for that record).
 */
function extendedCommand (words, starAt, shape, vectors) {
  const pairs = starAt === -1 ? null : vectors.size ? vectorPairs(words[starAt].star, shape, vectors) : words[starAt].star.pairs
  const args = (rec, ctx) => {
    const out = []
    let spreads = 0
    let spread = 0
    for (const w of words) {
      if (w.star) pushAll(out, pairs(rec))
      else if (w.spread) {
        const a = w.value(rec, ctx)
        spreads++
        if (a.length) spread++
        for (const x of a) out.push(x)
      } else out.push(w.value(rec, ctx))
    }
    return spreads !== 0 && spread === 0 ? null : out
  }
  const write = (rec, w, ctx) => {
    const a = args(rec, ctx)
    if (a === null) return 0
    w.arrayHeader(a.length)
    for (let i = 0; i < a.length; i++) w.arg(a[i])
    return 1
  }
  return { extended: true, args, write, key: words.length > 1 && !words[1].star ? words[1] : null }
}

module.exports = { compileCommand }
