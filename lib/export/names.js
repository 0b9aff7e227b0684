'use strict'

const { isUtf8 } = require('node:buffer')
const { quoteArg } = require('../encode/resp')

// How the export writers name a key or a field in a message: as redis-cli prints it (bytes
// that are not UTF-8 as \xHH), shortened, since a key may be megabytes long.

const LONGEST = 200

function shown (buf) {
  const part = buf.length > LONGEST ? buf.subarray(0, LONGEST) : buf
  const text = isUtf8(part) ? quoteArg(part.toString('utf8')) : quoteArg(part)
  return buf.length > LONGEST ? `${text}… (${buf.length} bytes)` : text
}

/** `key "user:1"` style naming for messages. */
function keyName (key) {
  return `key ${shown(key)}`
}

module.exports = { shown, keyName }
