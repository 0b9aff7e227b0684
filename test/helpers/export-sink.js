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

/** Each record through `createWriter(sink.out, options)`, awaiting write()'s Promise, then end(). */
async function writeAll (createWriter, records, options, sink = collector()) {
  const w = createWriter(sink.out, options)
  for (const r of records) {
    const p = w.write(r)
    if (p) await p
  }
  await w.end()
  return sink
}

/** The error writeAll() fails with; an error of its own when it does not fail. */
async function failure (createWriter, records, options) {
  try {
    await writeAll(createWriter, records, options)
  } catch (err) {
    return err
  }
  throw new Error('the export did not fail')
}

module.exports = { collector, writeAll, failure }
