'use strict'

// What bench() left on the server, seen from the test rather than through bench's own
// `correct` flag. bench deletes each row's keys (UNLINK through its control client)
// as soon as the row ends, so the test hands bench a control client of its own (the
// `redis` option) whose unlink() first reads every key it is asked to delete, over a
// separate connection: a snapshot of the server's keyspace at that moment.

const BENCH_KEY = /^pipeload:bench:([0-9a-f]{12}):(\d+):(.*)$/

/** The value of `key` as plain data: a string, a hash object, a sorted set list, … */
async function valueOf (client, key) {
  const type = await client.type(key)
  switch (type) {
    case 'string': return await client.get(key)
    case 'hash': return await client.hgetall(key)
    case 'set': return (await client.smembers(key)).sort()
    case 'list': return await client.lrange(key, 0, -1)
    case 'none': return undefined
    default: return { type }
  }
}

/**
 * `srv` is a started server (test/helpers/redis-server.js). Returns { redis, rows, keys }:
 * pass `redis` to bench(); rows() gives, per run prefix and row number, the keys bench
 * deleted (without the row prefix) and their values just before; keys() every key bench
 * deleted, in full.
 */
function benchSpy (srv, clientOptions = {}) {
  const redis = srv.client(clientOptions)
  const reader = srv.client(clientOptions)
  const deleted = new Map() // full key -> value just before UNLINK
  const unlink = redis.unlink.bind(redis)
  redis.unlink = async (...keys) => {
    for (const k of keys.flat()) deleted.set(String(k), await valueOf(reader, k))
    return unlink(...keys)
  }
  return {
    redis,
    keys: () => [...deleted.keys()],
    /** { runs: [run prefix ids], rows: Map(row number -> { key without prefix: value }), other: [keys not bench's] } */
    rows () {
      const runs = new Set()
      const rows = new Map()
      const other = []
      for (const [key, value] of deleted) {
        const m = BENCH_KEY.exec(key)
        if (!m) { other.push(key); continue }
        runs.add(m[1])
        const n = Number(m[2])
        if (!rows.has(n)) rows.set(n, {})
        rows.get(n)[m[3]] = value
      }
      return { runs: [...runs], rows, other }
    }
  }
}

module.exports = { benchSpy, valueOf }

/**
 * Every command the server executes from now on, via MONITOR on its own connection:
 * { commands: [[name, ...args]], flush(), stop() }. flush() resolves once every command
 * executed before it was called has been seen (it sends an ECHO marker and waits for it).
 */
async function monitorCommands (srv) {
  const client = srv.client()
  const monitor = await client.monitor()
  const commands = []
  const waiting = new Map()
  monitor.on('monitor', (time, args) => {
    if (String(args[0]).toUpperCase() === 'ECHO' && waiting.has(args[1])) {
      waiting.get(args[1])()
      waiting.delete(args[1])
      return
    }
    commands.push(args.map(String))
  })
  let n = 0
  return {
    commands,
    async flush () {
      const marker = `bench-spy-flush-${process.pid}-${++n}`
      const seen = new Promise(resolve => waiting.set(marker, resolve))
      await client.echo(marker)
      await seen
    },
    stop () { monitor.disconnect(); client.disconnect() }
  }
}

module.exports.monitorCommands = monitorCommands
