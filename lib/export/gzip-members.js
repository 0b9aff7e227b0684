'use strict'

const zlib = require('node:zlib')
const { EventEmitter, once } = require('node:events')
const { setTimeout: sleep } = require('node:timers/promises')

// A gzipped export output with --checkpoint: a gzip file may be several members end to end
// (gunzip, zcat and Node's zlib read them as one stream). cut() ends the member being
// written and starts the next, so that the file's length then is a member boundary: a
// resume cuts the file back to it and appends members, and the file stays valid gzip.
// Written to like a stream by CountingOutput (./output.js): write(chunk) → false: wait for
// 'drain'; 'error'; end(). cut() is called only between two of its writes, once every byte
// written before is taken (CountingOutput orders it).

class GzipMembers extends EventEmitter {
  /** @param {import('node:fs').WriteStream} file where the members go, ended by end() */
  constructor (file) {
    super()
    this.file = file
    this.gz = this.member()
  }

  member () {
    const gz = zlib.createGzip()
    gz.on('data', d => {
      if (!this.file.write(d)) {
        gz.pause()
        this.file.once('drain', () => gz.resume())
      }
    })
    gz.on('drain', () => this.emit('drain'))
    gz.on('error', err => this.emit('error', err))
    return gz
  }

  write (chunk) {
    return this.gz.write(chunk)
  }

  /**
   * End this member and start the next; resolves once the file holds all of this one, with
   * the bytes this file stream has written then (the next member has nothing yet: the
   * caller writes again only after).
   */
  async cut () {
    const gz = this.gz
    this.gz = this.member()
    gz.end()
    await once(gz, 'end')
    while (this.file.writableLength > 0) await sleep(2)
    return this.file.bytesWritten
  }

  /** The last member, then the file: resolves once the file is written and closed. */
  async end () {
    this.gz.end()
    await once(this.gz, 'end')
    this.file.end()
    await once(this.file, 'close')
  }

  destroy () {
    this.gz.destroy()
    this.file.destroy()
  }
}

module.exports = { GzipMembers }
