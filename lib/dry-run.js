'use strict'

const { once } = require('node:events')
const { quoteArg } = require('./resp')

// The sink for --dry-run: the same push/flush/finish contract as Pipe, but the batches go
// to a stream (stdout) instead of a server. `resp` is byte-exact input for
// `redis-cli --pipe`; `text` is one command per line, quoted as redis-cli reads it.

class DryRunSink {
  constructor ({ output, batchSize, maxBatchBytes }) {
    this.output = output
    this.batchSize = batchSize
    this.maxBatchBytes = maxBatchBytes
    this.text = ''
    this.cmds = 0
    this.full = false
    this.stats = { batches: 0, commands: 0, acked: 0, ackedRecords: 0, errorReplies: 0, failedRecords: 0 }
    this.records = 0
    this.rtt = null
  }

  push (text, cmds) {
    this.text += text
    this.cmds += cmds
    this.records++
    if (this.cmds >= this.batchSize || this.text.length >= this.maxBatchBytes) this.full = true
  }

  async flush () {
    this.full = false
    if (this.cmds === 0) return
    const text = this.text
    this.stats.batches++
    this.stats.commands += this.cmds
    this.stats.acked += this.cmds
    this.stats.ackedRecords += this.records
    this.text = ''
    this.cmds = 0
    this.records = 0
    if (!this.output.write(text)) await once(this.output, 'drain')
  }

  async finish () {
    await this.flush()
  }

  close () {}
}

/** `--dry-run text` lines for one record's commands. */
function textLines (commands) {
  let s = ''
  for (const args of commands) s += args.map(quoteArg).join(' ') + '\n'
  return s
}

module.exports = { DryRunSink, textLines }
