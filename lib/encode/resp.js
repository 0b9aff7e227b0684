'use strict'

// RESP2 encoding as strings, for the few commands built outside the hot path (handshakes,
// map() output, dry-run quoting). Batches are written by ByteWriter (lib/encode/writer.js).

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

/** An argument redis-cli reads without quotes: printable ASCII, no quote or backslash. */
function plain (text) {
  return text !== '' && /^[\x21-\x7e]+$/.test(text) && !/["'\\]/.test(text)
}

/**
 * Quote an argument the way redis-cli prints and accepts it, for `--dry-run text`. A
 * Buffer (a binary value) is quoted byte by byte: printable ASCII as is, other bytes \xHH.
 */
function quoteArg (s) {
  if (typeof s !== 'string') return quoteBytes(s)
  return plain(s) ? s : '"' + escapeText(s) + '"'
}

function quoteBytes (b) {
  return plainBytes(b) ? b.toString('latin1') : '"' + escapeBytes(b) + '"'
}

function plainBytes (b) {
  if (b.length === 0) return false
  for (const c of b) if (c < 0x21 || c > 0x7e || c === 0x22 || c === 0x27 || c === 0x5c) return false
  return true
}

/** The inside of a quoted string argument. */
function escapeText (s) {
  let out = ''
  for (const ch of s) {
    const c = ch.codePointAt(0)
    if (ch === '"' || ch === '\\') out += '\\' + ch
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0')
    else out += ch
  }
  return out
}

/** The inside of a quoted binary argument. */
function escapeBytes (b) {
  let out = ''
  for (const c of b) {
    if (c === 0x22 || c === 0x5c) out += '\\' + String.fromCharCode(c)
    else if (c === 0x0a) out += '\\n'
    else if (c === 0x0d) out += '\\r'
    else if (c === 0x09) out += '\\t'
    else if (c < 0x20 || c >= 0x7f) out += '\\x' + c.toString(16).padStart(2, '0')
    else out += String.fromCharCode(c)
  }
  return out
}

// `--dry-run text` writes an argument longer than this (in characters or bytes) quoted a
// piece at a time: a quoted value is up to 4 times as long (\xHH), and one string of it
// would pass V8's string length limit (2^29 - 24) for a record the real run loads (a 150 MB
// field of control bytes), or take the whole heap building it.
const PIECE = 64 * 1024

/**
 * `--dry-run text` lines for one record's commands, quoted as redis-cli reads them, into a
 * ByteWriter: short arguments gathered into one string (one write per record, as fast as
 * before), a long one written a piece at a time, and what is gathered written out whenever
 * it passes `piece` characters (a record of a million fields).
 */
function writeTextLines (commands, w, piece = PIECE) {
  let text = ''
  for (const args of commands) {
    for (let i = 0; i < args.length; i++) {
      if (i > 0) text += ' '
      const a = args[i]
      if (a.length <= piece) {
        text += quoteArg(a)
        if (text.length > piece) { w.string(text); text = '' }
      } else {
        w.string(text)
        text = ''
        writeLongArg(a, w, piece)
      }
    }
    text += '\n'
  }
  w.string(text)
}

function writeLongArg (a, w, piece) {
  const text = typeof a === 'string'
  if (text ? plain(a) : plainBytes(a)) return text ? w.string(a) : w.bytes(a)
  if (text && !a.isWellFormed()) return w.string(a) // refused whole, as any other value
  w.string('"')
  for (let s = 0; s < a.length;) {
    let e = Math.min(a.length, s + piece)
    // A piece never ends between the two halves of a surrogate pair.
    if (text && e < a.length && isHighSurrogate(a.charCodeAt(e - 1))) e += e - 1 > s ? -1 : 1
    w.string(text ? escapeText(a.slice(s, e)) : escapeBytes(a.subarray(s, e)))
    s = e
  }
  w.string('"')
}

function isHighSurrogate (c) {
  return c >= 0xd800 && c <= 0xdbff
}

module.exports = { bulk, encodeCommand, quoteArg, writeTextLines }
