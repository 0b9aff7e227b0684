'use strict'

const { outputError } = require('../send/dry-run')

// The one place the export writers hand bytes to their output stream, so that backpressure
// is honoured the same way by each: write() returns undefined while the stream takes more,
// or a Promise that settles on 'drain' (or rejects when the stream fails instead, as a
// failed stream emits 'error' and never 'drain').

class Output {
  /** @param {import('node:stream').Writable} out  @param {string} name for messages */
  constructor (out, name = 'the export output') {
    this.out = out
    this.name = name
    this.fatal = null
    this.onError = err => { if (this.fatal === null) this.fatal = outputError(err, name) }
    out.on('error', this.onError)
  }

  /** Writes `chunk`; undefined, or a Promise to await before the next write. */
  write (chunk) {
    if (this.fatal) throw this.fatal
    if (this.out.destroyed) return this.drained()
    let more
    try {
      more = this.out.write(chunk)
    } catch (err) { // a stream whose write() throws fails as one that emits 'error'
      this.onError(err)
      throw this.fatal
    }
    return more ? undefined : this.drained()
  }

  drained () {
    // A stream destroyed without an error emits neither 'drain' nor 'error' again.
    if (this.out.destroyed && this.fatal === null) this.fatal = outputError(Object.assign(new Error('destroyed'), { code: 'EPIPE' }), this.name)
    return new Promise((resolve, reject) => {
      const done = () => {
        this.out.off('drain', done)
        this.out.off('error', done)
        this.out.off('close', done)
        if (this.fatal) reject(this.fatal)
        else resolve()
      }
      if (this.fatal) return done()
      this.out.on('drain', done)
      this.out.on('error', done) // after this.onError, registered first: fatal is set
      this.out.on('close', done)
    })
  }

  /** Resolves once everything written is handed on (the callback of an empty write comes after theirs). */
  async flush () {
    if (this.fatal === null) {
      await new Promise(resolve => {
        try {
          this.out.write('', err => { if (err) this.onError(err); resolve() })
        } catch (err) {
          this.onError(err)
          resolve()
        }
      })
    }
    this.out.off('error', this.onError)
    if (this.fatal) throw this.fatal
  }
}

module.exports = { Output }
