'use strict'

// RESP written straight into a Buffer. Building RESP as JS strings costs a rope of small
// strings per argument plus a UTF-8 pass over the whole batch at write() time; this writes
// each byte once. Values are copied with a charCodeAt loop on the optimistic guess that
// they are ASCII (the length in bytes is then the length in chars, known up front); the
// first non-ASCII char rolls the argument back and re-writes it through utf8Write.

const { bulk } = require('./resp')
const { PipeloadError } = require('../errors')
const { describeLoneSurrogate } = require('../read/utf8')
const { copyBytes } = require('../read/copy')

const CR = 13
const LF = 10
const DOLLAR = 36
const STAR = 42
// Buffers given back and kept for the next batches, at most: a parse worker has up to a
// few dozen batches out (the chunks in flight) and takes them back in bursts.
const MAX_FREE = 16
const EMPTY = Buffer.alloc(0)

// Where output buffers live. A worker thread's batches go to the loader's thread: in a
// SharedArrayBuffer they cross without a copy and without detaching anything. Moving an
// ArrayBuffer instead (postMessage's transfer list) detaches it, and after the first
// detached buffer V8 checks every typed-array access of that thread for detachment (its
// "ArrayBufferDetaching" protector): a byte loop runs ~1.9x slower from then on, and the
// workers' parsing and encoding took ~1.45x the CPU of the same code on the main thread.
let sharedOutput = false

/** This thread's output goes to another thread: allocate it shared (a worker calls this first). */
function shareOutput () {
  sharedOutput = true
}

/** An output buffer of n bytes that owns its memory (batches outlive the writer). */
function allocOutput (n) {
  return sharedOutput ? Buffer.from(new SharedArrayBuffer(n)) : Buffer.allocUnsafeSlow(n)
}

class ByteWriter {
  /**
   * @param {number} [capacity] of the first buffer
   * @param {Buffer[]} [free] buffers given back (recycle), shared by the writers of one
   *   thread that follow one another (a parse worker's chunk after chunk)
   */
  constructor (capacity = 64 * 1024, free = []) {
    this.free = free
    // Taken at the first write: a writer that is done (a chunk's encoder after its last
    // batch) holds no buffer it would drop, and a given-back one is used whole.
    this.setBuf(EMPTY)
    this.size = capacity // of the next buffer
    this.pos = 0
  }

  ensure (n) {
    if (this.pos + n > this.buf.length) this.grow(this.pos + n)
  }

  grow (need) {
    if (this.pos === 0) {
      const given = takeFree(this.free, need)
      if (given !== null) {
        this.setBuf(given)
        return
      }
    }
    let size = Math.max(this.buf.length * 2, this.size)
    while (size < need) size *= 2
    const next = allocOutput(size)
    copyBytes(this.buf, 0, this.pos, { buf: next, pos: 0 })
    this.setBuf(next)
  }

  setBuf (buf) {
    this.buf = buf
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.length) // for rawView
  }

  /** Pre-encoded bytes (a command's constant head, a column name's bulk string). */
  bytes (b) {
    this.ensure(b.length)
    const buf = this.buf
    let p = this.pos
    if (b.length < 32) {
      for (let i = 0; i < b.length; i++) buf[p++] = b[i]
    } else {
      buf.set(b, p)
      p += b.length
    }
    this.pos = p
  }

  /** Bytes [s, e) of `src` that are RESP already (a value kept as its bulk string). */
  raw (src, s, e) {
    this.ensure(e - s)
    this.copySpan(src, s, e)
  }

  /**
   * The same from a DataView, 4 bytes at a time: for the short values of a row ~3x a loop of
   * bytes (a native copy's call costs more).
   */
  rawView (view, s, e) {
    this.ensure(e - s)
    const out = this.view
    let p = this.pos
    for (; s + 4 <= e; s += 4, p += 4) out.setUint32(p, view.getUint32(s))
    for (; s < e; s++, p++) out.setUint8(p, view.getUint8(s))
    this.pos = p
  }

  /** A UTF-8 string as is (dry-run text). */
  string (s) {
    checkWellFormed(s)
    this.ensure(s.length * 3)
    this.pos += this.buf.utf8Write(s, this.pos)
  }

  /** `*<n>\r\n` */
  arrayHeader (n) {
    this.ensure(24)
    this.buf[this.pos++] = STAR
    this.digits(n)
  }

  /** `<n>\r\n`, without making a string of n. */
  digits (n) {
    const buf = this.buf
    let p = this.pos
    if (n < 10) {
      buf[p++] = 48 + n
    } else if (n < 100) {
      buf[p++] = 48 + ((n / 10) | 0)
      buf[p++] = 48 + (n % 10)
    } else if (n < 1000) {
      buf[p++] = 48 + ((n / 100) | 0)
      buf[p++] = 48 + (((n / 10) | 0) % 10)
      buf[p++] = 48 + (n % 10)
    } else {
      const s = String(n)
      for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i)
    }
    buf[p++] = CR
    buf[p++] = LF
    this.pos = p
  }

  /** `$<len>\r\n`, with room after it for the len bytes and the closing CRLF. */
  bulkHead (len) {
    this.ensure(len + 24)
    this.buf[this.pos++] = DOLLAR
    this.digits(len)
  }

  crlf () {
    this.buf[this.pos++] = CR
    this.buf[this.pos++] = LF
  }

  /** One bulk string. */
  bulk (s) {
    const len = s.length
    const start = this.pos
    this.bulkHead(len)
    const buf = this.buf
    let p = this.pos
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i)
      if (c > 127) return this.bulkUtf8(s, start)
      buf[p++] = c
    }
    this.pos = p
    this.crlf()
  }

  /** One argument: a string, or the bytes of a Buffer as they are. */
  arg (v) {
    if (typeof v === 'string') this.bulk(v)
    else this.bulkBuffer(v)
  }

  /** A Buffer's bytes as one bulk string. */
  bulkBuffer (b) {
    this.bulkHead(b.length)
    this.copySpan(b, 0, b.length)
    this.crlf()
  }

  /** A non-negative safe integer as a bulk string, digits written without a string. */
  bulkInt (n) {
    let len = 1
    for (let t = n; t >= 10; t = Math.floor(t / 10)) len++
    this.bulkHead(len)
    const buf = this.buf
    let p = this.pos + len - 1
    let v = n
    do {
      buf[p--] = 48 + (v % 10)
      v = Math.floor(v / 10)
    } while (v > 0)
    this.pos += len
    this.crlf()
  }

  bulkUtf8 (s, start) {
    checkWellFormed(s)
    this.pos = start
    this.bulkHead(Buffer.byteLength(s, 'utf8'))
    this.pos += this.buf.utf8Write(s, this.pos)
    this.crlf()
  }

  /** One bulk string made of several parts (`user:` + id), without joining them first. */
  bulkParts (parts, count) {
    let len = 0
    for (let i = 0; i < count; i++) len += parts[i].length
    const start = this.pos
    this.bulkHead(len)
    const buf = this.buf
    let p = this.pos
    for (let k = 0; k < count; k++) {
      const s = parts[k]
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i)
        if (c > 127) return this.bulkUtf8(parts.slice(0, count).join(''), start)
        buf[p++] = c
      }
    }
    this.pos = p
    this.crlf()
  }

  // Spans: bytes [s, e) of an input buffer, copied without a string (a byte row's fields,
  // read/row.js).

  /** One span as a bulk string. */
  span (src, s, e) {
    this.bulkHead(e - s)
    this.copySpan(src, s, e)
    this.crlf()
  }

  /**
   * One bulk string of constant parts (Buffers) and spans of `src` (each null part takes
   * the next [s, e) pair of `spans`), like `user:{id}`. `src` is one Buffer, or an array of
   * them, one per span (a row whose fields lie in several buffers).
   */
  spanParts (parts, src, spans) {
    const many = Array.isArray(src)
    let len = 0
    for (let i = 0, k = 0; i < parts.length; i++) {
      const part = parts[i]
      if (part === null) {
        len += spans[k + 1] - spans[k]
        k += 2
      } else {
        len += part.length
      }
    }
    this.bulkHead(len)
    for (let i = 0, k = 0; i < parts.length; i++) {
      const part = parts[i]
      if (part === null) {
        this.copySpan(many ? src[k >> 1] : src, spans[k], spans[k + 1])
        k += 2
      } else {
        this.copySpan(part, 0, part.length)
      }
    }
    this.crlf()
  }

  /**
   * One bulk string: `around.before`, bytes [s, e) of `src`, `around.after` (Buffers: a key's
   * constant text around a Parquet row's value).
   */
  spanBetween (around, src, s, e) {
    const { before, after } = around
    this.bulkHead(before.length + e - s + after.length)
    const buf = this.buf
    let p = this.pos
    for (let i = 0; i < before.length; i++) buf[p++] = before[i]
    for (let i = s; i < e; i++) buf[p++] = src[i]
    for (let i = 0; i < after.length; i++) buf[p++] = after[i]
    this.pos = p
    this.crlf()
  }

  /** Copy a span here (room already ensured). */
  copySpan (src, s, e) {
    const buf = this.buf
    let p = this.pos
    if (e - s < 32) {
      for (let i = s; i < e; i++) buf[p++] = src[i]
    } else {
      src.copy(buf, p, s, e)
      p += e - s
    }
    this.pos = p
  }

  /** Everything written so far; the next write takes a buffer (a given-back one if any). */
  take () {
    const out = this.buf.subarray(0, this.pos)
    this.size = Math.max(64 * 1024, Math.min(this.buf.length, this.pos + (this.pos >> 3)))
    this.setBuf(EMPTY)
    this.pos = 0
    return out
  }

  /**
   * Give back a buffer from take() once nothing reads it any more (its batch is
   * acknowledged). Reusing a few buffers keeps RSS flat: a fresh ~300 KB allocation per
   * batch, freed later, fragments the malloc heap and RSS creeps up with the input size.
   */
  recycle (out) {
    recycle(this.free, out.buffer)
  }
}

/** A given-back buffer of at least n bytes, whole, taken out of `free`; null when none is. */
function takeFree (free, n) {
  for (let i = free.length - 1; i >= 0; i--) {
    if (free[i].length >= n) return free.splice(i, 1)[0]
  }
  return null
}

/** A buffer of exactly n bytes: in a given-back one large enough if any, else a new one. */
function reuse (free, n) {
  const given = takeFree(free, n)
  return given === null ? allocOutput(n) : given.subarray(0, n)
}

/**
 * Keep an ArrayBuffer a batch was written into for the next batches: up to MAX_FREE of
 * them, the largest (a small one, from the short batch at a chunk's end, is kept only
 * while there is room).
 */
function recycle (free, ab) {
  if (ab.byteLength === 0) return
  if (free.length < MAX_FREE) {
    free.push(Buffer.from(ab, 0, ab.byteLength))
    return
  }
  let min = 0
  for (let i = 1; i < free.length; i++) if (free[i].length < free[min].length) min = i
  if (free[min].length < ab.byteLength) free[min] = Buffer.from(ab, 0, ab.byteLength)
}

/**
 * A string with a lone UTF-16 surrogate (half a pair, as a JSON `\\ud800` escape or a JS
 * string can hold) has no UTF-8 form: Buffer would write U+FFFD in its place, silently.
 * On the hot path only values with a non-ASCII character are checked (bulkUtf8).
 */
function checkWellFormed (s) {
  if (!s.isWellFormed()) {
    throw new PipeloadError('PIPELOAD_RECORD_INVALID', `a value holds ${describeLoneSurrogate(s)}, which has no UTF-8 form (it would be stored as U+FFFD)`)
  }
}

/** A string's UTF-8 bytes, refusing a lone surrogate. */
function utf8Bytes (s) {
  checkWellFormed(s)
  return Buffer.from(s, 'utf8')
}

/** A string as the bytes of one RESP bulk string, for constants. */
function bulkBytes (s) {
  checkWellFormed(s)
  return Buffer.from(bulk(s))
}

module.exports = { ByteWriter, recycle, reuse, shareOutput, bulkBytes, utf8Bytes }
