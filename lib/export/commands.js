'use strict'

// RESP2 commands whose arguments are ASCII strings or Buffers (keys are bytes), written into
// one Buffer per batch: export's read commands, built for each batch of keys.

class CommandBuffer {
  constructor (size = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(size)
    this.at = 0
  }

  room (n) {
    if (this.at + n <= this.buf.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n))
    this.buf.copy(bigger, 0, 0, this.at)
    this.buf = bigger
  }

  ascii (s) {
    this.room(s.length)
    this.at += this.buf.latin1Write(s, this.at)
  }

  /** One command: each argument an ASCII string or a Buffer. */
  command (args) {
    this.ascii('*' + args.length + '\r\n')
    for (const a of args) {
      if (typeof a === 'string') {
        this.ascii('$' + a.length + '\r\n' + a + '\r\n')
      } else {
        this.ascii('$' + a.length + '\r\n')
        this.room(a.length + 2)
        this.at += a.copy(this.buf, this.at)
        this.ascii('\r\n')
      }
    }
  }

  take () {
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
