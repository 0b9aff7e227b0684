'use strict'

// A tiny RESP server whose replies a test writes: `reply(args, conn)` gets each command (an
// array of strings) and the connection ({ id, commands, socket }, id counting from 1) and
// returns the raw reply bytes to send (a string or Buffer), or null to send nothing. For
// what a real server will not do on demand: echo a password in an error, send a malformed
// reply, answer a command twice.

const net = require('node:net')

/** Parse as many whole RESP arrays of bulk strings as `buf` holds: { commands, rest }. */
function parseCommands (buf) {
  const commands = []
  let pos = 0
  for (;;) {
    if (pos >= buf.length) break
    if (buf[pos] !== 0x2a) throw new Error(`not a RESP array at byte ${pos}: ${JSON.stringify(buf.toString('latin1', pos, pos + 20))}`)
    const eol = buf.indexOf('\r\n', pos)
    if (eol < 0) break
    const n = Number(buf.toString('latin1', pos + 1, eol))
    let p = eol + 2
    const args = []
    for (let i = 0; i < n; i++) {
      const e = buf.indexOf('\r\n', p)
      if (e < 0) return { commands, rest: buf.subarray(pos) }
      const len = Number(buf.toString('latin1', p + 1, e))
      if (e + 2 + len + 2 > buf.length) return { commands, rest: buf.subarray(pos) }
      args.push(buf.toString('utf8', e + 2, e + 2 + len))
      p = e + 2 + len + 2
    }
    if (args.length < n) break
    commands.push(args)
    pos = p
  }
  return { commands, rest: buf.subarray(pos) }
}

/** Start on a free loopback port; resolves with { port, url, connections, close() }. */
function scriptedServer (reply) {
  const sockets = new Set()
  const connections = []
  const server = net.createServer(socket => {
    const conn = { id: connections.length + 1, commands: [], socket }
    connections.push(conn)
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let pending = Buffer.alloc(0)
    socket.on('data', d => {
      pending = Buffer.concat([pending, d])
      const { commands, rest } = parseCommands(pending)
      pending = Buffer.from(rest)
      for (const args of commands) {
        conn.commands.push(args)
        const out = reply(args, conn)
        if (out !== null && out !== undefined && !socket.destroyed) socket.write(out)
      }
    })
  })
  return new Promise((resolve, reject) => {
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      resolve({
        port,
        host: '127.0.0.1',
        url: `redis://127.0.0.1:${port}`,
        connections,
        close: () => new Promise(resolve => {
          for (const s of sockets) s.destroy()
          server.close(() => resolve())
        })
      })
    })
  })
}

/** The usual answers for the commands pipeload sends besides the data: null for others. */
function usual (args) {
  const cmd = args[0].toUpperCase()
  if (cmd === 'AUTH' || cmd === 'SELECT' || cmd === 'PING') return cmd === 'PING' ? '+PONG\r\n' : '+OK\r\n'
  if (cmd === 'CLIENT') return '+OK\r\n'
  if (cmd === 'INFO') { const body = '# Cluster\r\ncluster_enabled:0\r\n'; return `$${body.length}\r\n${body}\r\n` }
  return null
}

module.exports = { scriptedServer, parseCommands, usual }
