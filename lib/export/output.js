'use strict'

const fs = require('node:fs')
const zlib = require('node:zlib')
const { Writable, pipeline } = require('node:stream')
const { finished } = require('node:stream/promises')
const { outputError } = require('../send/dry-run')
const { GzipMembers } = require('./gzip-members')

// Where an export writes: a file (gzipped when its name ends in .gz) or a Writable of the
// caller's (stdout). The writer writes into a CountingOutput, which counts the bytes and
// passes them on with backpressure; a failed destination fails the export (`failure`).

const HIGH_WATER_MARK = 64 * 1024
// A writer's pieces: 64 KiB to a caller's Writable; to a file, fewer, larger writes (each
// write call to a file costs the event loop a hand-over to a thread: 1M hashes of 5 fields
// are 105 MB, 1,600 writes of 64 KiB).
const PIECE = 64 * 1024
const FILE_PIECE = 256 * 1024
const FILE_HIGH_WATER_MARK = 1024 * 1024

class CountingOutput extends Writable {
  /** `piece`: the bytes a writer hands over in one write() (./ndjson.js). */
  constructor (dest, name, piece = PIECE) {
    super({ highWaterMark: HIGH_WATER_MARK, decodeStrings: true })
    this.dest = dest
    this.name = name
    this.piece = piece
    this.bytes = 0
    this.handed = 0 // bytes given to write(): `bytes` once written (a checkpoint's cut, ./checkpoints.js)
    this.busy = false // a chunk is with `dest`, not taken yet
    this.cuts = [] // cut(): { at, resolve, reject }, in order
    this.cutting = null
  }

  write (chunk, encoding, callback) {
    // A string encoded once here, not measured here and encoded again by write().
    if (typeof chunk === 'string') chunk = Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8')
    this.handed += chunk.length
    return super.write(chunk, encoding, callback)
  }

  _write (chunk, encoding, callback) {
    if (this.cutting) {
      this.cutting.then(() => this._write(chunk, encoding, callback), callback)
      return
    }
    this.bytes += chunk.length
    this.busy = true
    const taken = () => {
      this.busy = false
      if (this.cuts.length && this.cuts[0].at === this.bytes) this.runCut().then(() => callback(), callback)
      else callback()
    }
    if (this.dest.write(chunk)) taken()
    else this.dest.once('drain', taken)
  }

  /**
   * A gzipped output with --checkpoint (./gzip-members.js): end the gzip member once every
   * byte handed so far is in it. Resolves with the bytes the file stream has written then.
   */
  cut () {
    const cut = new Promise((resolve, reject) => this.cuts.push({ at: this.handed, resolve, reject }))
    if (!this.busy && !this.cutting && this.bytes === this.handed) this.runCut().catch(() => {})
    return cut
  }

  runCut () {
    const c = this.cuts.shift()
    this.cutting = this.dest.cut().then(c.resolve, err => { c.reject(err); throw err }).finally(() => { this.cutting = null })
    return this.cutting
  }
}

/**
 * Open the output: `output` a path (created or truncated now) or a Writable (not ended).
 * `at` (a resume, ./checkpoint.js): the file is cut to `at` bytes and written on from there;
 * `members` (--checkpoint): a .gz file is written in gzip members that cut() ends.
 * Returns { stream, name, failure: Promise that rejects when writing fails, finish(),
 * close(): Promise, written(): the bytes of a plain file written to it by this run }.
 */
function openOutput (output, { at = null, members = false } = {}) {
  const own = typeof output === 'string'
  const name = own ? output : 'the output'
  let dest
  let file = null
  let done = Promise.resolve()
  let fail
  const failure = new Promise((resolve, reject) => { fail = reject })
  failure.catch(() => {})
  if (own) {
    let fd
    try {
      fd = fs.openSync(output, at === null ? 'w' : 'r+')
      if (at !== null) fs.ftruncateSync(fd, at)
    } catch (err) {
      throw outputError(err, output)
    }
    file = fs.createWriteStream(null, at === null ? { fd, highWaterMark: FILE_HIGH_WATER_MARK } : { fd, start: at, highWaterMark: FILE_HIGH_WATER_MARK })
    if (output.endsWith('.gz') && !members) {
      dest = zlib.createGzip()
      done = new Promise((resolve, reject) => pipeline(dest, file, err => err ? reject(outputError(err, output)) : resolve()))
    } else {
      dest = output.endsWith('.gz') ? new GzipMembers(file) : file
      done = new Promise((resolve, reject) => { file.once('finish', resolve); file.once('error', err => reject(outputError(err, output))) })
    }
    // `done` is awaited by finish() only: a file failing after close() (a write in flight when
    // it was destroyed: ERR_STREAM_DESTROYED) must not be an unhandled rejection, which would
    // end the process with exit 1 and a stack instead of the error's own code.
    done.catch(err => fail(err))
  } else {
    dest = output
  }
  const onError = err => fail(outputError(err, name))
  dest.on('error', onError)
  const stream = new CountingOutput(dest, name, own ? FILE_PIECE : PIECE)
  stream.on('error', onError)
  return {
    stream,
    name,
    failure,
    async finish () {
      if (!stream.writableEnded) stream.end()
      await Promise.race([finished(stream), failure])
      if (own) {
        dest.end()
        await Promise.race([done, failure])
      }
      dest.off('error', onError)
    },
    /** Stop writing (the export failed): resolves once a file of ours is closed. */
    close () {
      if (!own) return Promise.resolve()
      const closed = file.closed ? Promise.resolve() : new Promise(resolve => file.once('close', resolve))
      dest.destroy()
      return closed
    },
    written: () => file === null ? 0 : file.bytesWritten
  }
}

module.exports = { openOutput }
