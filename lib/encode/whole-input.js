'use strict'

const { Readable } = require('node:stream')
const { openRecords } = require('../read/input')
const { mapperFor } = require('./mapper')
const { encodeRecords } = require('./encoder')
const { skipRecords } = require('../read/skip')
const { serializeError } = require('./thread-errors')

// A parse worker's side of an input read whole in one worker thread (./worker-input.js: --workers
// 1, a JSON document, a shard of stdin, gzip or a URL): the worker reads, parses, maps and encodes
// it, and posts each encoded batch with at most `ahead` not yet taken by the loader (a credit
// per batch), so a fast parser cannot run ahead of a slow server. The worker is one of the run's
// parse workers (chunk-worker.js), kept for the next input: an input stopped early (a failure,
// an abort) is told 'stop', and a new input ends what is left of this one.
//
// Messages in:  credit | bytes { chunk } | bytes-end | bytes-error { error } (a byte stream fed
//               by the loader) | stop
// Messages out: ready { empty } | batch { batch, shape } | done | error { error } | bytes-ack
//               (a chunk of a loader-fed stream was consumed)

class WholeInput {
  /**
   * @param {{ desc, ahead: number, skip: number, before: number }} whole what the loader sent
   * @param {object} o the run's options
   * @param {Buffer[]} free output buffers the loader gave back (the worker's own list)
   * @param {(msg: object) => void} post posts to the loader, with the input's gen
   */
  constructor ({ desc, ahead, skip, before }, o, free, post) {
    this.desc = desc
    this.o = o
    this.skip = skip
    this.before = before
    this.free = free
    this.post = post
    this.credits = ahead
    this.wake = null
    this.stopped = false
    // A read still waiting (a FIFO no process writes to) ends when the input is stopped, so the
    // worker is free for the next input (lib/read/abortable.js).
    this.stopping = new AbortController()
    this.stream = null
    if (desc.fromParent) {
      this.stream = new Readable({ read () {} })
      this.stream.on('data', () => post({ type: 'bytes-ack' }))
    }
  }

  onMessage (msg) {
    if (msg.type === 'credit') {
      this.credits++
      this.signal()
    } else if (msg.type === 'bytes') this.stream.push(Buffer.from(msg.chunk.buffer, msg.chunk.byteOffset, msg.chunk.byteLength))
    else if (msg.type === 'bytes-end') this.stream.push(null)
    else if (msg.type === 'bytes-error') this.stream.destroy(Object.assign(new Error(msg.error.message), msg.error))
    else if (msg.type === 'stop') this.stop()
  }

  signal () {
    const w = this.wake
    this.wake = null
    if (w) w()
  }

  /** The loader is done with this input (or another came): nothing more is read or posted. */
  stop () {
    this.stopped = true
    this.stopping.abort()
    this.stream?.destroy()
    this.signal()
  }

  async run () {
    try {
      const src = await openRecords({ ...this.desc, stream: this.stream }, { ...this.o, signal: this.stopping.signal })
      const mapper = src.empty ? null : mapperFor(this.o, src.shape)
      if (!this.stopped) this.post({ type: 'ready', empty: src.empty })
      const records = this.skip ? skipRecords(src.batches, this.skip, this.o.checkpoint) : src.batches
      for await (const batch of encodeRecords(records, mapper, this.o, this.before, this.free)) {
        while (this.credits === 0 && !this.stopped) await new Promise(resolve => { this.wake = resolve })
        if (this.stopped) return // leaving the loop closes the reader
        this.credits--
        // The reader's shape goes along for the loader's checkpoint (small: a header at most).
        this.post({ type: 'batch', batch, shape: src.resumeShape ? src.resumeShape() : null })
      }
      if (!this.stopped) this.post({ type: 'done' })
    } catch (err) {
      if (!this.stopped) this.post({ type: 'error', error: serializeError(err) })
    }
  }
}

module.exports = { WholeInput }
