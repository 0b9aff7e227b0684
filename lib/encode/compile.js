'use strict'

const { PipeloadError } = require('../errors')
const { FIELD } = require('./template')
const { bulkBytes, utf8Bytes } = require('./writer')
const { toArg, writeValue } = require('./values')
const { fieldGetter, altGetter } = require('./fields')
const { compileStar, vectorPairs } = require('./star')

// A parsed template (template.js) bound to the shape of the input and compiled once into a
// command: its arguments for a record, and its writers that put its RESP bytes into a
// ByteWriter: `write` for a plain record, `writeRow` for a byte row of the input's RowKind
// (read/row.js), each compiled once from the template's words. mapper.js composes the
// commands of all the templates.

/**
 * Compile one word (literal text with {field} parts) into { value(rec) -> string,
 * write(rec, w), writeRow(row, w) }: the writes put the word's bulk string into a ByteWriter,
 * from a plain record or from a byte row of `kind` (writeRow null: the row cannot give it).
 */
function compileWord (word, shape, template, kind) {
  if (word.parts.some(p => p.alt)) return compileExtendedWord(word, shape, template)
  const parts = word.parts.map(p => p.type === FIELD
    ? { name: p.name, get: fieldGetter(p.name, shape, template) }
    : p.text)
  if (parts.length === 1 && typeof parts[0] === 'string') {
    const text = parts[0]
    const bytes = bulkBytes(text)
    const write = (rec, w) => w.bytes(bytes)
    return { constant: text, value: () => text, write, writeRow: write }
  }
  const writeRow = kind.word(word.parts.map(p => p.type === FIELD ? { name: p.name } : p.text), shape, template)
  if (parts.length === 1) {
    const { name, get } = parts[0]
    return {
      value: rec => toArg(get(rec), name),
      write: (rec, w) => writeValue(get(rec), name, w),
      writeRow
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
    writeRow
  }
}

/**
 * A word with {$…}, spread or vector parts: `{ extended, spread, value(rec, ctx) }` on plain
 * records only (a byte row is made plain first). value() gives the
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

/**
 * Compile one parsed template for a shape into { args(rec), write(rec, w), writeRow(row, w), key }:
 * `kind` is the RowKind (read/row.js) of the byte rows the input may give.
 */
function compileCommand (parsed, shape, vectors, kind) {
  const words = parsed.words.map(w => w.star ? { star: compileStar(shape), starRow: kind.star(shape, bulkBytes) } : Object.assign(compileWord(w, shape, parsed.source, kind), { id: wordId(w) }))
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
  // The writer of a plain record and that of a byte row, each from its words' writers.
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
    const { star, starRow } = words[starAt]
    Object.assign(words[starAt], { write: star.write, writeRow: starRow ? starRow.write : null })
    const counts = { write: star.count, writeRow: starRow ? starRow.count : null }
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
  // A word the row cannot give (a JSON dotted path, a field that is no Parquet column): the record is made plain first.
  const writeRow = words.some(w => !w.writeRow) ? (row, w) => write(row.toPlain(), w) : rowWriter('writeRow')
  return { args, write, writeRow, key: words.length > 1 && !words[1].star ? words[1] : null, words, source: parsed.source }
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
