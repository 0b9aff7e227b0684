'use strict'

// `redis-cli --pipe` (or valkey-cli's) as a benchmark tool: the server's own bulk loader,
// which the pipeload rows are compared with. Used by bench/load.js (on the RESP that
// bench/datasets.js encodes) and bench/cluster.js --io-threads (on the RESP of pipeload's
// own `--dry-run resp`, so both send the same commands whatever --pipeload-args say).

const fs = require('node:fs')
const { spawn } = require('node:child_process')

/**
 * A run of `<cli> -p <port> --pipe < file`: { cmd, args, stdinFile, check(stdout) }, check
 * giving error text (or null) from the cli's own "errors: N, replies: N" line.
 */
function redisCliPipe ({ cli = 'redis-cli', port, file, rows }) {
  return {
    cmd: cli,
    args: ['-p', String(port), '--pipe'],
    stdinFile: file,
    check: out => {
      const m = /errors: (\d+), replies: (\d+)/.exec(out)
      if (!m) return 'no "errors: N, replies: N" line'
      return m[1] === '0' && Number(m[2]) === rows ? null : `${cli}: ${m[0]}`
    }
  }
}

/**
 * Write the commands `pipeload import <args> --dry-run resp` prints into `out`; resolves
 * once written, rejects with pipeload's stderr when it fails.
 */
function writeDryRunResp ({ node = process.execPath, cli, args, out }) {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(out, 'w')
    const child = spawn(node, [cli, 'import', ...args, '--dry-run', 'resp', '-q'], { stdio: ['ignore', fd, 'pipe'] })
    fs.closeSync(fd)
    let stderr = ''
    child.stderr.on('data', d => { stderr += d })
    child.on('error', reject)
    child.on('close', code => code === 0 ? resolve(out) : reject(new Error(`pipeload --dry-run resp exited with ${code}: ${stderr.trim().slice(0, 500)}`)))
  })
}

module.exports = { redisCliPipe, writeDryRunResp }
