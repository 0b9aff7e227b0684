'use strict'

const { PipeloadError } = require('../errors')

// A command template such as `HSET user:{id} *` is compiled once into a small program:
// a list of arguments, each a list of parts (literal text or a field reference), or the
// `*` that expands to every field/value pair. Compiled programs turn a record into
// argument strings without re-parsing the template per record.

const LITERAL = 0
const FIELD = 1

/**
 * Split a template into words: whitespace separates, "…" and '…' group, \ escapes in "…",
 * and {…} groups up to its "}" (`{Hourly Wage ($)}` is one field, spaces and all).
 * `oneWord` (a --key): whitespace is part of the word, quotes still group.
 */
function splitWords (template, oneWord = false) {
  const words = []
  let i = 0
  const n = template.length
  const space = oneWord ? () => false : ch => /\s/.test(ch)
  while (i < n) {
    while (i < n && space(template[i])) i++
    if (i >= n) break
    let word = ''
    let quoted = false
    while (i < n && !space(template[i])) {
      const ch = template[i]
      const end = ch === '{' && template[i + 1] !== '{' ? template.indexOf('}', i + 1) : -1
      if (ch === '{' && template[i + 1] === '{') {
        word += '{{'
        i += 2
      } else if (end !== -1) {
        word += template.slice(i, end + 1)
        i = end + 1
      } else if (ch === '"' || ch === "'") {
        const end = findClosingQuote(template, i)
        word += ch === '"' ? unescapeDouble(template.slice(i + 1, end)) : template.slice(i + 1, end)
        quoted = true
        i = end + 1
      } else {
        word += ch
        i++
      }
    }
    words.push({ text: word, quoted })
  }
  return words
}

function findClosingQuote (template, start) {
  const q = template[start]
  for (let i = start + 1; i < template.length; i++) {
    if (q === '"' && template[i] === '\\') { i++; continue }
    if (template[i] === q) return i
  }
  throw templateError(template, `unclosed ${q} quote at position ${start + 1}`)
}

function unescapeDouble (s) {
  return s.replace(/\\(.)/g, (_, c) => ({ n: '\n', r: '\r', t: '\t' }[c] ?? c))
}

function templateError (template, reason) {
  return new PipeloadError('PIPELOAD_TEMPLATE_INVALID', `invalid command template "${template}": ${reason}`, { template })
}

/** Parse one word into literal and {field} parts; `{{` and `}}` are literal braces. */
function parseWord (template, text) {
  const parts = []
  let lit = ''
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (ch === '{' && text[i + 1] === '{') { lit += '{'; i++; continue }
    if (ch === '}' && text[i + 1] === '}') { lit += '}'; i++; continue }
    if (ch === '}') throw templateError(template, `unmatched "}" in "${text}" (write "}}" for a literal brace)`)
    if (ch !== '{') { lit += ch; continue }
    const end = text.indexOf('}', i + 1)
    if (end === -1) throw templateError(template, `unclosed "{" in "${text}" (write "{{" for a literal brace)`)
    const name = text.slice(i + 1, end).trim()
    if (name === '') throw Object.assign(templateError(template, `empty field name "{}" in "${text}"`), { emptyField: true })
    if (lit) { parts.push({ type: LITERAL, text: lit }); lit = '' }
    parts.push(fieldPart(template, name))
    i = end
  }
  if (lit || parts.length === 0) parts.push({ type: LITERAL, text: lit })
  if (parts.length > 1 && parts.some(p => p.alt?.kind === 'spread')) {
    const p = parts.find(p => p.alt?.kind === 'spread')
    throw templateError(template, `{${p.source}} spreads into arguments, so it must be a word of its own, not part of "${text}" (write {${p.source.replace(/[[\]]/g, '\\$&')}} for a field with that name)`)
  }
  return parts
}

const META = new Map([['$', 'record'], ['$n', 'n'], ['$line', 'line'], ['$file', 'file']])

/**
 * A {…} part: a field, or one with another reading (`alt`) when the input has no field of
 * that whole name: {$} {$n} {$line} {$file}, {tags[]} and {tags[,]} (spread),
 * {embedding:f32} {embedding:f64:768} (vector bytes). `{=…}` forces the other reading;
 * a backslash forces the field (`{a\:f32}` is the field "a:f32").
 */
function fieldPart (template, source) {
  if (source.includes('\\')) return { type: FIELD, name: source.replace(/\\(.)/g, '$1') }
  const forced = source.startsWith('=')
  const text = forced ? source.slice(1).trim() : source
  const alt = altReading(text)
  if (forced && !alt) {
    throw templateError(template, `{${source}}: "=" forces the reading of {$}, {$n}, {$line}, {$file}, {x[]}, {x[sep]} or {x:f32}/{x:f64}, and "${text}" is none of them`)
  }
  return alt ? { type: FIELD, name: text, alt, forced, source } : { type: FIELD, name: text }
}

function altReading (text) {
  if (META.has(text)) return { kind: 'meta', which: META.get(text) }
  let m = /^(.+?)\[(.*)\]$/s.exec(text)
  if (m) return { kind: 'spread', name: m[1].trim(), sep: m[2] }
  m = /^(.+):(f32|f64)(?::(\d+))?$/.exec(text)
  if (m) return { kind: 'vector', name: m[1].trim(), type: m[2], dim: m[3] === undefined ? null : Number(m[3]) }
  return null
}

/**
 * Parse a template into `{ source, words }`, each word `{ star: true }` or `{ parts }`.
 * Pure syntax: field names are resolved against the input by `bindTemplate`.
 */
function parseTemplate (template) {
  if (typeof template !== 'string' || template.trim() === '') {
    throw templateError(String(template), 'a template needs a command name, e.g. "HSET user:{id} *"')
  }
  if (!template.isWellFormed()) { // (a library caller's string) it has no UTF-8 form to send
    throw templateError(template, 'it holds a lone UTF-16 surrogate, which has no UTF-8 form')
  }
  const words = splitWords(template).map(({ text, quoted }) =>
    text === '*' && !quoted ? { star: true } : { parts: parseWord(template, text) })
  if (words[0].star || words[0].parts.some(p => p.type === FIELD)) {
    throw templateError(template, 'the command name must be literal text')
  }
  return { source: template, name: words[0].parts[0].text.toUpperCase(), words }
}

/**
 * A --key as the one word of `HSET <key> *`: quotes and braces follow the rules of -c, and
 * whitespace is part of the key (it has nowhere else to go).
 */
function keyWord (key) {
  const [{ text }] = splitWords(key, true)
  if (!/[\s"']/.test(text)) return text
  return text.includes("'") ? `"${text.replace(/["\\]/g, '\\$&')}"` : `'${text}'`
}

/**
 * The fields the templates use, for an input that reads only those (Parquet's columns):
 * `all` when a record is used whole (`*`, `{$}`), and each {…} part as `{ name, alt, forced,
 * optional, template }`; `optional`: {$n}, {$line}, {$file}, {$}, which read a field of that
 * name only where the input has one.
 * @returns {{ all: boolean, fields: Array<{ name: string, alt: object|null, forced: boolean, optional: boolean, template: string }> }}
 */
function templateFields (templates) {
  let all = false
  const fields = []
  for (const t of templates) {
    for (const word of parseTemplate(t).words) {
      if (word.star) { all = true; continue }
      for (const p of word.parts) {
        if (p.type !== FIELD) continue
        const meta = p.alt && p.alt.kind === 'meta'
        if (meta && p.alt.which === 'record') all = true
        if (meta && p.forced) continue
        // {$n} and the like read a field of that name where the input has one, else need none.
        fields.push({ name: p.name, alt: p.alt || null, forced: Boolean(p.forced), optional: Boolean(meta), template: t })
      }
    }
  }
  return { all, fields }
}

module.exports = { parseTemplate, keyWord, altReading, templateFields, LITERAL, FIELD }
