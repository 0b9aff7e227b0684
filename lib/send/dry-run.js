'use strict'

const fs = require('node:fs')
const net = require('node:net')
const { PipeloadError, fsReason } = require('../errors')

// The sink for --dry-run: the same send/finish contract as Pipe, but the batches go to a
// stream (stdout) instead of a server. `resp` is byte-exact input for `redis-cli --pipe`;
// `text` is one command per line, quoted as redis-cli reads it.

/**
 * A failed write to an output stream as a PipeloadError: a closed pipe (EPIPE, `| head`)
 * is PIPELOAD_OUTPUT_CLOSED, anything else (a full disk) PIPELOAD_OUTPUT_FAILED.
 */
function outputError (err, name) {
  if (err instanceof PipeloadError) return err
  if (err && err.code === 'EPIPE') return new PipeloadError('PIPELOAD_OUTPUT_CLOSED', `${name} was closed`, { output: name, cause: err })
  return new PipeloadError('PIPELOAD_OUTPUT_FAILED', `cannot write to ${name}: ${fsReason(err, name)}`, { output: name, cause: err })
}

/**
 * Whether a stream is done with a buffer once its write callback ran: a file, a socket, a
 * pipe or stdout hand the bytes to the system by then. Any other stream (a PassThrough
 * given to load()) may keep the very buffer, which must then not be written into again.
 */
function writesOut (output) {
  return output === process.stdout || output instanceof fs.WriteStream || output instanceof net.Socket
}

class DryRunSink {
  /** @param {{ output, name?, onAck?: (batch) => void }} o onAck: each batch once written (its records are done) */
  constructor ({ output, name = 'the dry-run output', onAck = () => {} }) {
    this.output = output
    this.name = name
    this.onAck = onAck
    this.reuse = writesOut(output) // a batch's memory may be reused once written
    this.stats = { batches: 0, commands: 0, acked: 0, ackedRecords: 0, errorReplies: 0, failedRecords: 0 }
    this.rtt = null
    // A stream that failed emits 'error' and never 'drain': both end the wait.
    this.fatal = null
    this.waiting = null
    this.onError = err => this.failed(err)
    output.on?.('error', this.onError)
  }

  failed (err) {
    if (this.fatal === null) this.fatal = outputError(err, this.name)
    this.resume()
  }

  resume () {
    const w = this.waiting
    this.waiting = null
    if (w) w()
  }

  async send (encoded) {
    if (this.fatal) throw this.fatal
    // Records that mapped to no commands (map() returned []) are done: nothing to send.
    this.stats.ackedRecords += encoded.ends.length
    encoded.failed = 0 // no replies: nothing fails after encoding
    if (encoded.cmds === 0) return this.onAck(encoded)
    this.stats.batches++
    this.stats.commands += encoded.cmds
    this.stats.acked += encoded.cmds
    let more
    try {
      more = this.output.write(encoded.buf, err => {
        if (err) this.failed(err)
        else if (this.reuse) encoded.release?.() // written out: its memory may be reused
      })
    } catch (err) { // a caller's stream whose write() throws fails as one that emits 'error'
      this.failed(err)
    }
    if (!more && this.fatal === null) {
      await new Promise(resolve => {
        this.waiting = resolve
        this.output.once('drain', () => this.resume())
      })
    }
    if (this.fatal) throw this.fatal
    this.onAck(encoded)
  }

  /** Resolves once every batch is written out (the callback of an empty write comes after theirs). */
  async finish () {
    try {
      if (this.fatal === null) {
        await new Promise(resolve => {
          try {
            this.output.write('', err => { if (err) this.failed(err); resolve() })
          } catch (err) {
            this.failed(err)
            resolve()
          }
        })
      }
      if (this.fatal) throw this.fatal
    } finally {
      this.output.off?.('error', this.onError)
    }
  }
}

module.exports = { DryRunSink, outputError }
