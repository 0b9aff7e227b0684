'use strict'

const { PipeloadError } = require('./errors')

// A command template such as `HSET user:{id} *` is compiled once into a small program:
// a list of arguments, each a list of parts (literal text or a field reference), or the
// `*` that expands to every field/value pair. Compiled programs turn a record into
// argument strings without re-parsing the template per record.

const LITERAL = 0
const FIELD = 1

/** Split a template into words: whitespace separates, "…" and '…' group, \ escapes in "…". */
function splitWords (template) {
  const words = []
  let i = 0
  const n = template.length
  while (i < n) {
    while (i < n && /\s/.test(template[i])) i++
    if (i >= n) break
    let word = ''
    let quoted = false
    while (i < n && !/\s/.test(template[i])) {
      const ch = template[i]
      if (ch === '"' || ch === "'") {
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
    if (name === '') throw templateError(template, `empty field name "{}" in "${text}"`)
    if (lit) { parts.push({ type: LITERAL, text: lit }); lit = '' }
    parts.push({ type: FIELD, name })
    i = end
  }
  if (lit || parts.length === 0) parts.push({ type: LITERAL, text: lit })
  return parts
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

module.exports = { parseTemplate, LITERAL, FIELD }
