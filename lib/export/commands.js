'use strict'

// RESP2 commands whose arguments are ASCII strings or Buffers (keys are bytes), written into
// one Buffer per batch: export's read commands, built for each batch of keys.

class CommandBuffer {
  constructor (size = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(size)
    this.at = 0
    // ASCII text not written yet: a command's words are written in one go up to each key.
    this.text = ''
  }

  room (n) {
    if (this.at + n <= this.buf.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n))
    this.buf.copy(bigger, 0, 0, this.at)
    this.buf = bigger
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
    return this.buf.subarray(0, this.at)
  }
}

/** The bytes of a few commands. */
function encodeCommands (commands) {
  const w = new CommandBuffer(256)
  for (const c of commands) w.command(c)
  return w.take()
}

module.exports = { CommandBuffer, encodeCommands }
