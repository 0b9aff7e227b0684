'use strict'

const fs = require('node:fs')
const net = require('node:net')
const tty = require('node:tty')
const zlib = require('node:zlib')
const { Readable, pipeline } = require('node:stream')
const { PipeloadError, where } = require('../errors')
const { AbortRace } = require('./abortable')

// Bigger than the fs default (64 KiB): fewer awaits and parser calls per MB.
const FILE_CHUNK = 256 * 1024

const EMPTY = Buffer.alloc(0)

/**
 * The decompressed bytes of a source, as an async iterable of Buffers.
 * gzip is recognised by its magic bytes, a UTF-8 BOM is dropped; `state` tells the caller
 * how many raw bytes were consumed (`bytesRead`), how many BOM bytes were skipped
 * (`bomLength`) and whether the source was gzip (`gzip`), both known before the first
 * chunk is yielded. `source.signal` (the run's): a read still waiting when it aborts ends
 * with PIPELOAD_ABORTED.
 */
async function * openBytes (source, state, plain = false) {
  const file = source.name
  let raw
  try {
    raw = source.path != null ? openFile(source.path, source.range) : source.stream
  } catch (err) {
    throw readError(err, source, state)
  }
  const it = raw[Symbol.asyncIterator]()
  const race = new AbortRace(source.signal)
  let finished = false
  let bytesIt = null

  // Raw chunks, counted as consumed; errors opening the file become pipeload errors.
  async function * rawChunks () {
    for (;;) {
      let r
      try {
        r = await race.wait(it.next())
      } catch (err) {
        throw readError(err, source, state)
      }
      if (r.done) { finished = true; return }
      const chunk = typeof r.value === 'string' ? Buffer.from(r.value) : r.value
      state.bytesRead += chunk.length
      if (chunk.length !== 0) yield chunk
    }
  }

  try {
    const rawIt = rawChunks()
    if (plain) { // bytes from the middle of an input: no gzip header or BOM to look for
      bytesIt = rawIt
      yield * rawIt
      return
    }
    const head = await readHead(rawIt, 2)
    let bytes
    if (head.length >= 2 && head.buf[0] === 0x1f && head.buf[1] === 0x8b) {
      state.gzip = true // offsets are then the decompressed stream's, not the source's
      const gunzip = zlib.createGunzip()
      const compressed = Readable.from(prepend(head.buf, rawIt), { objectMode: false })
      // pipeline() destroys both ends on error; the error then surfaces in the loop below.
      bytes = pipeline(compressed, gunzip, () => {})
      bytes = gunzipErrors(bytes, gunzip, file, state)
    } else {
      bytes = prepend(head.buf, rawIt)
    }

    bytesIt = bytes[Symbol.asyncIterator]()
    const first = await readHead(bytesIt, 3)
    let buf = first.buf
    if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
      state.bomLength = 3
      buf = buf.subarray(3)
    }
    if (buf.length !== 0) yield buf
    for (;;) {
      const r = await bytesIt.next()
      if (r.done) break
      yield r.value
    }
  } finally {
    race.close()
    // Early exit by the consumer, or an error (an abort: a read of the upstream may still be
    // pending, which this ends): release gunzip, the file / upstream.
    if (!finished && bytesIt !== null) await bytesIt.return()
    if (!finished && typeof raw.destroy === 'function') raw.destroy()
  }
}

/** A file, or its byte range [start, end) (`end` null: to the end of the file). */
function openFile (path, range) {
  if (!range) return openWhole(path)
  if (range.end != null && range.end <= range.start) return Readable.from([]) // an empty range
  // fs.createReadStream's `end` is inclusive.
  return fs.createReadStream(path, { highWaterMark: FILE_CHUNK, start: range.start, end: range.end == null ? undefined : range.end - 1 })
}

/**
 * A whole file. A FIFO (named pipe; /dev/stdin of a shell's pipe) is read as a pipe and a
 * terminal as a terminal, as stdin is: opened without waiting for a writer, read when the
 * kernel says there is data. fs.createReadStream would open and read them with blocking
 * calls in a thread of libuv's pool, which nothing interrupts: not Ctrl-C, and not
 * process.exit(), which waits for the pool's threads. A FIFO with no writer yet waits,
 * abortably, for one; the last writer closing it is its end.
 */
function openWhole (path) {
  const st = fs.statSync(path)
  if (st.isFIFO() || st.isCharacterDevice()) {
    const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    try {
      if (st.isFIFO()) return new net.Socket({ fd, readable: true, writable: false })
      if (tty.isatty(fd)) return new tty.ReadStream(fd)
    } catch (err) {
      fs.closeSync(fd)
      throw err
    }
    fs.closeSync(fd) // another device (/dev/zero): its reads do not wait
  }
  return fs.createReadStream(path, { highWaterMark: FILE_CHUNK })
}

/** Reads chunks until at least `n` bytes are buffered (or the input ends). */
async function readHead (iterator, n) {
  let buf = EMPTY
  while (buf.length < n) {
    const r = await iterator.next()
    if (r.done) break
    buf = buf.length === 0 ? r.value : Buffer.concat([buf, r.value])
  }
  return { buf, length: buf.length }
}

async function * prepend (head, iterator) {
  if (head.length !== 0) yield head
  for (;;) {
    const r = await iterator.next()
    if (r.done) return
    yield r.value
  }
}

async function * gunzipErrors (stream, gunzip, file, state) {
  try {
    for await (const chunk of stream) {
      state.decompressed += chunk.length
      yield chunk
    }
  } catch (err) {
    if (err instanceof PipeloadError || !String(err.code).startsWith('Z_')) throw err
    const at = gunzip.bytesWritten
    throw new PipeloadError(
      'PIPELOAD_INPUT_INVALID',
      `${where(file, null, at)}: gzip data is corrupt or truncated: ${err.message}`,
      { file, line: null, offset: state.decompressed, compressedOffset: at, cause: err }
    )
  }
}

function readError (err, source, state) {
  if (err instanceof PipeloadError) return err
  const file = source.name
  if (source.path == null) {
    // A stream that emits 'error' (an upload cut off): what was read before still goes out.
    const why = err instanceof Error ? err.message : String(err)
    return new PipeloadError('PIPELOAD_INPUT_FAILED', `${where(file, null, state.bytesRead)}: the input stream failed: ${why}`,
      { file, line: null, offset: null, cause: err })
  }
  if (err.code === 'ENOENT' || err.code === 'ENOTDIR') {
    return new PipeloadError('PIPELOAD_INPUT_NOT_FOUND', `cannot read ${file}: no such file`,
      { file, path: source.path, cause: err })
  }
  const reason = err.code === 'EACCES' ? 'permission denied'
    : err.code === 'EISDIR' ? 'it is a directory'
      : err.message
  return new PipeloadError('PIPELOAD_INPUT_INVALID', `cannot read ${file}: ${reason}`,
    { file, path: source.path, cause: err })
}

module.exports = { openBytes, FILE_CHUNK }
