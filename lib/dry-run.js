'use strict'

const { once } = require('node:events')
const { quoteArg } = require('./resp')

// The sink for --dry-run: the same send/finish contract as Pipe, but the batches go to a
// stream (stdout) instead of a server. `resp` is byte-exact input for `redis-cli --pipe`;
// `text` is one command per line, quoted as redis-cli reads it.

class DryRunSink {
  constructor ({ output }) {
    this.output = output
    this.stats = { batches: 0, commands: 0, acked: 0, ackedRecords: 0, errorReplies: 0, failedRecords: 0 }
    this.rtt = null
  }

  async send (encoded) {
    // Records that mapped to no commands (map() returned []) are done: nothing to send.
    this.stats.ackedRecords += encoded.ends.length
    if (encoded.cmds === 0) return
    this.stats.batches++
    this.stats.commands += encoded.cmds
    this.stats.acked += encoded.cmds
    if (!this.output.write(encoded.buf)) await once(this.output, 'drain')
  }

  async finish () {}
}

/** `--dry-run text` lines for one record's commands. */
function textLines (commands) {
  let s = ''
  for (const args of commands) s += args.map(quoteArg).join(' ') + '\n'
  return s
}

module.exports = { DryRunSink, textLines }
