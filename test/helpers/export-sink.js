'use strict'

// Output streams for the export writers' unit tests: a Writable that keeps what it is given,
// optionally slow (each write called back a few macrotasks later, a small highWaterMark) so
// that write() returns false and a writer must await 'drain'. `most` records the largest
// writableLength seen at a write: a writer that ignores backpressure lets it grow without bound.

const { Writable } = require('node:stream')

function collector ({ slow = false } = {}) {
  const chunks = []
  const stats = { most: 0, writes: 0 }
  const out = new Writable({
    highWaterMark: slow ? 1024 : 16384,
    write (chunk, enc, cb) {
      chunks.push(Buffer.from(chunk))
      stats.writes++
      if (slow) setTimeout(cb, 1)
      else cb()
    }
  })
  const write = out.write.bind(out)
  out.write = (...args) => {
    stats.most = Math.max(stats.most, out.writableLength)
    return write(...args)
  }
  return { out, stats, bytes: () => Buffer.concat(chunks) }
}

module.exports = { collector }
