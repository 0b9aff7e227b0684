'use strict'

// RESP2 commands whose arguments are ASCII strings or Buffers (keys are bytes), written into
// one Buffer per batch: export's read commands, built for each batch of keys.

// A batch's commands are written into the rest of a shared slab, and take() keeps the bytes
// written: a Buffer per batch of its own size would be garbage of 64 KiB a batch (its bytes
// are held by the socket until written, so the slab is not reused: a full one is left to the
// GC and a new one taken).
const SLAB = 1024 * 1024
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
    // ASCII text not written yet: a command's words are written in one go up to each key.
    this.text = ''
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

  flushText () {
    const s = this.text
    this.text = ''
    this.room(s.length)
    this.at += this.buf.latin1Write(s, this.at)
  }

  /** One command: each argument an ASCII string or a Buffer. */
  command (args) {
    let t = this.text + '*' + args.length + '\r\n'
    for (let i = 0; i < args.length; i++) {
      const a = args[i]
      if (typeof a === 'string') {
        t += '$' + a.length + '\r\n' + a + '\r\n'
      } else {
        this.text = t + '$' + a.length + '\r\n'
        this.flushText()
        this.room(a.length)
        this.at += a.copy(this.buf, this.at)
        t = '\r\n'
      }
    }
    this.text = t
  }

  take () {
    this.flushText()
    if (open === this) {
      open = null
      slabAt = (this.at + 7) & ~7
    }
    return this.buf.subarray(this.start, this.at)
  }
}

/** The bytes of a few commands. */
function encodeCommands (commands) {
  const w = new CommandBuffer(256)
  for (const c of commands) w.command(c)
  return w.take()
}

module.exports = { CommandBuffer, encodeCommands }
