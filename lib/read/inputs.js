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

/**
 * A pattern's matching files, byte-ordered (the same order on every machine and locale).
 * Symlinked directories the pattern reaches are not entered (a link to a sibling would list
 * its files twice, a link to a parent loop); symlinked files, and links written in the
 * pattern's fixed part (`data/link/*.csv`), are taken as they are.
 */
function expandPattern (pattern) {
  const base = fixedPart(pattern)
  const linked = linkedDirs()
  const matches = glob().globSync(pattern, { onlyFiles: true, expandDirectories: false, absolute: path.isAbsolute(pattern) })
    .filter(m => !throughLink(m, base, linked))
  if (matches.length === 0) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `input: no file matches the pattern ${pattern}`, { option: 'input', pattern })
  }
  return matches.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
}

/** The leading path segments of a pattern that hold no pattern characters ('' for none). */
function fixedPart (pattern) {
  const segments = pattern.split('/')
  const fixed = []
  for (const seg of segments.slice(0, -1)) {
    if (glob().isDynamicPattern(seg)) break
    fixed.push(seg)
  }
  const base = path.normalize(fixed.join('/') || '.')
  return base === '.' ? '' : base // as tinyglobby gives the matches: no ./
}

/** Whether a directory is a symlink, remembered per expansion. */
function linkedDirs () {
  const seen = new Map()
  return dir => {
    if (!seen.has(dir)) {
      let link = false
      try { link = fs.lstatSync(dir).isSymbolicLink() } catch {}
      seen.set(dir, link)
    }
    return seen.get(dir)
  }
}

/** Whether a match lies in a symlinked directory below the pattern's fixed part. */
function throughLink (match, base, isLink) {
  for (let dir = path.dirname(match); dir.length > base.length && dir !== '.' && dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (isLink(dir)) return true
  }
  return false
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
