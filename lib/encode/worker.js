'use strict'

// Worker thread: reads, parses, maps and encodes the input, and posts each encoded batch
// (its RESP bytes shared, not copied) to the loader, which only writes batches to the
// socket and parses replies. Parsing then runs on its own core, in input order.
//
// Messages out: ready { empty } | batch { batch } | error { error } | done
//               | chunk-ack (a chunk of a parent-fed stream was consumed)
// Messages in:  credit (room for one more batch) | chunk { chunk } | end | stream-error { error }
//               | recycle { buf } (a batch's SharedArrayBuffer, sent: written into again)

const { parentPort, workerData } = require('node:worker_threads')
const { Readable } = require('node:stream')
const { openRecords } = require('../read/input')
const { mapperFor } = require('./mapper')
const { encodeRecords } = require('./encoder')
const { skipRecords } = require('../read/skip')
const { recycle, shareOutput } = require('./writer')
const { serializeError } = require('./thread-errors')

const { desc, options, ahead, skip, before } = workerData
shareOutput() // batches in SharedArrayBuffers: posted, not moved (lib/encode/writer.js says why)
let credits = ahead
let wakeCredit = null
const free = [] // output buffers the loader gave back

/** A byte stream fed by the parent's chunk messages, acknowledged as they are read. */
function parentStream () {
  const stream = new Readable({ read () {} })
  stream.on('data', () => parentPort.postMessage({ type: 'chunk-ack' }))
  return stream
}

async function main () {
  let stream = null
  if (desc.fromParent) {
    stream = parentStream()
    desc.stream = stream
  }
  parentPort.on('message', msg => {
    if (msg.type === 'credit') {
      credits++
      if (wakeCredit) { wakeCredit(); wakeCredit = null }
    } else if (msg.type === 'chunk') stream.push(Buffer.from(msg.chunk.buffer, msg.chunk.byteOffset, msg.chunk.byteLength))
    else if (msg.type === 'end') stream.push(null)
    else if (msg.type === 'stream-error') stream.destroy(Object.assign(new Error(msg.error.message), msg.error))
    else if (msg.type === 'recycle') recycle(free, msg.buf)
  })
  const src = await openRecords(desc, options)
  const mapper = src.empty ? null : mapperFor(options, src.shape)
  parentPort.postMessage({ type: 'ready', empty: src.empty })
  for await (const batch of encodeRecords(skip ? skipRecords(src.batches, skip, options.checkpoint) : src.batches, mapper, options, before, free)) {
    if (credits === 0) await new Promise(resolve => { wakeCredit = resolve })
    credits--
    // The reader's shape goes along for the loader's checkpoint (small: a header at most).
    parentPort.postMessage({ type: 'batch', batch, shape: src.resumeShape ? src.resumeShape() : null })
  }
  parentPort.postMessage({ type: 'done' })
}

main().catch(err => {
  parentPort.postMessage({ type: 'error', error: serializeError(err) })
})
