'use strict'

const fs = require('node:fs')
const { setTimeout: sleep } = require('node:timers/promises')
const { PipeloadError, fsReason } = require('../errors')

// The checkpoints of an export as it runs (./checkpoint.js says what one holds): every
// WRITE_INTERVAL_MS, at the end and when it stops (Ctrl-C, an error). Each takes the cut
// synchronously, between two records: each master's cursor whose keys are all handed to the
// writer, and the output length those records reach once the writer's buffer is flushed.
// The checkpoint is written only after the file holds that length and is fsynced: a
// checkpoint never names bytes that a crash could lose.

const WRITE_INTERVAL_MS = 500

class ExportCheckpoints {
  /**
   * @param {object} o checkpointer (./checkpoint.js ExportCheckpointer), masters() (each
   *   master's { master, cursor, done } now: its address and its ledger's mark), writer (its flush()), output (./output.js), path (the output file),
   *   base (bytes kept from the run before), keys() (keys written so far), slots() (a
   *   cluster's slot map as the export began; null for one server)
   */
  constructor ({ checkpointer, masters, writer, output, path, base, keys, slots = null }) {
    Object.assign(this, { checkpointer, masters, writer, output, path, base, keys, slots })
    this.saving = null
    this.timer = null
    let fail
    this.failure = new Promise((resolve, reject) => { fail = reject })
    this.failure.catch(() => {})
    this.fail = fail
  }

  start () {
    this.timer = setInterval(() => {
      if (this.saving === null) this.saving = this.save(false, false).catch(this.fail).finally(() => { this.saving = null })
    }, WRITE_INTERVAL_MS)
    this.timer.unref()
  }

  /** The last write (`clean`: a checkpoint not followed by a kill): complete, or where the export stopped. */
  async stop (complete) {
    clearInterval(this.timer)
    if (this.saving) await this.saving.catch(() => {})
    await this.save(complete, true)
  }

  async save (complete, clean) {
    const masters = this.masters()
    const keys = this.keys()
    // The writer's buffer goes to the output now. Its drain is not awaited: the next record's
    // write, which flushes again within 64 KiB, waits for it; so a tick adds one buffer at most.
    const flushed = this.writer.flush()
    if (flushed) flushed.catch(() => {})
    const bytes = await this.length()
    await syncFile(this.path)
    this.checkpointer.write({ masters, ...(this.slots ? { slots: this.slots() } : {}), bytes: this.base + bytes, keys, complete, clean })
  }

  /** This run's bytes of the file once what was handed to the output is in it (a gzip member ended). */
  async length () {
    const { stream, failure } = this.output
    if (this.path.endsWith('.gz')) return stream.writableFinished ? this.output.written() : Promise.race([stream.cut(), failure])
    const bytes = stream.handed
    while (this.output.written() < bytes) await Promise.race([sleep(5), failure])
    return bytes
  }
}

/**
 * fsync the output's data: the checkpoint must not outlive it after a power loss. Off the
 * event loop (the reads go on meanwhile): synchronous, it took some 15% of an export's time.
 */
async function syncFile (file) {
  let handle
  try {
    handle = await fs.promises.open(file, 'r')
    await handle.datasync()
  } catch (err) {
    throw new PipeloadError('PIPELOAD_OUTPUT_FAILED', `${file} could not be synced to disk for the checkpoint: ${fsReason(err, file)}`, { output: 'export', file, cause: err })
  } finally {
    await handle?.close()
  }
}

module.exports = { ExportCheckpoints, WRITE_INTERVAL_MS }
