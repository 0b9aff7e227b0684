'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { PipeloadError, where, fsReason } = require('../errors')
const { openRejects } = require('./output-path')

// The rejects file: one NDJSON line per failed record, input errors and error replies
// alike: { file, line, offset, code, reason, source, raw }. `raw` is the record's input
// text (a CSV row, an NDJSON line, a JSON array element; JSON for records of an iterable),
// null when it is not known (a record over maxRecordSize). Lines are buffered and written
// synchronously in blocks: failures are rare. With a checkpoint, sync() writes and fsyncs
// what is buffered and says how many bytes the file holds: the checkpoint keeps that, and a
// resumed run cuts the file back to it (dropping a torn last line, and the lines of records
// after the checkpoint, which it produces again) and appends.

const FLUSH_AT = 64 * 1024

class RejectsFile {
  /**
   * Opened before anything is sent, so a path that cannot be written stops the run first.
   * @param {string} file
   * @param {{ path, bytes, records } | null} from what a checkpoint says of this file: continue after it
   */
  constructor (file, from = null) {
    this.path = file
    this.resolved = path.resolve(file)
    this.pending = ''
    this.pendingCount = 0
    this.count = 0 // lines in the file (written, not buffered)
    this.bytes = 0 // bytes in the file, written by this run or the ones it resumes
    this.synced = -1
    this.failed = false
    const resume = from !== null && from.path === this.resolved
    try {
      if (resume) this.cutBack(from)
      // O_APPEND: after the cut, every write goes to the end whatever the file offset.
      this.fd = openRejects(file, resume ? 'a' : 'w')
    } catch (err) {
      if (err instanceof PipeloadError) throw err
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `rejects ${file} cannot be written: ${fsReason(err, file)}`,
        { option: 'rejects', file, cause: err })
    }
  }

  /** Resume: drop what was written after the checkpoint; the file must hold what it says. */
  cutBack (from) {
    const st = fs.statSync(this.path, { throwIfNoEntry: false })
    const size = st ? (st.isFile() ? st.size : null) : 0
    if (size !== null && size < from.bytes) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID',
        `rejects ${this.path} has ${size} bytes, but the checkpoint says ${from.bytes} were written to it: it is not the rejects file of the run being resumed (remove the checkpoint to start over)`,
        { option: 'rejects', file: this.path })
    }
    if (size !== null && size > from.bytes) fs.truncateSync(this.path, from.bytes)
    this.bytes = from.bytes
    this.count = from.records
  }

  /** One failed record (a failure as in summary.failures, plus raw). */
  add (f) {
    if (this.failed) return
    const prefix = where(f.file, f.line) + ': '
    const reason = String(f.message).startsWith(prefix) ? String(f.message).slice(prefix.length) : String(f.message)
    const entry = { file: f.file, line: f.line ?? null, offset: f.offset ?? null, code: f.code, reason, source: f.source, raw: f.raw ?? null }
    this.pending += JSON.stringify(entry) + '\n'
    this.pendingCount++
    if (this.pending.length >= FLUSH_AT) this.flush()
  }

  /** Write what is buffered; a failure (a full disk) is PIPELOAD_OUTPUT_FAILED and ends the writes. */
  flush () {
    if (this.pending === '' || this.fd === null || this.failed) return
    const buf = Buffer.from(this.pending)
    const lines = this.pendingCount
    this.pending = ''
    this.pendingCount = 0
    let at = 0
    try {
      while (at < buf.length) at += fs.writeSync(this.fd, buf, at)
    } catch (err) {
      this.failed = true
      this.keepWholeLines(buf, at)
      throw new PipeloadError('PIPELOAD_OUTPUT_FAILED', `rejects ${this.path} could not be written: ${fsReason(err, this.path)}`,
        { output: 'rejects', file: this.path, cause: err })
    }
    this.bytes += buf.length
    this.count += lines
  }

  /**
   * A write that failed part-way (a full disk takes what fits): keep the lines of `buf`
   * that reached the file whole, counted, and cut off the torn one after them, so the file
   * and `count` agree and no line is half there as if complete.
   */
  keepWholeLines (buf, written) {
    const whole = written > 0 ? buf.lastIndexOf(10, written - 1) + 1 : 0 // bytes up to the last newline written
    let lines = 0
    for (let i = buf.indexOf(10); i !== -1 && i < whole; i = buf.indexOf(10, i + 1)) lines++
    if (whole < written) {
      try {
        fs.ftruncateSync(this.fd, this.bytes + whole)
      } catch {} // a device (/dev/full) has nothing to cut, and took nothing
    }
    this.bytes += whole
    this.count += lines
  }

  /** Everything added so far on disk: the state a checkpoint may record. */
  sync () {
    this.flush()
    if (this.synced !== this.bytes) {
      try {
        fs.fsyncSync(this.fd)
      } catch (err) {
        // A device or pipe (--rejects /dev/stderr) has nothing to sync.
        if (err.code !== 'EINVAL' && err.code !== 'ENOTSUP' && err.code !== 'EROFS') {
          this.failed = true
          throw new PipeloadError('PIPELOAD_OUTPUT_FAILED', `rejects ${this.path} could not be written: ${fsReason(err, this.path)}`,
            { output: 'rejects', file: this.path, cause: err })
        }
      }
      this.synced = this.bytes
    }
    return { path: this.resolved, bytes: this.bytes, records: this.count }
  }

  close () {
    if (this.fd === null) return
    try {
      this.flush()
    } finally {
      fs.closeSync(this.fd)
      this.fd = null
    }
  }
}

module.exports = { RejectsFile }
