'use strict'

const { PipeloadError, where } = require('../../errors')

// The errors of a JSON document with no records where they were looked for (the top level, or
// --json-path): errors of the whole input (no line or offset property, so no failed record),
// naming --json-path. `core`: the JsonArrayCore reading it (./array.js).

/** A byte as a message shows it. */
function show (b) {
  return b < 0x20 || b > 0x7e ? `byte 0x${b.toString(16).padStart(2, '0')}` : `'${String.fromCharCode(b)}'`
}

function pathError (core, line, reason) {
  return new PipeloadError('PIPELOAD_INPUT_INVALID', `${where(core.file, line)}: ${reason}`, { file: core.file, option: 'jsonPath' })
}

function notArray (core, line, b) {
  if (core.jsonPath === null) {
    return pathError(core, line, `expected a JSON array, or an object keyed by id, at the top level, got ${show(b)} (set --json-path to read the records inside an object)`)
  }
  return pathError(core, line, `--json-path "${core.jsonPathText}" is not an array or an object (got ${show(b)})`)
}

function notObject (core, line, b) {
  const at = core.path.slice(0, core.level).join('.')
  const what = at === '' ? 'the document' : `"${at}"`
  return pathError(core, line, `--json-path "${core.jsonPathText}": ${what} is not an object (got ${show(b)})`)
}

function notFound (core, line) {
  const at = core.path.slice(0, core.level).join('.')
  const keys = core.keysSeen.length === 0 ? 'it is empty'
    : `its keys: ${core.keysSeen.map(k => JSON.stringify(k)).join(', ')}${core.keysSeen.length === 20 ? ', …' : ''}`
  return pathError(core, line, `--json-path "${core.jsonPathText}": no key "${core.path[core.level]}" in ${at === '' ? 'the document' : `"${at}"`} (${keys})`)
}

/** A top-level object whose member `key` is an array: its records are in it (./hints.js). */
function arrayMember (core, line, key) {
  return pathError(core, line, `the document is an object whose member ${JSON.stringify(key)} is an array: for the records in it, --json-path "${key}"`)
}

module.exports = { show, notArray, notObject, notFound, arrayMember }
