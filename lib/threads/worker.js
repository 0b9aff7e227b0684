'use strict'

// A parse worker (./pool.js starts them): it runs the input's chain (lib/encode/chain.js) over
// what the loader gives it, in one of three modes, and posts the encoded batches back. The
// messages both ways are ./protocol.js's.
//
// Chunks of an input cut at record boundaries (./chunks.js, lib/read/cut.js):
//   CHUNK: parse the chunk alone, lines counted from 1, and report its record and line counts
//   (PARSED); keep the records. `ok` false: the reader threw a PipeloadError (a bad record in
//   abort mode; a quote still open at the chunk's end, so a wrong cut), `reason` its message:
//   the loader then reads from there on sequentially, so the error is the sequential one. Any
//   other error (a bug) is not bad input: it is posted as an ERROR, which fails the run (a
//   fallback would hide it). Records rejected in skip mode leave the chunk ok: a chunk that
//   starts at a record boundary and is read to its end without an error ends at one too (its
//   last byte is a line break outside quotes, and a skipped record ends at the first line
//   break after its fault), so its records, rejected ones included, are those the sequential
//   reader reads there; only the line a rejection's message names is moved to the input's
//   (relocate).
//   BASES: encode the kept records with {$n} and lines made absolute; post the batches (bytes
//   shared, not copied), the last one marked.
// Row groups of a Parquet file (./row-groups.js): INPUT with `parquet` (the file, its footer,
//   the columns to read), then GROUP messages: each row group is read and encoded at once
//   (./group-worker.js), its batches posted as a chunk's are; a group that cannot be read is
//   an ERROR with its index.
// An input read whole (./whole.js): INPUT with `whole`; ./whole-worker.js reads it and takes
//   its messages (CREDIT, BYTES, BYTES_END, BYTES_ERROR, STOP).
//
// The loader keeps its workers for every input of a run (./pool.js): each input begins with an
// INPUT message, which drops what is left of the previous one (the first of a run brings the
// run's options); every message out carries that input's `gen`, so the loader tells a late
// one from the current. For a cluster (SLOTS), each command's hash slot is added to its batch,
// and once the loader told each slot's master, the commands are grouped by master
// (lib/encode/group.js).

const { parentPort } = require('node:worker_threads')
const { openReader, Rejected } = require('../read/reader')
const { countLines } = require('../read/cut')
const { formatOf } = require('../read/formats')
const { Chain } = require('../encode/chain')
const { recycle, reuse, shareOutput } = require('../encode/writer')
const { parseTemplate } = require('../encode/template')
const { where, PipeloadError } = require('../errors')
const { serializeError } = require('./errors')
const { MSG } = require('./protocol')

shareOutput() // batches in SharedArrayBuffers: posted, not moved (lib/encode/writer.js says why)
const parsed = new Map() // index -> { batches } (records) or { encoded } (batches) of a chunk waiting for its bases
let o // the run's options (its first input brings them: a worker serves one run after another)
let templateNumbers
const encodes = [] // bases messages, done before any parse: the loader waits on them
const parses = []
let busy = false
let slots = false // the target is a cluster: each command's hash slot too
let owners = null // each slot's master, as the loader last told (null: not grouped)
let cluster = null // lib/encode/slots.js and group.js, loaded by the first input to a cluster (useSlots())
const free = [] // output buffers the loader gave back, for the next batches of any chunk
// The input being read (set by begin()).
let gen, name, format, skip, runBase, numbered, mapper
let groups = null // a Parquet input's row groups (./group-worker.js), else null
let whole = null // an input read whole here (./whole-worker.js), else null
const WHOLE = new Set([MSG.CREDIT, MSG.BYTES, MSG.BYTES_END, MSG.BYTES_ERROR, MSG.STOP])
// For tests only (test/parallel-fallback.test.js): the chunk of this index throws a TypeError
// while it is parsed, as a bug in the reader would. Read when the worker starts.
const PLANTED_TYPE_ERROR = process.env.PIPELOAD_TEST_CHUNK_TYPE_ERROR ? Number(process.env.PIPELOAD_TEST_CHUNK_TYPE_ERROR) : null

/** A run's first input for this worker: nothing of the run before it carries over. */
function startRun (options) {
  o = options
  templateNumbers = usesNumbers(o.templates)
  slots = false
  owners = null
}

/** A new input: what is left of the previous one (chunks after a fallback, say) is dropped. */
function begin (input) {
  ({ gen, name, format, skip, runBase = 0 } = input)
  if (input.options) startRun(input.options)
  if (groups !== null) groups.close()
  groups = null
  if (whole !== null) whole.stop()
  whole = null
  if (input.parquet) {
    const { GroupEncoder } = require('./group-worker') // loaded by a worker's first Parquet input: a CSV worker starts without it
    groups = new GroupEncoder(input.parquet, o)
  }
  if (input.whole) {
    const { WholeInput } = require('./whole-worker')
    const at = gen
    whole = new WholeInput(input.whole, o, free, msg => parentPort.postMessage({ ...msg, gen: at }))
    whole.run()
  }
  if (input.slots) useSlots()
  // Records need their number in the whole input only for {$n} and {$line} (and to drop those
  // a resumed run skips): without them, a chunk is encoded as soon as it is parsed, and only
  // its batches' line numbers are shifted once its place is known. Parsed records kept
  // waiting would instead live on into the old generation, which costs more GC than parsing.
  numbered = skip > 0 || templateNumbers
  mapper = null // the shape (columns) is the input's own
  parsed.clear()
  encodes.length = 0
  parses.length = 0
}

parentPort.on('message', msg => {
  if (msg.type === MSG.INPUT) return begin(msg)
  if (WHOLE.has(msg.type)) {
    if (whole !== null && msg.gen === gen) whole.onMessage(msg)
    return
  }
  if (msg.type === MSG.CHUNK || msg.type === MSG.GROUP) parses.push(msg)
  else if (msg.type === MSG.BASES) encodes.push(msg)
  else if (msg.type === MSG.SLOTS) {
    useSlots()
    owners = msg.owners ?? null
  }
  else if (msg.type === MSG.RECYCLE) return recycle(free, msg.buf)
  work()
})

async function work () {
  if (busy) return
  busy = true
  try {
    for (;;) {
      if (encodes.length) encode(encodes.shift())
      else if (parses.length) {
        const msg = parses.shift()
        await (msg.type === MSG.GROUP ? encodeGroup(msg) : parse(msg))
      }
      else break
    }
  } catch (err) {
    parentPort.postMessage({ type: MSG.ERROR, gen, error: serializeError(err) })
  } finally {
    busy = false
  }
}

async function * once (buf) {
  yield buf // the reader gives it to its parser in pieces (lib/read/reader.js)
}

/** Whether any template may write {$n} or {$line} (a field of that name would win: no matter); a restore's none. */
function usesNumbers (templates) {
  if (templates === null) return false // a restore: no templates
  return templates.some(t => parseTemplate(t).words.some(w => w.parts && w.parts.some(p => p.alt?.kind === 'meta' && (p.alt.which === 'n' || p.alt.which === 'line'))))
}

/**
 * Phase 1: the chunk's records, kept (or encoded as they are read, when `shape` is given and
 * the numbers do not matter); its counts, and whether it parsed cleanly. Encoded as read, a
 * chunk's records live one reader batch (256 KiB of input) at a time: kept whole until the
 * chunk's end (1 MiB, ~15,000 records), they outlived the young generation and were
 * promoted, and each worker's old generation grew to hold them.
 */
async function parse ({ index, buf, offset, columns, fields, shape }) {
  const at = gen
  const chunk = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength)
  const reader = openReader({ name, stream: once(chunk) }, {
    format,
    header: o.header,
    fields: o.fields,
    delimiter: o.delimiter,
    relaxQuotes: o.relaxQuotes,
    maxRecordSize: o.maxRecordSize,
    onError: o.onError,
    raw: Boolean(o.rejects),
    rows: true,
    start: { offset, line: 1, columns, fields }
  })
  const out = shape && !numbered ? new ChunkEncoder(shape) : null
  const batches = []
  let records = 0
  let expected = null
  let bad = null // the PipeloadError the reader threw: bad input, or a wrong cut
  try {
    for await (const b of reader) {
      for (const r of b.records) {
        if (expected === null && formatOf(format).tabular && !(r instanceof Rejected)) expected = r.n ?? r.length
      }
      records += b.records.length
      if (!b.records.length) continue
      if (out !== null) out.add(b)
      else batches.push(b)
    }
    if (index === PLANTED_TYPE_ERROR) throw new TypeError(`planted in chunk ${index} by PIPELOAD_TEST_CHUNK_TYPE_ERROR`)
  } catch (err) {
    if (!(err instanceof PipeloadError)) throw err // a bug, not bad input: work() posts it, the run fails
    bad = err
  }
  if (bad !== null || at !== gen) out?.drop() // a chunk read again sequentially, or the loader went on to another input
  if (at !== gen) return
  const ok = bad === null
  if (ok) parsed.set(index, out !== null ? { encoded: out.end() } : { batches })
  parentPort.postMessage({ type: MSG.PARSED, gen, index, records, lines: countLines(chunk), expected, columns: reader.columns, ok, reason: ok ? null : bad.message })
}

/**
 * A chunk's records encoded as they are parsed, as encodeChunk() encodes them once parsed
 * (lines counted from the chunk's start, records from 0). An error of the encoding is
 * thrown at the end, and only for a chunk that parsed cleanly: as before, a chunk the loader
 * reads again sequentially is not encoded.
 */
class ChunkEncoder {
  constructor (shape) {
    this.shape = shape
    this.chain = null
    this.out = []
    this.error = null
  }

  add (b) {
    if (this.error !== null || this.chain?.stopped) return
    try {
      if (this.chain === null) {
        this.chain = new Chain(o, { mapper, shape: this.shape, skip: 0, before: runBase, free })
        mapper = this.chain.mapper
      }
      this.out.push(...this.chain.add(b, 0))
    } catch (err) {
      this.error = err
    }
  }

  /** The encoded batches, the last one taken (encodeChunk's for the same records). */
  end () {
    if (this.error !== null) throw this.error
    if (this.chain === null) return encodeChunk([], this.shape, 0, 0)
    if (!this.chain.stopped) this.out.push(this.chain.take(0))
    return this.out
  }

  /** Not sent: their buffers are written into again. */
  drop () {
    for (const b of this.out) recycle(free, b.buf.buffer)
    this.out = []
  }
}

/**
 * A Parquet row group, its batches posted as they are encoded (./group-worker.js). A group that cannot be read is
 * reported as its own failure: the loader throws it once every group before it is sent,
 * where the sequential reader would.
 */
async function encodeGroup (msg) {
  const at = gen
  try {
    // Posted as encoded; not once the loader went on to another input meanwhile.
    await groups.encode(msg, free, (batch, last) => { if (at === gen) send(msg.index, batch, last) })
  } catch (err) {
    if (at === gen) parentPort.postMessage({ type: MSG.ERROR, gen, index: msg.index, error: serializeError(err) })
  }
}

/** Phase 2: encode a parsed chunk's records, numbered and placed in the whole input; post them. */
function encode ({ index, recordBase, lineBase, shape }) {
  const kept = parsed.get(index)
  parsed.delete(index)
  const out = kept.encoded ? shiftLines(kept.encoded, lineBase) : encodeChunk(kept.batches, shape, recordBase, lineBase)
  out.forEach((batch, i) => send(index, batch, i === out.length - 1))
}

/** Encoded batches of a chunk's record batches; `recordBase` records and `lineBase` lines come before it. */
function encodeChunk (batches, shape, recordBase, lineBase) {
  // The shape (columns) is that of chunk 0 for the whole input: one mapper. --resume: the
  // records an earlier run loaded are dropped (those of the chunks before this one first).
  const chain = new Chain(o, { mapper, shape, skip: Math.max(0, skip - recordBase), before: runBase + Math.max(recordBase, skip), free })
  mapper = chain.mapper
  const out = []
  for (const b of batches) {
    out.push(...chain.add(lineBase === 0 ? b : { ...b, lines: b.lines.map(l => l + lineBase) }, 0))
    if (chain.stopped) break
  }
  if (!chain.stopped) out.push(chain.take(0))
  if (lineBase !== 0) for (const b of out) for (const f of b.failures) relocate(f, lineBase)
  return out
}

/**
 * A record the reader rejected says where it is in its message (`file:line: reason`), with
 * its line as counted from the chunk's start: the input's line instead, as the sequential
 * reader says it. `f.line` is already the input's.
 */
function relocate (f, lineBase) {
  const at = `${where(name, f.line - lineBase)}: `
  if (typeof f.message === 'string' && f.message.startsWith(at)) f.message = `${where(name, f.line)}: ${f.message.slice(at.length)}`
}

/** Batches encoded with lines counted from the chunk's start, moved to the whole input's. */
function shiftLines (batches, lineBase) {
  if (lineBase === 0) return batches
  for (const b of batches) {
    b.lines = b.lines.map(l => l + lineBase)
    for (const f of b.failures) {
      if (f.line == null) continue
      f.line += lineBase
      relocate(f, lineBase)
    }
    if (b.first && b.first.line != null) b.first.line += lineBase
    if (b.stop && b.stop.line != null) b.stop.line += lineBase
  }
  return batches
}

/** A batch to the loader; `last`: the chunk's last (the chunk is then done). */
function send (index, batch, last) {
  if (slots && batch.cmds > 0) addSlots(batch)
  // Nothing transferred: the bytes are shared; starts, slots and stops (4 to 6 bytes a
  // command) are copied, as moving them would detach them here (see writer.js).
  parentPort.postMessage({ type: MSG.BATCH, gen, index, batch, last })
}

/**
 * The target is a cluster: hash slots from now on. What its batches need here (slots, grouping
 * by master) is loaded once, by the worker's first such input: a run into one server loads none of it.
 */
function useSlots () {
  slots = true
  if (cluster === null) {
    const { SlotScanner, commandSlots } = require('../encode/slots')
    cluster = { scanner: new SlotScanner(), commandSlots, groupByOwner: require('../encode/group').groupByOwner }
  }
}

/**
 * For a cluster: each command's start and hash slot, so the loader's thread need not scan;
 * and, once the loader told the slots' masters, the commands grouped by master.
 */
function addSlots (batch) {
  const { starts, slots } = cluster.commandSlots(cluster.scanner, batch.buf, batch.cmds)
  batch.starts = starts
  batch.slots = slots
  const grouped = owners && cluster.groupByOwner(batch, owners, n => reuse(free, n))
  if (grouped) {
    recycle(free, batch.buf.buffer) // copied: written into again
    batch.buf = grouped.buf
    batch.starts = grouped.starts
    batch.stops = grouped.stops
  }
}
