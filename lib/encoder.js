'use strict'

const { textLines } = require('./dry-run')
const { ByteWriter } = require('./writer')

// Records -> encoded batches: the CPU-bound middle of the pipeline, free of I/O so it runs
// the same on the main thread and in the parse worker. A batch closes at `batchSize`
// commands or `maxBatchBytes` bytes and carries what the sender needs to attribute
// replies: per record, the command count at its end and its source line.

class BatchEncoder {
  /**
   * @param {object} o
   * @param {object} o.mapper from createMapper (null for an empty input)
   * @param {'resp'|'text'} o.mode RESP for a server or redis-cli --pipe; text for --dry-run text
   */
  constructor ({ mapper, mode = 'resp', batchSize, maxBatchBytes }) {
    this.mapper = mapper
    this.text = mode === 'text'
    this.batchSize = batchSize
    this.maxBatchBytes = maxBatchBytes
    this.writer = new ByteWriter()
    this.reset()
  }

  reset () {
    this.cmds = 0
    this.records = 0
    this.ends = []
    this.lines = []
    this.failures = []
  }

  /** Encode a reader batch; returns the batches it completed (usually none or one). */
  add (records, lines, bytesRead) {
    const done = []
    const mapper = this.mapper
    const w = this.writer
    for (let i = 0; i < records.length; i++) {
      this.records++
      const start = w.pos
      let count
      try {
        if (this.text) {
          const commands = mapper.args(records[i])
          w.string(textLines(commands))
          count = commands.length
        } else {
          count = mapper.write(records[i], w)
        }
      } catch (err) {
        w.pos = start // drop the part of the record already written
        this.failures.push({ line: lines[i], code: err.code || 'PIPELOAD_MAP_FAILED', message: err.message })
        continue
      }
      this.cmds += count
      this.ends.push(this.cmds)
      this.lines.push(lines[i])
      if (this.cmds >= this.batchSize || w.pos >= this.maxBatchBytes) done.push(this.take(bytesRead))
    }
    this.bytesRead = bytesRead
    return done
  }

  /** The batch being built, even if short or empty of commands (it may carry failures). */
  take (bytesRead = this.bytesRead) {
    const batch = {
      buf: this.writer.take(),
      cmds: this.cmds,
      ends: this.ends,
      lines: this.lines,
      records: this.records,
      failures: this.failures,
      bytesRead
    }
    this.reset()
    return batch
  }

  get pending () {
    return this.records > 0
  }
}

/** Encoded batches from record batches; on an input error, what was read goes out first. */
async function * encodeRecords (recordBatches, mapper, o) {
  const encoder = new BatchEncoder({ mapper, mode: o.dryRun === 'text' ? 'text' : 'resp', batchSize: o.batchSize, maxBatchBytes: o.maxBatchBytes })
  try {
    for await (const { records, lines, bytesRead } of recordBatches) {
      yield * encoder.add(records, lines, bytesRead)
    }
  } catch (err) {
    if (encoder.pending) yield encoder.take()
    throw err
  }
  yield encoder.take() // the rest, and the final bytesRead even when no record is left
}

module.exports = { BatchEncoder, encodeRecords }
