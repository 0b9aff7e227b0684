'use strict'

// RESP2 commands whose arguments are ASCII strings or Buffers (keys are bytes), written into
// one Buffer per batch: export's read commands, built for each batch of keys.

// A batch's commands are written into the rest of a shared slab, and take() keeps the bytes
// written: a Buffer per batch of its own size would be garbage of 64 KiB a batch (its bytes
// are held by the socket until written, so the slab is not reused: a full one is left to the
// GC and a new one taken).
const SLAB = 1024 * 1024
const STAR = 0x2a
const DOLLAR = 0x24
const CR = 0x0d
const LF = 0x0a
let slab = Buffer.allocUnsafe(0)
let slabAt = 0
let open = null // the CommandBuffer writing into the slab's rest

class CommandBuffer {
  /** `size`: a Buffer of its own, of that size to start with; else the slab's rest. */
  constructor (size) {
    if (size === undefined && open === null) {
      open = this
      this.buf = slab
      this.start = slabAt
    } else {
      this.buf = Buffer.allocUnsafe(size ?? 256)
      this.start = 0
    }
    this.at = this.start
  }

  room (n) {
    if (this.at + n <= this.buf.length) return
    const used = this.at - this.start
    const bigger = Buffer.allocUnsafe(Math.max(open === this ? SLAB : this.buf.length * 2, 2 * (used + n)))
    this.buf.copy(bigger, 0, this.start, this.at)
    this.buf = bigger
    this.start = 0
    this.at = used
    if (open === this) slab = bigger
  }

  /** One command: each argument an ASCII string or a Buffer. */
  command (args) {
    let n = 16
    for (let i = 0; i < args.length; i++) n += args[i].length + 16
    this.room(n)
    const buf = this.buf
    let at = this.at
    buf[at++] = STAR
    at = this.number(args.length, at)
    for (let i = 0; i < args.length; i++) {
      const a = args[i]
      buf[at++] = DOLLAR
      at = this.number(a.length, at)
      if (typeof a === 'string') {
        for (let j = 0; j < a.length; j++) buf[at++] = a.charCodeAt(j)
      } else if (a.length <= 64) {
        for (let j = 0; j < a.length; j++) buf[at++] = a[j]
      } else {
        at += a.copy(buf, at)
      }
      buf[at++] = CR
      buf[at++] = LF
    }
    this.at = at
  }

  /** A command of constant words around one key (keyedCommand()): the same bytes as command(). */
  keyed (c, key) {
    const { before, after } = c
    this.room(before.length + key.length + after.length + 16)
    const buf = this.buf
    let at = this.at
    for (let i = 0; i < before.length; i++) buf[at++] = before[i]
    buf[at++] = DOLLAR
    at = this.number(key.length, at)
    if (key.length <= 64) {
      for (let i = 0; i < key.length; i++) buf[at++] = key[i]
    } else {
      at += key.copy(buf, at)
    }
    buf[at++] = CR
    buf[at++] = LF
    for (let i = 0; i < after.length; i++) buf[at++] = after[i]
    this.at = at
  }

  /** A length's digits and CRLF at `at`; where they end. */
  number (n, at) {
    const buf = this.buf
    if (n < 10) {
      buf[at++] = 0x30 + n
    } else {
      const s = String(n)
      for (let j = 0; j < s.length; j++) buf[at++] = s.charCodeAt(j)
    }
    buf[at++] = CR
    buf[at++] = LF
    return at
  }

  take () {
    if (open === this) {
      open = null
      slabAt = (this.at + 7) & ~7
    }
    return this.buf.subarray(this.start, this.at)
  }
}

/**
 * A command sent for many keys, `args` ASCII strings with the key at index 1 (any value
 * there): its bytes before the key's and after, for CommandBuffer.keyed().
 */
function keyedCommand (args) {
  const bulk = a => '$' + a.length + '\r\n' + a + '\r\n'
  return {
    before: Buffer.from('*' + args.length + '\r\n' + bulk(args[0]), 'latin1'),
    after: Buffer.from(args.slice(2).map(bulk).join(''), 'latin1')
  }
}

/** The bytes of a few commands. */
function encodeCommands (commands) {
  const w = new CommandBuffer(256)
  for (const c of commands) w.command(c)
  return w.take()
}

module.exports = { CommandBuffer, encodeCommands, keyedCommand }
