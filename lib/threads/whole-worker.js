'use strict'

const { Readable } = require('node:stream')
const { openChain } = require('../encode/chain')
const { serializeError } = require('./errors')
const { MSG } = require('./protocol')

// A parse worker's side of an input read whole in one worker thread (./whole.js: --workers
// 1, a JSON document, a shard of stdin, gzip or a URL): the worker reads, parses, maps and encodes
// it, and posts each encoded batch with at most `ahead` not yet taken by the loader (a credit
// per batch), so a fast parser cannot run ahead of a slow server. The worker is one of the run's
// parse workers (./worker.js), kept for the next input: an input stopped early (a failure,
// an abort) is told 'stop', and a new input ends what is left of this one.
// Its messages (./protocol.js): in CREDIT, BYTES, BYTES_END, BYTES_ERROR, STOP; out READY,
// BATCH, DONE, ERROR, BYTES_ACK.

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
      this.stream.on('data', () => post({ type: MSG.BYTES_ACK }))
    }
  }

  onMessage (msg) {
    if (msg.type === MSG.CREDIT) {
      this.credits++
      this.signal()
    } else if (msg.type === MSG.BYTES) this.stream.push(Buffer.from(msg.chunk.buffer, msg.chunk.byteOffset, msg.chunk.byteLength))
    else if (msg.type === MSG.BYTES_END) this.stream.push(null)
    else if (msg.type === MSG.BYTES_ERROR) this.stream.destroy(Object.assign(new Error(msg.error.message), msg.error))
    else if (msg.type === MSG.STOP) this.stop()
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
      const src = await openChain({ ...this.desc, stream: this.stream }, { ...this.o, signal: this.stopping.signal }, { skip: this.skip, before: this.before, free: this.free })
      if (!this.stopped) this.post({ type: MSG.READY, empty: src.empty })
      for await (const batch of src.batches) {
        while (this.credits === 0 && !this.stopped) await new Promise(resolve => { this.wake = resolve })
        if (this.stopped) return // leaving the loop closes the reader
        this.credits--
        // The reader's shape goes along for the loader's checkpoint (small: a header at most).
        this.post({ type: MSG.BATCH, batch, shape: src.resumeShape ? src.resumeShape() : null })
      }
      if (!this.stopped) this.post({ type: MSG.DONE })
    } catch (err) {
      if (!this.stopped) this.post({ type: MSG.ERROR, error: serializeError(err) })
    }
  }
}

module.exports = { WholeInput }
