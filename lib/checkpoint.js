'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { PipeloadError } = require('./errors')

// --checkpoint / --resume. The checkpoint file records how many input records, from the
// start, are acknowledged by the server (batches are acknowledged in order, so that is a
// prefix of the input), with the running totals. It is replaced atomically (write a
// temporary file, rename it over the old one), at most once per interval and at the end,
// so a crash at any moment leaves the previous or the next state, never a torn one.
// Resuming re-reads the input and skips that many records; anything acknowledged after
// the last write is sent again (at-least-once, like a reconnect).

const VERSION = 1
const WRITE_INTERVAL_MS = 500

/** What identifies the input: a file by path, size and modification time. */
function inputIdentity (desc) {
  if (desc.kind !== 'bytes' || !desc.path) return { name: desc.name }
  const st = fs.statSync(desc.path)
  return { name: desc.name, path: path.resolve(desc.path), size: st.size, mtimeMs: st.mtimeMs }
}

function checkpointError (file, reason) {
  return new PipeloadError('PIPELOAD_CHECKPOINT_INVALID', `checkpoint ${file}: ${reason}`, { file })
}

/** The saved state, or null when the file does not exist. */
function readCheckpoint (file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw checkpointError(file, err.message)
  }
  let state
  try {
    state = JSON.parse(text)
  } catch {
    throw checkpointError(file, 'not a pipeload checkpoint (not JSON)')
  }
  if (!state || state.version !== VERSION || !Number.isSafeInteger(state.records) || state.records < 0) {
    throw checkpointError(file, 'not a pipeload checkpoint of this version')
  }
  return state
}

/** Refuse to resume over a different input: same file, same size, same mtime. */
function checkResumable (file, state, identity) {
  const was = state.input || {}
  if (was.path && identity.path && (was.path !== identity.path || was.size !== identity.size || was.mtimeMs !== identity.mtimeMs)) {
    throw checkpointError(file, `it was written for ${was.path} (${was.size} bytes); the input ${identity.path} is not the same file any more (${identity.size} bytes): remove the checkpoint to start over`)
  }
}

class Checkpointer {
  constructor (file, identity, base) {
    this.file = file
    this.tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
    this.identity = identity
    this.base = base
    this.state = null
    this.lastWrite = 0
  }

  /** Note progress; written now only if the last write is old enough. */
  update (state) {
    this.state = state
    const now = Date.now()
    if (now - this.lastWrite >= WRITE_INTERVAL_MS) this.write()
  }

  /** Write the latest state now (end of run, abort, failure). */
  flush (extra = {}) {
    if (this.state) this.state = { ...this.state, ...extra }
    this.write()
  }

  write () {
    if (!this.state) return
    this.lastWrite = Date.now()
    const body = JSON.stringify({ version: VERSION, input: this.identity, ...this.state, updatedAt: new Date().toISOString() }, null, 2)
    try {
      fs.writeFileSync(this.tmp, body + '\n')
      fs.renameSync(this.tmp, this.file)
    } catch (err) {
      throw checkpointError(this.file, `cannot write it: ${err.message}`)
    }
  }
}

/** Record batches without the first `n` records (already loaded by an earlier run). */
async function * skipRecords (batches, n) {
  let left = n
  for await (const batch of batches) {
    if (left === 0) { yield batch; continue }
    const k = Math.min(left, batch.records.length)
    left -= k
    if (k === batch.records.length) {
      yield { ...batch, records: [], lines: [], offsets: [], raws: batch.raws && [] }
      continue
    }
    yield { ...batch, records: batch.records.slice(k), lines: batch.lines.slice(k), offsets: batch.offsets?.slice(k), raws: batch.raws?.slice(k) }
  }
  if (left > 0) {
    throw new PipeloadError('PIPELOAD_CHECKPOINT_INVALID', `the checkpoint says ${n} records were loaded, but the input has only ${n - left}`)
  }
}

module.exports = { Checkpointer, readCheckpoint, checkResumable, inputIdentity, skipRecords }
