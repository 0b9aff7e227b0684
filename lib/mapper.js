'use strict'

const { PipeloadError } = require('./errors')
const { parseTemplate, FIELD } = require('./template')
const { bulk, encodeCommand } = require('./resp')

// Binds parsed templates to the shape of the input and compiles them into a mapper:
//   mapper.resp(record)  -> RESP text of all the record's commands (the hot path)
//   mapper.args(record)  -> [[cmd, arg, ...], ...] (dry-run text, cluster routing, tests)
//   mapper.perRecord     -> commands per record
// A field the record lacks throws a FieldMissing, which the loader turns into a failed
// record with its position; it never becomes an empty string.

class FieldMissing extends PipeloadError {
  constructor (field, reason) {
    super('PIPELOAD_FIELD_MISSING', reason || `field "${field}" is missing`, { field })
  }
}

/** A record's value as the text Redis stores: nested JSON as JSON text, null as missing. */
function toText (value, name) {
  switch (typeof value) {
    case 'string': return value
    case 'number': case 'bigint': case 'boolean': return String(value)
    case 'undefined': throw new FieldMissing(name)
    default:
      if (value === null) throw new FieldMissing(name, `field "${name}" is null`)
      if (Buffer.isBuffer(value)) return value.toString('utf8')
      return JSON.stringify(value)
  }
}

/** A getter for one field: by column index for CSV arrays, by (dotted) path for objects. */
function fieldGetter (name, shape, template) {
  if (shape.columns !== undefined) return columnGetter(name, shape, template)
  if (/^\d+$/.test(name)) {
    const idx = Number(name)
    return rec => Array.isArray(rec) ? rec[idx] : rec?.[name]
  }
  const path = name.split('.')
  if (path.length === 1) return rec => rec?.[name]
  return rec => {
    if (rec != null && rec[name] !== undefined) return rec[name] // a key that contains dots
    let v = rec
    for (let i = 0; i < path.length && v != null; i++) v = v[path[i]]
    return v
  }
}

function columnGetter (name, shape, template) {
  const columns = shape.columns
  let idx = columns ? columns.indexOf(name) : -1
  if (idx === -1 && /^\d+$/.test(name)) idx = Number(name)
  if (idx === -1) {
    const known = columns ? `columns are: ${columns.join(', ')}` : 'the input has no header: use {0}, {1}, …'
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID',
      `template "${template}" uses {${name}}, which is not a column of ${shape.file || 'the input'} (${known})`,
      { template, field: name })
  }
  return rec => rec[idx]
}

/** Compile one word (literal text with {field} parts) into a function record -> string. */
function compileWord (word, shape, template) {
  const parts = word.parts.map(p => p.type === FIELD
    ? { name: p.name, get: fieldGetter(p.name, shape, template) }
    : p.text)
  if (parts.length === 1 && typeof parts[0] === 'string') {
    const text = parts[0]
    return { constant: text, value: () => text }
  }
  if (parts.length === 1) {
    const { name, get } = parts[0]
    return { value: rec => toText(get(rec), name) }
  }
  return {
    value: rec => {
      let s = ''
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i]
        s += typeof p === 'string' ? p : toText(p.get(rec), p.name)
      }
      return s
    }
  }
}

/** `*`: every field/value pair. Column names are encoded once; objects skip null values. */
function compileStar (shape) {
  if (shape.columns !== undefined) {
    const names = shape.columns || null
    const nameResp = []
    return {
      count: rec => rec.length * 2,
      pairs: rec => rec.flatMap((v, i) => [names ? names[i] : String(i), v]),
      resp: rec => {
        let s = ''
        for (let i = 0; i < rec.length; i++) {
          s += nameResp[i] ?? (nameResp[i] = bulk(names ? names[i] : String(i)))
          s += bulk(rec[i])
        }
        return s
      }
    }
  }
  const entries = rec => {
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
      throw new FieldMissing('*', '"*" needs a record that is an object, got ' + (Array.isArray(rec) ? 'an array' : JSON.stringify(rec)))
    }
    const out = []
    for (const k in rec) {
      const v = rec[k]
      if (v !== null && v !== undefined) out.push(k, toText(v, k))
    }
    return out
  }
  return {
    count: rec => entries(rec).length,
    pairs: entries,
    resp: rec => entries(rec).map(bulk).join('')
  }
}

/** Compile one parsed template for a shape into { args(rec), resp(rec), keyWord }. */
function compileCommand (parsed, shape) {
  const words = parsed.words.map(w => w.star ? { star: compileStar(shape) } : compileWord(w, shape, parsed.source))
  const star = words.find(w => w.star)?.star
  const fixed = words.filter(w => !w.star).length
  const prefix = words[0].constant
  return {
    name: parsed.name,
    args (rec) {
      const out = []
      for (const w of words) {
        if (w.star) out.push(...w.star.pairs(rec))
        else out.push(w.value(rec))
      }
      return out
    },
    resp (rec) {
      // With `*` the count is known only after expansion; computing the body first keeps one pass.
      let body = bulk(prefix)
      for (let i = 1; i < words.length; i++) {
        const w = words[i]
        body += w.star ? w.star.resp(rec) : bulk(w.value(rec))
      }
      const count = star ? fixed + star.count(rec) : fixed
      return '*' + count + '\r\n' + body
    },
    key: words.length > 1 && !words[1].star ? words[1] : null
  }
}

/**
 * Build the mapper for the user's templates or map function.
 * @param {object} o { templates: string[], ttl?: number, map?: fn, shape: { columns?: string[]|null, file } }
 */
function createMapper ({ templates, ttl, map, shape }) {
  if (map) return mapFunctionMapper(map, ttl)
  const commands = templates.map(t => compileCommand(parseTemplate(t), shape))
  if (ttl != null) commands.push(expireCommand(commands[0], ttl, templates[0]))
  return {
    perRecord: commands.length,
    args: rec => commands.map(c => c.args(rec)),
    resp (rec) {
      let s = ''
      for (let i = 0; i < commands.length; i++) s += commands[i].resp(rec)
      return s
    }
  }
}

function expireCommand (first, ttl, template) {
  if (!first.key) {
    throw new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `--ttl needs a key as the first argument of "${template}"`, { template })
  }
  const key = first.key
  const tail = bulk(String(ttl))
  return {
    args: rec => ['EXPIRE', key.value(rec), String(ttl)],
    resp: rec => '*3\r\n$6\r\nEXPIRE\r\n' + bulk(key.value(rec)) + tail
  }
}

function mapFunctionMapper (map, ttl) {
  const args = rec => {
    const cmds = map(rec)
    if (!Array.isArray(cmds) || cmds.some(c => !Array.isArray(c) || c.length === 0)) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'map(record) must return an array of commands, each an array like ["SET", key, value]')
    }
    const out = cmds.map(c => c.map((a, i) => toText(a, `map()[${i}]`)))
    if (ttl != null) out.push(['EXPIRE', out[0][1], String(ttl)])
    return out
  }
  const mapper = {
    perRecord: null, // varies: resp() leaves the count of its last record in lastCount
    lastCount: 0,
    args,
    resp (rec) {
      const cmds = args(rec)
      mapper.lastCount = cmds.length
      return cmds.map(encodeCommand).join('')
    }
  }
  return mapper
}

module.exports = { createMapper, FieldMissing, toText }
