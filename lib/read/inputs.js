'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { PipeloadError } = require('../errors')
const { isUrl, displayUrl } = require('./http-input')

// Several inputs in one run: `pipeload import a.csv b.csv.gz 'parts/*.ndjson'`, or load()'s
// `input: ['a.csv', 'parts/*.ndjson']`. Patterns are expanded here, not only by the shell,
// so a quoted pattern works on every shell and in Windows cmd, and the library takes the
// same list. The result is the list of inputs the run loads, in this order.

/**
 * Whether load()'s `input` is a list of inputs: an array whose every element is a string
 * (paths, URLs, "-", patterns). Any other array is an iterable of records, as before; so
 * an array of string records must be passed as an iterable that is no array (`arr.values()`).
 */
function isInputList (input) {
  return Array.isArray(input) && input.length > 0 && input.every(s => typeof s === 'string')
}

// Any pattern holds one of these; without one, the glob library (~8 ms to load) is not
// loaded at all: most runs name one plain file.
const GLOB_CHARS = /[*?[\]{}()!+@]/

/** tinyglobby, loaded when a pattern is first looked at. */
function glob () {
  return require('tinyglobby')
}

/** Whether a string input may name several files: a pattern, and not a file or URL as it is. */
function isPattern (s) {
  return s !== '-' && GLOB_CHARS.test(s) && !isUrl(s) && glob().isDynamicPattern(s) && !fs.existsSync(s)
}

/** A pattern's matching files, byte-ordered (the same order on every machine and locale). */
function expandPattern (pattern) {
  const matches = glob().globSync(pattern, { onlyFiles: true, expandDirectories: false, absolute: path.isAbsolute(pattern) })
  if (matches.length === 0) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `input: no file matches the pattern ${pattern}`, { option: 'input', pattern })
  }
  return matches.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
}

/**
 * Strings given as inputs -> the inputs to load, patterns expanded in place. Refused: a
 * pattern that matches nothing, "-" twice (stdin can be read once), and one file or URL
 * listed twice (it would be loaded twice; overlapping patterns are the usual cause).
 */
function expandInputs (given) {
  const list = given.flatMap(s => isPattern(s) ? expandPattern(s) : [s])
  const seen = new Map()
  for (const s of list) {
    const id = identityOf(s)
    const was = seen.get(id)
    if (was !== undefined) {
      const shown = x => isUrl(x) ? displayUrl(x) : x // never a URL's password
      const twice = s === '-' ? '- (stdin) is listed twice: it can be read once'
        : `${shown(s)} is listed twice${was === s ? '' : ` (also as ${shown(was)})`}: it would be loaded twice`
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `input: ${twice}`, { option: 'input' })
    }
    seen.set(id, s)
  }
  return list
}

/** What makes two listed inputs the same: a file by its real path, a URL by itself. */
function identityOf (s) {
  if (s === '-' || isUrl(s)) return s
  try {
    return fs.realpathSync(s)
  } catch {
    return path.resolve(s) // not there: describing it says so, in order
  }
}

module.exports = { isInputList, expandInputs, isPattern }
