'use strict'

// RESP2 encoding as strings, for the few commands built outside the hot path (handshakes,
// map() output, dry-run quoting). Batches are written by ByteWriter (lib/writer.js).

/** One bulk string: `$<bytes>\r\n<text>\r\n`. */
function bulk (s) {
  return '$' + Buffer.byteLength(s, 'utf8') + '\r\n' + s + '\r\n'
}

/** A whole command from its arguments. */
function encodeCommand (args) {
  let s = '*' + args.length + '\r\n'
  for (let i = 0; i < args.length; i++) s += bulk(args[i])
  return s
}

/**
 * Quote an argument the way redis-cli prints and accepts it, for `--dry-run text`. A
 * Buffer (a binary value) is quoted byte by byte: printable ASCII as is, other bytes \xHH.
 */
function quoteArg (s) {
  if (typeof s !== 'string') return quoteBytes(s)
  if (s !== '' && /^[\x21-\x7e]+$/.test(s) && !/["'\\]/.test(s)) return s
  let out = '"'
  for (const ch of s) {
    const c = ch.codePointAt(0)
    if (ch === '"' || ch === '\\') out += '\\' + ch
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0')
    else out += ch
  }
  return out + '"'
}

function quoteBytes (b) {
  const text = b.toString('latin1')
  if (text !== '' && /^[\x21-\x7e]+$/.test(text) && !/["'\\]/.test(text)) return text
  let out = '"'
  for (const c of b) {
    if (c === 0x22 || c === 0x5c) out += '\\' + String.fromCharCode(c)
    else if (c === 0x0a) out += '\\n'
    else if (c === 0x0d) out += '\\r'
    else if (c === 0x09) out += '\\t'
    else if (c < 0x20 || c >= 0x7f) out += '\\x' + c.toString(16).padStart(2, '0')
    else out += String.fromCharCode(c)
  }
  return out + '"'
}

/** `--dry-run text` lines for one record's commands, quoted as redis-cli reads them. */
function textLines (commands) {
  let s = ''
  for (const args of commands) s += args.map(quoteArg).join(' ') + '\n'
  return s
}

module.exports = { bulk, encodeCommand, quoteArg, textLines }
