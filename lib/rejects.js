'use strict'

const fs = require('node:fs')
const { PipeloadError, where } = require('./errors')

// The rejects file: one NDJSON line per failed record, input errors and error replies
// alike: { file, line, offset, code, reason, source, raw }. `raw` is the record's input
// text (a CSV row, an NDJSON line, a JSON array element; JSON for records of an iterable),
// null when it is not known (a record over maxRecordSize). Lines are buffered and written
// synchronously in blocks: failures are rare, and a crash loses at most one block.

const FLUSH_AT = 64 * 1024

class RejectsFile {
  constructor (path) {
    this.path = path
    try {
      this.fd = fs.openSync(path, 'w')
    } catch (err) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `rejects: cannot write ${path}: ${err.code === 'ENOENT' ? 'no such directory' : err.code === 'EACCES' ? 'permission denied' : err.message}`,
        { option: 'rejects', cause: err })
    }
    this.pending = ''
    this.count = 0
  }

  /** One failed record (a failure as in summary.failures, plus raw). */
  add (f) {
    const prefix = where(f.file, f.line) + ': '
    const reason = String(f.message).startsWith(prefix) ? String(f.message).slice(prefix.length) : String(f.message)
    const entry = { file: f.file, line: f.line ?? null, offset: f.offset ?? null, code: f.code, reason, source: f.source, raw: f.raw ?? null }
    this.pending += JSON.stringify(entry) + '\n'
    this.count++
    if (this.pending.length >= FLUSH_AT) this.flush()
  }

  flush () {
    if (this.pending === '' || this.fd === null) return
    const buf = Buffer.from(this.pending)
    this.pending = ''
    let at = 0
    while (at < buf.length) at += fs.writeSync(this.fd, buf, at)
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
