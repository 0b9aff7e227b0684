'use strict'

const { parseTemplate } = require('./template')
const { FieldMissing, toArg, vectorBytes } = require('./values')
const { plainFor } = require('./fields')
const { rowKindOf } = require('../read/formats')
const { compileCommand } = require('./compile')
const { templateKeyCommands } = require('./ttl-replace')
const { mapFunctionMapper, SKIP } = require('./map-function')
const { restoreMapper } = require('./restore')

// Binds parsed templates to the shape of the input (its columns, or objects) and compiles them
// once, against the row interface (read/row.js), into a mapper that writes a record's commands
// as RESP bytes: a plain record through each command's `write`, a byte row of the input's
// RowKind (chosen once, from the shape, by the format registry read/formats.js) through its
// `writeRow`.
// A field the record lacks throws a FieldMissing, which the loader turns into a failed
// record with its position; it never becomes an empty string.
//
// Its parts, one concept each: values.js (a record's values as arguments), fields.js (the
// {field} getters), compile.js (a template compiled into a command), star.js (`*`),
// ttl-replace.js (--ttl, --replace),
// map-function.js (a map() function instead of templates).

/**
 * Build the mapper for the user's templates or map function:
 *   mapper.write(record, w, n, line) -> number of commands written into ByteWriter w (the hot
 *                                       path), or SKIP when map() returned null
 *   mapper.args(record, n, line)     -> [[cmd, arg, ...], ...] (dry-run text, tests), or SKIP
 * n is the record's number over the whole run and line its input line ({$n}, {$line}, map()'s ctx).
 * A record that cannot be mapped throws (FieldMissing for a missing field); the caller
 * rolls the writer back to where the record started.
 * @param {object} o { templates: string[], ttl?: number, map?: fn, shape: { columns?: string[]|null, file } }
 */
function createMapper ({ templates, ttl, ttlKeys = 'first', replace = false, map, shape, vectors }) {
  const plain = plainFor(shape)
  if (map) return mapFunctionMapper(map, { ttl, ttlKeys, replace, columns: shape && shape.columns, file: shape && shape.file, shard: Boolean(shape && shape.shard), plain })
  const kind = rowKindOf(shape)
  const Row = kind.Row
  const vectorMap = new Map((vectors || []).map(v => [v.name, v]))
  const commands = templates.map(t => compileCommand(parseTemplate(t), shape, vectorMap, kind))
  templateKeyCommands(commands, templates[0], { ttl, ttlKeys, replace })
  const n = commands.length
  if (commands.some(c => c.extended)) {
    // New word kinds: every command works on the plain record, with the record's context.
    return {
      args (rec, num, line) {
        const r = plain(rec)
        const ctx = { n: num, line }
        return commands.map(c => c.args(r, ctx)).filter(a => a !== null)
      },
      write (rec, w, num, line) {
        const r = plain(rec)
        const ctx = { n: num, line }
        let count = 0
        for (let i = 0; i < n; i++) {
          const c = commands[i]
          if (c.extended) count += c.write(r, w, ctx)
          else { c.write(r, w, ctx); count++ }
        }
        return count
      }
    }
  }
  return {
    args (rec) {
      const r = plain(rec)
      return commands.map(c => c.args(r))
    },
    write (rec, w) {
      if (rec instanceof Row) {
        for (let i = 0; i < n; i++) commands[i].writeRow(rec, w)
      } else {
        for (let i = 0; i < n; i++) commands[i].write(rec, w)
      }
      return n
    }
  }
}

/**
 * The mapper load()'s options `o` ask for (`map` does not cross into worker threads: templates
 * there); a restore's reads dump lines (./restore.js).
 */
function mapperFor (o, shape) {
  if (o.restore) return restoreMapper({ startMs: o.restoreAt, plain: plainFor(shape) })
  return createMapper({ templates: o.templates, map: o.map, ttl: o.ttl, ttlKeys: o.ttlKeys, replace: o.replace, vectors: o.vectors, shape })
}

module.exports = { createMapper, mapperFor, FieldMissing, toArg, vectorBytes, SKIP }
