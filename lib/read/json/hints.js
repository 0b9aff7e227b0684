'use strict'

const { PipeloadError, where } = require('../../errors')
const { renamed } = require('../magic')

// NDJSON in a .json file (one value per line), told before a record is written: a JSON
// document holds one value, so a first line that is a whole object or array with another one
// on a line after it can only be NDJSON. Told from the input's first bytes (up to
// SNIFF_LIMIT), before the scanner reads any.

const SNIFF_LIMIT = 1024 * 1024 // bytes looked at for the first line and the value after it

const isSpace = b => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

/**
 * What the input's first bytes `head` say: 'json' (read it as a document), null (not known
 * yet: more bytes wanted; `ended`: there are no more), or { line } where a second top-level
 * value starts (NDJSON).
 */
function sniffNdjson (head, ended) {
  const lf = head.indexOf(0x0a)
  const undecided = ended || head.length >= SNIFF_LIMIT ? 'json' : null
  if (lf === -1) return undecided
  let j = lf + 1
  while (j < head.length && isSpace(head[j])) j++
  if (j === head.length) return undecided
  if (head[j] !== 0x7b && head[j] !== 0x5b) return 'json'
  let first
  try {
    first = JSON.parse(head.toString('utf8', 0, lf))
  } catch {
    return 'json'
  }
  if (first === null || typeof first !== 'object') return 'json'
  let line = 1
  for (let i = 0; i < j; i++) if (head[i] === 0x0a) line++
  return { line }
}

/** The refusal of NDJSON read as one JSON document: a whole-input error (no line property). */
function ndjsonError (file, line) {
  const name = String(file || '')
  const rename = /^<.*>$/.test(name) || /^https?:\/\//i.test(name) ? '' : ` (or name it ${renamed(name, '.ndjson')})`
  return new PipeloadError('PIPELOAD_INPUT_INVALID',
    `${where(name, line)}: a second JSON value after the one on line 1: this looks like NDJSON (one JSON value per line), not one JSON document: --format ndjson${rename}`,
    { file: name, option: 'format' })
}

/** An input's first bytes, held until sniffNdjson can tell (JsonArrayCore's). */
class FirstBytes {
  constructor (file) {
    this.file = file
    this.head = Buffer.alloc(0)
  }

  /** `buf` after the bytes held: all of them once they are no NDJSON, null while not known. */
  take (buf, ended) {
    const head = this.head.length === 0 ? buf : Buffer.concat([this.head, buf])
    const verdict = sniffNdjson(head, ended)
    if (verdict === null) {
      this.head = head
      return null
    }
    if (verdict !== 'json') throw ndjsonError(this.file, verdict.line)
    this.head = null
    return head
  }
}

module.exports = { sniffNdjson, ndjsonError, FirstBytes }
