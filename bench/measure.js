'use strict'

// Measuring one run: the child under GNU time (wall, user+sys CPU, peak RSS), the
// server's CPU time from /proc, and the server's per-client reply memory from CLIENT LIST.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const TIME_FORMAT = '%e %U %S %M'
const POLL_MS = 20
const CLK_TCK = 100 // getconf CLK_TCK on Linux

/**
 * Run `cmd args` under /usr/bin/time with stdin from `stdinFile` (or nothing).
 * Resolves { code, stdout, stderr, wall, cpu, rssMB }.
 */
function runTimed (cmd, args, { stdinFile } = {}) {
  const timeFile = path.join(os.tmpdir(), `pipeload-bench-time-${process.pid}-${Date.now()}`)
  const stdin = stdinFile ? fs.openSync(stdinFile, 'r') : 'ignore'
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', TIME_FORMAT, '-o', timeFile, cmd, ...args],
      { stdio: [stdin, 'pipe', 'pipe'] })
    if (typeof stdin === 'number') fs.closeSync(stdin)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', d => { stdout += d })
    child.stderr.on('data', d => { stderr += d })
    child.on('error', reject)
    child.on('close', code => {
      let line = ''
      try { line = fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop() } catch { /* missing */ }
      fs.rmSync(timeFile, { force: true })
      const [wall, user, sys, rssKB] = line.split(' ').map(Number)
      if (!Number.isFinite(wall)) return reject(new Error(`no timing from /usr/bin/time for ${cmd}: ${line}\n${stderr}`))
      resolve({ code, stdout, stderr, wall, cpu: user + sys, rssMB: rssKB / 1024 })
    })
  })
}

/** CPU seconds (user+sys) a process has used so far, from /proc/<pid>/stat. */
function procCpu (pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK // utime, stime
}

/** Parse CLIENT LIST into [{ id, omem, totMem }]. */
function parseClientList (text) {
  return text.trim().split('\n').filter(Boolean).map(line => {
    const f = Object.fromEntries(line.trim().split(' ').map(kv => {
      const i = kv.indexOf('=')
      return [kv.slice(0, i), kv.slice(i + 1)]
    }))
    return { id: f.id, omem: Number(f.omem), totMem: Number(f['tot-mem']) }
  })
}

/**
 * Poll CLIENT LIST every ~20 ms on `poller` (an ioredis client) until stop();
 * stop() resolves with the max omem and tot-mem (bytes) seen on any other client.
 */
async function sampleServerMemory (poller) {
  const selfId = String(await poller.client('ID'))
  let running = true
  const peak = { omem: 0, totMem: 0, samples: 0 }
  const loop = (async () => {
    while (running) {
      const clients = parseClientList(await poller.call('CLIENT', 'LIST'))
      for (const c of clients) {
        if (c.id === selfId) continue
        if (c.omem > peak.omem) peak.omem = c.omem
        if (c.totMem > peak.totMem) peak.totMem = c.totMem
      }
      peak.samples++
      await new Promise(resolve => setTimeout(resolve, POLL_MS))
    }
  })()
  return {
    async stop () {
      running = false
      await loop
      return peak
    }
  }
}

/** A `--name N` flag's value as a positive integer, or a clear error. */
function positiveIntFlag (name, value) {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${value}`)
  return n
}

/** The median of the numbers given (nulls left out; null when none): the mean of the middle two of an even count. */
function median (xs) {
  const v = xs.filter(x => x !== null).sort((a, b) => a - b)
  if (v.length === 0) return null
  const m = v.length >> 1
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2
}

/** The closing line of a benchmark's table: the machine, Node, the server, the load average when it began. */
function machineLine (redisVersion, loadavg) {
  return `machine: ${os.cpus()[0].model.trim()}, ${os.availableParallelism()} cores, node ${process.version}, ` +
    `redis-server ${redisVersion}, load average at start ${loadavg.map(x => x.toFixed(2)).join(' ')}`
}

/**
 * Print a benchmark's report: the table's text and its errors on stdout, or with `json`
 * (the results as an object) that on stdout and the text on stderr. Errors set exit code 1.
 */
function printReport (text, errors, json = null) {
  const lines = text + '\n' + errors.map(e => e + '\n').join('')
  if (json !== null) {
    process.stdout.write(JSON.stringify(json, null, 2) + '\n')
    process.stderr.write(lines)
  } else {
    process.stdout.write(lines)
  }
  if (errors.length) process.exitCode = 1
}

module.exports = { runTimed, procCpu, sampleServerMemory, parseClientList, positiveIntFlag, median, machineLine, printReport }
