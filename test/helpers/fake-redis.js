'use strict'

// A fake Redis server for the cases a real one will not produce on demand: a server that
// accepts connections and never answers, answers a few commands and then goes silent, or
// starts a bulk reply that never ends. `answer(command, conn)` returns the RESP text to
// write back, or null for silence; the server records every connection and command so a
// test can wait for a condition ("the client sent AUTH") instead of sleeping.

const net = require('node:net')
const { EventEmitter } = require('node:events')

const HOST = '127.0.0.1'

/** Commands (arrays of strings) parsed from RESP arrays of bulk strings; the rest is kept. */
function parseCommands (state, chunk) {
  state.buf = Buffer.concat([state.buf, chunk])
  const out = []
  for (;;) {
    const text = state.buf.toString('latin1')
    const m = /^\*(\d+)\r\n/.exec(text)
    if (!m) break
    let p = m[0].length
    const args = []
    for (let i = 0; i < Number(m[1]); i++) {
      const h = /^\$(\d+)\r\n/.exec(text.slice(p))
      if (!h || text.length < p + h[0].length + Number(h[1]) + 2) return out
      p += h[0].length
      args.push(state.buf.subarray(p, p + Number(h[1])).toString('utf8'))
      p += Number(h[1]) + 2
    }
    out.push(args)
    state.buf = state.buf.subarray(p)
  }
  return out
}

/** Replies of a server that works: +OK, INFO as a non-cluster node, CLIENT ID 7, an empty SCAN. */
function ordinaryReply (command) {
  const name = command[0].toUpperCase()
  if (name === 'INFO') return bulk('# Cluster\r\ncluster_enabled:0\r\n')
  if (name === 'CLIENT' && String(command[1]).toUpperCase() === 'ID') return ':7\r\n'
  if (name === 'PING') return '+PONG\r\n'
  if (name === 'SCAN') return '*2\r\n$1\r\n0\r\n*0\r\n' // nothing left to clean up
  if (name === 'UNLINK' || name === 'DEL') return ':0\r\n'
  return '+OK\r\n'
}

function bulk (text) {
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`
}

/**
 * Start a fake server. `answer(command, conn)`: the reply (RESP text) or null; conn is
 * { index, commands, port } (index: the connection's number, from 0; port: the fake's own).
 */
async function startFakeRedis (answer) {
  const events = new EventEmitter()
  const state = { connections: 0, commands: [] } // commands: { conn, args }
  const sockets = new Set()
  const server = net.createServer(socket => {
    const conn = { index: state.connections++, commands: [], port: socket.localPort }
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    const parse = { buf: Buffer.alloc(0) }
    socket.on('data', chunk => {
      for (const args of parseCommands(parse, chunk)) {
        conn.commands.push(args)
        state.commands.push({ conn: conn.index, args })
        const reply = answer(args, conn)
        if (reply !== null && reply !== undefined) socket.write(reply)
      }
      events.emit('change')
    })
    events.emit('change')
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, HOST, resolve)
  })
  return {
    host: HOST,
    port: server.address().port,
    state,
    /** Resolves once `condition(state)` holds (checked on every connection and command). */
    until (condition) {
      return new Promise(resolve => {
        const check = () => {
          if (!condition(state)) return
          events.off('change', check)
          resolve()
        }
        events.on('change', check)
        check()
      })
    },
    sent (name) {
      return state.commands.some(c => c.args.join(' ').toUpperCase().startsWith(name.toUpperCase()))
    },
    close () {
      for (const s of sockets) s.destroy()
      return new Promise(resolve => server.close(() => resolve()))
    }
  }
}

module.exports = { startFakeRedis, ordinaryReply, bulk }
