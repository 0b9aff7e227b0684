'use strict'

// Issue 35's "a connection that dies while the others go on", and "resume after SIGKILL":
// the data connections a load opens (named pipeload-data, lib/send/connection.js) as a
// server's CLIENT LIST shows them, one of them killed mid-load by the test's own client, and
// a pipeload process SIGKILLed right after a checkpoint (./kill-after-checkpoint.js).

const path = require('node:path')
const { spawn } = require('node:child_process')
const { BIN, BASE_ENV } = require('./run-cli')
const { scaledMs, waitFor } = require('./wait')

/** The data connections a CLIENT LIST reply shows, by id: [{ id, blocked }] (blocked: flag b). */
function dataConnections (list) {
  return String(list).split('\n').map(line => Object.fromEntries(line.trim().split(' ').map(f => f.split('='))))
    .filter(c => c.name === 'pipeload-data')
    .map(c => ({ id: c.id, blocked: c.flags.includes('b') }))
    .sort((x, y) => Number(x.id) - Number(y.id))
}

/**
 * CLIENT KILL (by `admin`, a client of the server the load writes to) of the second of the `n`
 * data connections it sees, while that one has commands in flight: under CLIENT PAUSE WRITE
 * the server reads them and runs none (the connection shows flag b), so it dies with commands
 * the load must send again, every time. Resolves with the id killed.
 */
async function killData (admin, n) {
  await admin.call('CLIENT', 'PAUSE', String(scaledMs(30_000)), 'WRITE')
  try {
    const victim = await waitFor(`data connection 2 of ${n} to have commands waiting`, async () => {
      const conns = dataConnections(await admin.call('CLIENT', 'LIST'))
      if (conns.length !== n) throw new Error(`${conns.length} data connections, not ${n}`)
      return conns[1].blocked && conns[1]
    }, scaledMs(20_000))
    await admin.call('CLIENT', 'KILL', 'ID', victim.id)
    return victim.id
  } finally {
    await admin.call('CLIENT', 'UNPAUSE')
  }
}

/**
 * The items of `items` (an array), `during()` started halfway through and awaited a quarter
 * later: it happens while the load runs (and the load waits for it to end).
 */
async function * paced (items, during) {
  const half = items.length >> 1
  let job = null
  for (let i = 0; i < items.length; i++) {
    if (i >= half && !job) job = during()
    if (i >= half + (half >> 1)) await job
    yield items[i]
  }
  await job
}

/** Wait until none of `clients` (one per server) shows a data connection: nothing a killed load wrote runs later. */
async function dataConnectionsClosed (clients) {
  await waitFor('the killed run\'s data connections to close', async () => {
    for (const c of clients) if (dataConnections(await c.call('CLIENT', 'LIST')).length) return false
    return true
  }, scaledMs(20_000))
}

/** SIGKILL of pipeload `args` (an import with --checkpoint `cp`) right after a checkpoint past `after` records: { code, signal }. */
function killedAfterCheckpoint (args, cp, after) {
  return new Promise(resolve => {
    const env = { ...BASE_ENV, KILL_CHECKPOINT: cp, KILL_AFTER_RECORDS: String(after) }
    const child = spawn(process.execPath, ['--require', path.join(__dirname, 'kill-after-checkpoint.js'), BIN, ...args], { env, stdio: 'ignore' })
    child.on('close', (code, signal) => resolve({ code, signal }))
  })
}

module.exports = { dataConnections, killData, paced, dataConnectionsClosed, killedAfterCheckpoint }
