'use strict'

// RESP as the protocol spec writes a command: an array of bulk strings, each length in
// bytes. Written here from the spec and sharing no code with lib/ (lib/encode/resp.js,
// lib/encode/writer.js), so tests can check the bytes lib writes against something lib did not
// compute.

const CRLF = Buffer.from('\r\n')

/** One command (an array of strings or Buffers) as RESP bytes. */
function respCommand (args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)]
  for (const a of args) {
    const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a), 'utf8')
    parts.push(Buffer.from(`$${b.length}\r\n`), b, CRLF)
  }
  return Buffer.concat(parts)
}

/** Several commands back to back. */
function respCommands (commands) {
  return Buffer.concat(commands.map(respCommand))
}

module.exports = { respCommand, respCommands }
