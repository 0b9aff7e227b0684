'use strict'

// Preloaded into the loader by bench/cluster.js (`node -r bench/main-thread-cpu.js …`): at
// exit, the CPU seconds of the process's main thread, one line on stderr. With parse
// workers the main thread reads, cuts, routes and sends on its own; when its CPU seconds
// come close to the wall time, it (not the parsing, not the servers) is what limits the
// load. Linux only (/proc/thread-self); elsewhere it prints nothing.

const fs = require('node:fs')
const { isMainThread } = require('node:worker_threads')

const CLK_TCK = 100 // getconf CLK_TCK on Linux
const PREFIX = 'pipeload-bench main-thread-cpu-s='

function mainThreadCpu () {
  const stat = fs.readFileSync('/proc/thread-self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK // utime, stime
}

if (isMainThread) {
  process.on('exit', () => {
    try {
      process.stderr.write(`${PREFIX}${mainThreadCpu().toFixed(2)}\n`)
    } catch { /* not Linux */ }
  })
}

/** The main thread's CPU seconds from a loader's stderr, or null. */
function parseMainThreadCpu (stderr) {
  const line = stderr.split('\n').find(l => l.startsWith(PREFIX))
  return line ? Number(line.slice(PREFIX.length)) : null
}

module.exports = { parseMainThreadCpu }
