'use strict'

const { openBytes } = require('../read/source')
const { Cutter, PARALLEL_CHUNK_SIZE } = require('../read/cut')
const { readerFields, tableColumns } = require('../read/input')
const { formatOf } = require('../read/formats')
const { tooFew } = require('../read/skip')
const { pieces } = require('../read/copy')
const { mapperFor } = require('../encode/mapper')
const { openChain } = require('../encode/chain')
const { IDLE, orIdle } = require('../encode/idle')
const { PipeloadError } = require('../errors')
const { MSG } = require('./protocol')
const { reviveError } = require('./errors')
const { PoolInput } = require('./pool')
const { SourceFailed, chunkReason, describeFallback } = require('./fallback')

// The parallel parse (--workers n, n ≥ 2): this thread inflates the input and cuts it into
// chunks at record boundaries (lib/read/cut.js); n worker threads (./worker.js) parse
// chunks side by side, then encode each once the records and lines before it are known;
// the batches are yielded here in input order, so the bytes sent are those of the
// sequential path, byte for byte.
//
// A chunk that does not parse on its own (a bad record in abort mode, a stray quote that
// made a cut wrong, a record longer than a chunk can find the end of) stops the cutting:
// once every chunk before it is yielded, everything from its first byte on is read here by
// the sequential reader, started at that record boundary. So every error, `stop` and
// message is the sequential path's own. Records rejected in skip mode do not stop it
// (./worker.js says why their chunk is still read as the sequential reader would).
// Only bad input (a PipeloadError in a worker) or what cannot be cut (no record end in
// reach, a header after blank lines) leads there, and the summary says where and why
// (fallbackInfo); any other error of a worker is a bug and fails the run.

// Pieces the sequential reader of a fallback is given: as large as a file read (lib/read/source.js).
const FALLBACK_PIECE = 256 * 1024

/**
 * Chunks cut and not yet fully yielded, at most (plus those cut from one read of the
 * input, 256 KiB, when chunks are smaller than that): one being parsed per worker, and four
 * more so the cutter runs ahead of the head chunk and a worker that is done finds another.
 * Each costs the chunk and its encoded batches (~4x the chunk for a 5-column HSET), held as
 * its worker's output buffers for the rest of the run; 2n + 2 of them (one waiting per
 * worker as well) cost ~30 MB more at 8 workers into a 3-master cluster, at no speed we
 * could measure (2 cores: dry runs at 4 workers as fast either way). For n = 2 both are 6.
 */
function maxChunks (n) {
  return n + 4
}

/**
 * Can this input be cut? Not a JSON document (one array), nor records, nor map(), nor a
 * restore (its lines are read in order: lib/encode/restore.js); nor a
 * --shard share by chunk number (stdin, gzip, a URL: one worker thread reads it). A share
 * by byte range of a file and a URL resumed by a Range request are cut from their start.
 */
function parallelEligible (desc, o) {
  return desc.kind === 'bytes' && formatOf(desc.format).chunks && !o.map && !o.restore && (!desc.shard || desc.shard.mode === 'range')
}

/**
 * Where an input's bytes begin when not at its start: a record in its middle, with the
 * header and fields per record a reader needs there ({ offset, line, columns, fields }).
 */
function startOf (desc) {
  if (desc.shard) return desc.shard.start // a share by byte range: null for shard 0
  return desc.start ?? null
}

/**
 * Start the workers and parse the first chunk (so header and template errors come before
 * connecting, as in the sequential path); resolves with { batches, close, useSlots, resumeShape,
 * sequentialFrom }: the last, once the batches are read, where the sequential reader took
 * over ({ offset, line }), or null.
 * `at`: `n` workers of `pool` (null: a pool of the input's own); `skip`: the input's first
 * records, dropped (--resume); `before`: records of the run before its first ({$n}; `skip` by
 * default); `slots`: the target is known to be a cluster: hash the slots from the first batch.
 */
async function openParallelBatches (desc, o, at) {
  const p = new Parallel(desc, o, at)
  try {
    await p.open()
  } catch (err) {
    await p.close()
    throw err
  }
  return { batches: p.batches(), close: () => p.close(), useSlots: owners => p.useSlots(owners), resumeShape: () => p.resumeShape(), sequentialFrom: () => p.sequentialFrom, fallback: () => p.fallbackInfo() }
}

class Parallel extends PoolInput {
  constructor (desc, o, { n, skip = 0, before = skip, slots = false, pool = null }) {
    super()
    this.desc = desc
    this.o = o
    this.skip = skip
    this.runBase = before - skip // records of the run before this input's first ({$n} of several inputs)
    this.tabular = formatOf(desc.format).tabular
    this.chunkSize = o.chunkSize || PARALLEL_CHUNK_SIZE
    this.max = maxChunks(n)
    this.state = { bytesRead: 0, bomLength: 0, decompressed: 0 }
    this.start = startOf(desc)
    const range = desc.shard ? desc.shard.range : undefined
    this.bytes = openBytes({ name: desc.name, path: desc.path, stream: desc.stream, size: desc.size, range, signal: o.signal }, this.state, this.start !== null)[Symbol.asyncIterator]()
    this.cutter = null
    this.chunks = new Map() // index -> { chunk, bytesRead, worker, parsed, batches, done }
    this.cut = 0 // chunks cut
    this.dispatched = 0 // chunks given to a worker
    this.head = 0 // the chunk whose batches are yielded next
    this.ended = false // every byte of the input is in a chunk
    this.tail = [] // bytes read after the cutting stopped
    this.sourceError = null // the input failed after the bytes cut so far
    this.fallbackAt = null // chunk index from which the sequential reader takes over
    this.fallbackReason = null // why (null: nothing to tell, an empty input)
    this.n = n
    this.sequentialFrom = null // { offset, line } where it did
    this.stopped = false // no more reading or cutting here
    // Chunk by chunk, in order: records and lines before the next chunk to place.
    this.nextBase = 0
    this.recordBase = 0
    this.lineBase = 0
    this.header = null // the CSV header read in chunk 0 (as read; --columns may rename it)
    this.expected = null // fields per record, once known
    if (this.start !== null) { // known before any chunk is parsed
      this.lineBase = this.start.line - 1
      this.header = this.start.columns
      this.expected = readerFields(o) ?? this.start.fields ?? (o.header && this.tabular ? this.header?.length ?? null : null)
    }
    this.opened = false
    this.shape = null // what the mapper knows of the input (the columns)
    this.takeWorkers(o, pool, n, { name: desc.name, format: desc.format, skip, runBase: this.runBase, slots })
    this.memory = this.pool.chunkMemory(this.chunkSize, this.max + 1)
  }

  async open () {
    this.reading = this.readLoop()
    while (this.failed === null && this.fallbackAt !== 0 && !this.chunks.get(0)?.parsed) await this.changed()
    if (this.failed !== null) throw this.failed
    if (this.fallbackAt !== 0 && !this.chunks.get(0).parsed.ok) this.fallback(0, this.chunks.get(0).parsed.reason)
    if (this.fallbackAt === 0) {
      this.sequential = await this.openFallback()
      return
    }
    if (this.tabular) this.columns = tableColumns(this.header, this.o, this.desc)
    this.shape = this.shapeOf(this.tabular ? { columns: this.columns || null, file: this.desc.name } : { file: this.desc.name })
    // Compiled here too, only so that template errors come now, as in the sequential path.
    mapperFor(this.o, this.shape)
    this.opened = true
    this.placeChunks()
    this.dispatchChunks()
  }

  /** Read and cut the input while there is room for more chunks. */
  async readLoop () {
    const o = this.o
    try {
      for (;;) {
        while (!this.stopped && this.cut - this.head >= this.max) await this.changed()
        if (this.stopped) return
        const r = await this.nextBytes()
        if (r.done) break
        if (this.stopped) { this.tail.push(r.value); return }
        if (this.cutter === null) {
          this.cutter = new Cutter({ format: this.desc.format, delimiter: o.delimiter, relaxQuotes: o.relaxQuotes, chunkSize: this.chunkSize, maxRecordSize: o.maxRecordSize, offset: this.firstOffset(), alloc: n => this.memory.alloc(n) })
        }
        for (const chunk of this.cutter.push(r.value)) this.add(chunk)
        if (this.cutter.overflow) return this.fallback(this.cutter.index, `no record end within ${this.cutter.limit} bytes to cut the input at`)
        this.dispatchChunks()
      }
      const last = this.cutter && this.cutter.end()
      if (last) this.add(last)
      this.ended = true
      if (this.cut === 0) return this.fallback(0) // an empty input: the sequential path says what that means
      this.dispatchChunks()
    } catch (err) {
      // A bug of the cutting, not of the input: the run fails, not read on sequentially.
      if (!(err instanceof SourceFailed) && !(err instanceof PipeloadError)) return this.fail(err)
      const cause = err instanceof SourceFailed ? err.cause : err
      this.sourceError = cause // the records before it still go out: read sequentially from the bytes not cut
      this.fallback(this.cutter ? this.cutter.index : 0, `the input failed: ${cause && cause.message}`)
    } finally {
      this.dispatchChunks() // those cut before a fallback are still parsed in parallel
      this.notify()
    }
  }

  /**
   * The input's next bytes. While they are slow to come (a pipe between its writer's
   * writes), the records already whole are cut as a chunk of their own, so that they go
   * out now, not once a full chunk (1 MiB) has come or the input has ended.
   */
  async nextBytes () {
    const next = this.bytes.next().catch(err => { throw new SourceFailed(err) })
    if (this.cutter === null || this.cutter.size === 0) return next
    const first = await orIdle(next)
    if (first !== IDLE) return first
    if (!this.stopped && this.cut - this.head < this.max) {
      const chunk = this.cutter.flush()
      if (chunk) {
        this.add(chunk)
        this.dispatchChunks()
      }
    }
    return next
  }

  add (chunk) {
    this.chunks.set(chunk.index, { chunk, bytesRead: this.state.bytesRead, worker: null, parsed: null, batches: [], done: false })
    this.cut++
  }

  /** Give cut chunks to the least busy workers; after chunk 0 only once it told the header. */
  dispatchChunks () {
    // After a fallback, the chunks before it are still parsed here; none after it.
    const end = Math.min(this.cut, this.fallbackAt ?? Infinity)
    while (this.dispatched < end && (this.dispatched === 0 || this.opened)) {
      const e = this.chunks.get(this.dispatched++)
      const w = this.leastBusy()
      e.worker = w
      const { index, buf, offset } = e.chunk
      const head = index === 0 && this.start === null // chunk 0 of the input reads its header
      const fields = head ? null : readerFields(this.o) ?? this.expected
      // After chunk 0, the mapper's shape is known: a worker may encode the chunk at once.
      w.worker.postMessage({ type: MSG.CHUNK, index, buf, offset, columns: head ? null : this.header, fields, shape: this.shape })
    }
  }

  onMessage (w, msg) {
    if (this.closed || msg.gen !== this.gen) return // a message about an earlier input
    if (msg.type === MSG.ERROR) return this.fail(reviveError(msg.error))
    const e = this.chunks.get(msg.index)
    if (e === undefined || (this.fallbackAt !== null && msg.index >= this.fallbackAt)) {
      if (msg.type === MSG.PARSED || msg.last) w.load--
      return
    }
    if (msg.type === MSG.PARSED) {
      if (!msg.ok) msg.reason = chunkReason(msg.reason, this.desc.name)
      if (msg.index === 0) this.firstParsed(msg)
      e.parsed = msg
      if (!msg.ok) w.load--
      this.placeChunks()
    } else if (msg.type === MSG.BATCH) {
      this.keepBatch(w, e, msg)
    }
    this.notify()
  }

  /** Chunk 0 tells the header, or (headerless) the fields per record, for every other chunk. */
  firstParsed (msg) {
    if (!msg.ok) return
    if (this.start === null) {
      this.header = msg.columns
      this.expected = readerFields(this.o) ?? (this.o.header && this.tabular ? this.header?.length ?? null : msg.expected)
    } else if (this.expected === null) {
      this.expected = msg.expected // headerless, read from the middle: chunk 0's first record tells
    }
    // A header that is not in chunk 0 (blank lines before it), or a headerless chunk 0
    // without a record: the other chunks cannot be parsed alone. Sequential from 0.
    if (this.tabular && this.expected === null) {
      msg.ok = false
      msg.reason = this.o.header ? 'the first chunk holds no header (only blank lines)' : 'the first chunk holds no record to tell the fields per record'
    }
  }

  /** In chunk order: give each parsed chunk the records and lines before it, to encode. */
  placeChunks () {
    if (!this.opened) return
    while (this.fallbackAt === null || this.nextBase < this.fallbackAt) {
      const e = this.chunks.get(this.nextBase)
      if (!e || !e.parsed) return
      const p = e.parsed
      // A chunk whose every row has the same wrong field count would parse cleanly alone.
      if (!p.ok) return this.fallback(this.nextBase, p.reason)
      if (this.tabular && p.expected !== null && p.expected !== this.expected) {
        return this.fallback(this.nextBase, `the chunk from line ${this.lineBase + 1} on has records of ${p.expected} fields, not ${this.expected}`)
      }
      e.worker.worker.postMessage({ type: MSG.BASES, index: this.nextBase, recordBase: this.recordBase, lineBase: this.lineBase, shape: this.shape })
      e.recordBase = this.recordBase
      e.lineBase = this.lineBase
      this.recordBase += p.records
      this.lineBase += p.lines
      this.nextBase++
    }
  }

  /**
   * Read sequentially from chunk `index` on, once every chunk before it is yielded; `reason`:
   * why, for the summary (./fallback.js).
   */
  fallback (index, reason = null) {
    if (this.fallbackAt === null || index < this.fallbackAt) {
      this.fallbackAt = index
      this.fallbackReason = reason
    }
    this.stopped = true
    this.notify()
  }

  /** Where and why the n workers handed over to this thread ({ from, line, offset, reason }), or null. */
  fallbackInfo () {
    return describeFallback(this.desc.name, this.n, this.sequentialFrom, this.fallbackReason)
  }

  /** The sequential reader from chunk `fallbackAt`: its bytes, the bytes after, and the rest of the input. */
  async openFallback () {
    this.stopped = true
    this.notify()
    await this.reading
    const f = this.fallbackAt
    const bufs = []
    for (let i = f; i < this.cut; i++) bufs.push(this.chunks.get(i).chunk.buf)
    const start = f < this.cut ? this.chunks.get(f).chunk.offset : this.cutter ? this.cutter.offset : this.firstOffset()
    if (this.cutter) bufs.push(...this.cutter.rest())
    bufs.push(...this.tail)
    const o = this.o
    const desc = { kind: 'bytes', name: this.desc.name, format: this.desc.format, stream: this.fallbackBytes(bufs) }
    const head = f === 0 && this.start === null // from the input's start: the header is read
    const fields = head ? null : readerFields(o) ?? this.expected
    this.sequentialFrom = { offset: start, line: this.lineBase + 1 }
    const src = await openChain(desc, o, {
      start: { offset: start, line: this.lineBase + 1, columns: head ? null : this.header, fields },
      skip: Math.max(0, this.skip - this.recordBase), // those of the chunks before are dropped already
      skipBase: this.recordBase,
      before: this.runBase + Math.max(this.skip, this.recordBase),
      shard: this.desc.shard
    })
    this.fallbackSource = src
    return this.withBytesRead(src.batches)
  }

  /**
   * What a reader needs to start at a record in the middle of this input (a checkpoint's
   * `next`, for a URL resumed by a Range request): whether it is gzip (then it cannot be),
   * the CSV header as read, the fields per record. As Reader#resumeShape.
   */
  resumeShape () {
    const gzip = Boolean(this.state.gzip)
    if (this.fallbackSource) return { ...this.fallbackSource.resumeShape(), gzip } // it reads bytes already inflated
    return { gzip, columns: this.header ?? null, fields: this.tabular ? this.expected : null }
  }

  /** Offset of the first byte read: after a BOM, or where a share or a ranged resume starts. */
  firstOffset () {
    return this.start !== null ? this.start.offset : this.state.bomLength
  }

  /** The mapper's shape, knowing a --shard share (its records' numbers are not known: {$n} is refused). */
  shapeOf (shape) {
    return this.desc.shard ? { ...shape, shard: this.desc.shard } : shape
  }

  async * fallbackBytes (bufs) {
    // Chunks are in shared memory, which this thread's parser reads slower (lib/read/copy.js),
    // and may be maxRecordSize long: read as copies the size of a file read.
    for (const b of bufs) yield * pieces(b, FALLBACK_PIECE, b.buffer instanceof SharedArrayBuffer)
    if (this.sourceError !== null) throw this.sourceError
    if (this.ended) return
    for (;;) {
      const r = await this.bytes.next()
      if (r.done) return
      yield r.value
    }
  }

  /** Batches with the raw bytes read from the whole input (the fallback reader counts its own). */
  async * withBytesRead (batches) {
    for await (const b of batches) {
      b.bytesRead = this.state.bytesRead
      yield b
    }
  }

  /** Encoded batches in input order. */
  async * batches () {
    try {
      if (this.sequential) {
        yield * this.sequential
        return
      }
      for (;;) {
        if (this.failed !== null) throw this.failed
        if (this.head === this.fallbackAt) {
          yield * await this.openFallback()
          return
        }
        const e = this.chunks.get(this.head)
        if (e === undefined && this.ended && this.head === this.cut) break
        if (e !== undefined && e.batches.length) {
          const b = e.batches.shift()
          // Bytes of the input read when this chunk was cut: its own and any read ahead of it.
          b.bytesRead = e.bytesRead
          yield b
          if (b.stop) return // abort: nothing after the failed record is read
          continue
        }
        if (e !== undefined && e.done) {
          this.memory.release(e.chunk.buf)
          this.chunks.delete(this.head++)
          this.notify() // room to cut
          this.dispatchChunks()
          continue
        }
        await this.changed()
      }
      if (this.skip > this.recordBase) throw tooFew(this.skip, this.recordBase, this.o.checkpoint)
    } finally {
      await this.close()
    }
  }

  /** Stop reading, give the workers back to the pool. */
  async close () {
    if (this.closed) return
    this.closed = true
    this.stopped = true
    this.notify()
    this.desc.stream?.destroy?.() // a read still waiting on an idle stream ends now
    await this.releaseWorkers()
    await this.reading?.catch(() => {})
    await this.bytes.return().catch(() => {})
  }
}

module.exports = { openParallelBatches, parallelEligible, maxChunks, PARALLEL_CHUNK_SIZE }
