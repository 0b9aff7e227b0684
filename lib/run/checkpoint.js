'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { PipeloadError, fsReason } = require('../errors')
const { displayUrl } = require('../read/http-input')
const { refuseCheckpointPath, notReplaceable, openTemp } = require('./output-path')
const { writesProblems } = require('./resume-into')

// --checkpoint / --resume. The checkpoint file records how many input records, from the
// start, are acknowledged by the server (batches are acknowledged in order, so that is a
// prefix of the input), with the running totals and, with --rejects, how many bytes of the
// rejects file hold the failures of that prefix. It is replaced atomically (write a
// temporary file, fsync it, rename it over the old one), at most once per interval and at
// the end, so a crash at any moment leaves the previous or the next state, never a torn
// one. Resuming re-reads the input and skips that many records; anything acknowledged
// after the last write is sent again (at-least-once, like a reconnect). `next` says where
// a record at or before the prefix's end starts, so that an http(s) input can be resumed
// with a Range request (lib/run/url-resume.js).
//
// Several inputs (a list, a pattern): `inputs` holds each one's identity, in load order, and
// `files` each one's counts and whether it is complete (read to its end and acknowledged).
// A resumed run does not read the complete ones, skips the counted records of the first
// incomplete one and reads the rest from their start. The totals are over them all.
//
// `target` and `templates` (or `map`) say where and with what the records were loaded
// (./resume-into.js): a resume into another target or with other commands is refused.
// `clean` is false while a run goes, true in the last write of a run that stopped with every
// command it sent answered (the end, Ctrl-C, an error): a resume from a checkpoint that is
// not clean re-sends what was acknowledged after its last write, which may run twice. A
// checkpoint of an older pipeload has none of these: it resumes unchecked, and says so.

const VERSION = 1
const WRITE_INTERVAL_MS = 500

/**
 * What identifies the input: a file by path, size and modification time; a URL by its
 * shown form (no credentials, no query) and what the server said: ETag, Last-Modified,
 * Content-Length.
 */
function inputIdentity (desc, shard = null) {
  // --shard: each shard loads its own records, so its checkpoint is its own.
  const which = shard ? { shard: `${shard.index}/${shard.count}` } : {}
  if (desc.http) return { name: desc.name, ...desc.http, ...which }
  if (desc.kind === 'url') return { name: desc.name, url: displayUrl(desc.url), ...which } // one of several, not requested yet
  if (desc.kind !== 'bytes' || !desc.path) return { name: desc.name, ...which }
  const st = fs.statSync(desc.path)
  return { name: desc.name, path: path.resolve(desc.path), size: st.size, mtimeMs: st.mtimeMs, ...which }
}

function checkpointError (file, reason) {
  return new PipeloadError('PIPELOAD_CHECKPOINT_INVALID', `checkpoint ${file}: ${reason}`, { file })
}

/** An fs error as a few words for a message. */
const isCount = v => Number.isSafeInteger(v) && v >= 0

/** Every way a parsed checkpoint is not one this version can resume from; [] when it is. */
function checkpointProblems (state) {
  if (state === null || typeof state !== 'object' || Array.isArray(state)) return ['it is not a JSON object']
  if (state.kind === 'export') return ['it is the checkpoint of an export (pipeload export --checkpoint), not of an import']
  if (state.version !== VERSION) return [`version ${JSON.stringify(state.version)} is not ${VERSION}, the version this pipeload writes`]
  const problems = []
  const count = name => {
    if (!(name in state)) problems.push(`${name} is missing`)
    else if (!isCount(state[name])) problems.push(`${name} is ${JSON.stringify(state[name])}, not a whole number ≥ 0`)
  }
  for (const name of ['records', 'loaded', 'errors', 'commands']) count(name)
  if (problems.length === 0 && state.loaded + state.errors > state.records) {
    problems.push(`loaded (${state.loaded}) and errors (${state.errors}) add up to more than records (${state.records})`)
  }
  if (state.inputs !== undefined) problems.push(...listProblems(state))
  else problems.push(...inputProblems(state.input, 'input'))
  if (state.line !== undefined && state.line !== null && !(Number.isSafeInteger(state.line) && state.line >= 1)) {
    problems.push(`line is ${JSON.stringify(state.line)}, not a line number`)
  }
  const next = state.next
  if (next !== undefined && next !== null) problems.push(...nextProblems(next, state.records))
  if (state.complete !== undefined && typeof state.complete !== 'boolean') problems.push(`complete is ${JSON.stringify(state.complete)}, not true or false`)
  problems.push(...writesProblems(state))
  const r = state.rejects
  if (r !== undefined && r !== null && (typeof r !== 'object' || typeof r.path !== 'string' || !isCount(r.bytes) || !isCount(r.records))) {
    problems.push('rejects is not { path, bytes, records }')
  }
  return problems
}

/**
 * `next`: where the record after a prefix of `records` (at most the acknowledged ones)
 * starts: its byte offset in the decompressed input and its line, with what a reader needs
 * to begin there (`columns`: the CSV header, `fields` per record, `gzip`: the offset is not
 * the source's).
 */
function nextProblems (next, records) {
  if (typeof next !== 'object' || Array.isArray(next)) return ['next is not { records, offset, line }']
  const problems = []
  if (!isCount(next.records) || (isCount(records) && next.records > records)) problems.push(`next.records is ${JSON.stringify(next.records)}, not a whole number ≤ records`)
  if (!isCount(next.offset)) problems.push(`next.offset is ${JSON.stringify(next.offset)}, not a byte offset`)
  if (!(Number.isSafeInteger(next.line) && next.line >= 1)) problems.push(`next.line is ${JSON.stringify(next.line)}, not a line number`)
  if (next.gzip !== undefined && typeof next.gzip !== 'boolean') problems.push(`next.gzip is ${JSON.stringify(next.gzip)}, not true or false`)
  if (next.columns !== undefined && !(Array.isArray(next.columns) && next.columns.every(c => typeof c === 'string'))) problems.push('next.columns is not a list of column names')
  if (next.fields !== undefined && !(Number.isSafeInteger(next.fields) && next.fields > 0)) problems.push(`next.fields is ${JSON.stringify(next.fields)}, not a positive whole number`)
  return problems
}

/** What is wrong with one input's identity (`label`: where it is in the checkpoint). */
function inputProblems (input, label) {
  if (input === null || typeof input !== 'object' || typeof input.name !== 'string') return [`${label} is missing or has no name`]
  if (input.path !== undefined && (typeof input.path !== 'string' || !isCount(input.size) || !Number.isFinite(input.mtimeMs))) {
    return [`${label} names a file without a valid size and modification time`]
  }
  if (input.url !== undefined && typeof input.url !== 'string') return [`${label}.url is not a string`]
  if (input.shard !== undefined && !(typeof input.shard === 'string' && /^\d+\/\d+$/.test(input.shard))) return [`${label}.shard is ${JSON.stringify(input.shard)}, not "i/n"`]
  return []
}

/** Several inputs: each one's identity, and as many `files` entries, the complete ones first. */
function listProblems (state) {
  const { inputs, files } = state
  if (!Array.isArray(inputs) || inputs.length < 2) return ['inputs is not a list of two or more inputs']
  const problems = inputs.flatMap((input, i) => inputProblems(input, `inputs[${i}]`))
  if (!Array.isArray(files) || files.length !== inputs.length) return [...problems, `files is not a list of ${inputs.length} entries, one per input`]
  let total = 0
  let incomplete = false
  for (const [i, f] of files.entries()) {
    if (f === null || typeof f !== 'object' || !['records', 'loaded', 'errors', 'commands'].every(k => isCount(f[k])) || typeof f.complete !== 'boolean') {
      problems.push(`files[${i}] is not { records, loaded, errors, commands, complete }`)
      continue
    }
    total += f.records
    if (f.complete && incomplete) problems.push(`files[${i}] is complete, but an input before it is not`)
    incomplete = incomplete || !f.complete
  }
  if (problems.length === 0 && total !== state.records) problems.push(`the records of files add up to ${total}, not records (${state.records})`)
  return problems
}

/** The saved state, validated whole, or null when the file does not exist. */
function readCheckpoint (file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw checkpointError(file, `cannot read it: ${fsReason(err, file)}`)
  }
  let state
  try {
    state = JSON.parse(text)
  } catch (err) {
    throw checkpointError(file, `not a pipeload checkpoint (not JSON${text.trim() === '' ? ': the file is empty' : `: ${err.message}`}); remove it to start over`)
  }
  const problems = checkpointProblems(state)
  if (problems.length) throw checkpointError(file, `not a valid pipeload checkpoint: ${problems.join('; ')}; remove it to start over`)
  return state
}

/**
 * The checkpoint this run continues from, or null to start at the first record; never a
 * silent restart. `resume`: true (a checkpoint must be there: a mistyped path would load
 * everything again), 'if-present' (resume if there is one, else start), false (start; the
 * path may hold only a finished run's checkpoint, which is replaced, or an empty file).
 */
function startingCheckpoint (file, resume) {
  refuseCheckpointPath(file) // before reading it: a FIFO would block the read
  if (resume) {
    const state = readCheckpoint(file)
    if (state === null && resume !== 'if-present') {
      throw new PipeloadError('PIPELOAD_CHECKPOINT_NOT_FOUND',
        `checkpoint ${file}: no such file, so there is nothing to resume (--resume): check the path; to start from the first record, run without --resume, or pass --resume-if-present to resume when a checkpoint is there and start otherwise`,
        { file })
    }
    return state
  }
  const st = statOrNull(file)
  if (!st || !st.isFile() || st.size === 0) return null // nothing to lose (a directory, a path under a file: Checkpointer#check says so)
  const state = readCheckpoint(file)
  if (state.complete !== true) {
    const at = state.updatedAt ? ` (written ${state.updatedAt})` : ''
    throw new PipeloadError('PIPELOAD_CHECKPOINT_UNFINISHED',
      `checkpoint ${file} holds an unfinished run${at}: ${state.records.toLocaleString('en-US')} records of ${state.inputs ? inputs(state.inputs) : state.input.path || state.input.url || state.input.name} loaded; run with --resume to continue it, or delete it (or choose another --checkpoint path) to start over`,
      { file })
  }
  return null
}

function statOrNull (file) {
  try {
    return fs.statSync(file)
  } catch {
    return null
  }
}

/**
 * Refuse to resume over a different input: same file, same size, same mtime; a stream or an
 * iterable (no path) only over one of the same name, and never a file's checkpoint over a
 * stream or the other way round; and only by the same --shard (or none) that wrote it.
 */
function checkResumable (file, state, identity) {
  if (state.inputs) {
    throw checkpointError(file, `it was written for ${inputs(state.inputs)}; the input is ${identity.url || identity.path || identity.name}: remove the checkpoint to start over`)
  }
  const was = state.input || {}
  if (was.url || identity.url) checkUrlResumable(file, was, identity)
  else checkSameInput(file, was, identity)
  if (was.shard !== identity.shard) {
    const shard = s => s ? `shard ${s}` : 'a run without --shard'
    throw checkpointError(file, `it was written by ${shard(was.shard)} of ${was.path || was.url || was.name}; this is ${shard(identity.shard)}: resume with ${was.shard ? `--shard ${was.shard}` : 'no --shard'}, or remove the checkpoint to start over`)
  }
}

function checkSameInput (file, was, identity) {
  if (was.path && identity.path && was.path !== identity.path) {
    throw checkpointError(file, `it was written for ${was.path} (${was.size} bytes); the input is ${identity.path} (${identity.size} bytes): remove the checkpoint to start over`)
  }
  if (was.path && identity.path && (was.size !== identity.size || was.mtimeMs !== identity.mtimeMs)) {
    throw checkpointError(file, `the input ${identity.path} is not the same file any more: ${fileChanges(was, identity)} since the checkpoint was written: remove the checkpoint to start over`)
  }
  if (!(was.path && identity.path) && (Boolean(was.path) !== Boolean(identity.path) || was.name !== identity.name)) {
    throw checkpointError(file, `it was written for ${was.path || was.name}; the input is ${identity.path || identity.name}: remove the checkpoint to start over`)
  }
}

/** What changed of a file: `size 105 → 112 bytes, modified 2024-05-01T10:00:00.000Z → …`. */
function fileChanges (was, now) {
  const changes = []
  if (was.size !== now.size) changes.push(`size ${was.size.toLocaleString('en-US')} → ${now.size.toLocaleString('en-US')} bytes`)
  if (was.mtimeMs !== now.mtimeMs) {
    const [a, b] = [was.mtimeMs, now.mtimeMs].map(ms => new Date(ms).toISOString())
    // Within one millisecond the ISO times read alike: then the numbers (ms since 1970) tell.
    changes.push(a === b ? `modified ${was.mtimeMs} → ${now.mtimeMs} (ms since 1970)` : `modified ${a} → ${b}`)
  }
  return changes.join(', ')
}

/**
 * Several inputs: the same list, in the same order, each input the same as for one input
 * (a file by path, size and mtime). A URL's response is compared when it is requested,
 * and only when records of it are to be skipped (checkUrlResumable).
 */
function checkListResumable (file, state, identities) {
  const now = inputs(identities)
  const was = state.inputs
  if (!was) throw checkpointError(file, `it was written for ${state.input.path || state.input.url || state.input.name}; the inputs are ${now}: remove the checkpoint to start over`)
  const same = (w, id) => w.name === id.name && (w.path ?? null) === (id.path ?? null) && (w.url ?? null) === (id.url ?? null) && (w.shard ?? null) === (id.shard ?? null)
  if (was.length !== identities.length || was.some((w, i) => !same(w, identities[i]))) {
    throw checkpointError(file, `it was written for ${inputs(was)}; the inputs are ${now} (a different list): remove the checkpoint to start over`)
  }
  for (const [i, id] of identities.entries()) {
    if (!id.url) checkResumable(file, { input: was[i] }, id)
  }
}

/** A list of inputs for a message: its first few, and how many. */
function inputs (list) {
  const names = list.slice(0, 3).map(i => i.path || i.url || i.name)
  return `the ${list.length} inputs ${names.join(', ')}${list.length > 3 ? ', …' : ''}`
}

/**
 * Where a run starts: the first input to read (`from`), the records of it to skip, and the
 * records of the run before its first ({$n} goes on from there).
 */
function resumePlan (state, count) {
  if (!state) return { from: 0, skip: 0, before: 0 }
  if (!state.files) return { from: 0, skip: state.records, before: state.records }
  const from = state.files.findIndex(f => !f.complete)
  if (from === -1) return { from: count, skip: 0, before: state.records }
  return { from, skip: state.files[from].records, before: state.records }
}

/**
 * A URL is re-read from its start and its first records skipped, like a file; only over the
 * same URL, and only when the server says something that shows the content is unchanged
 * (the same ETag, Last-Modified and Content-Length as before).
 */
function checkUrlResumable (file, was, identity) {
  if (!was.url || !identity.url || was.url !== identity.url) {
    throw checkpointError(file, `it was written for ${was.url || was.path || was.name}; the input is ${identity.url || identity.path || identity.name}: remove the checkpoint to start over`)
  }
  const changed = []
  if (was.etag !== identity.etag) changed.push(`ETag ${was.etag ?? 'none'} → ${identity.etag ?? 'none'}`)
  if (was.lastModified !== identity.lastModified) changed.push(`Last-Modified ${was.lastModified ?? 'none'} → ${identity.lastModified ?? 'none'}`)
  if (was.size !== identity.size) changed.push(`Content-Length ${was.size ?? 'none'} → ${identity.size ?? 'none'}`)
  if (changed.length) {
    throw checkpointError(file, `${identity.url} changed since the checkpoint was written (${changed.join(', ')}): remove the checkpoint to start over`)
  }
  if (identity.etag === null && identity.lastModified === null) {
    throw checkpointError(file, `${identity.url} has no ETag or Last-Modified, so it cannot be shown to be the input the checkpoint was written for: remove the checkpoint to start over`)
  }
}

class Checkpointer {
  /**
   * @param {object|object[]} identity the input's, or of several inputs, the list of theirs
   * @param {object} writes the target and the commands (./resume-into.js writesOf)
   */
  constructor (file, identity, writes = {}) {
    this.file = file
    this.writes = writes
    this.tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
    this.identity = identity
    this.lastWrite = 0
    this.failed = false
  }

  /**
   * Before anything is sent: the checkpoint can be written where it was asked for (a
   * missing directory, a path under a file, a directory in its place, no permission).
   */
  check () {
    let reason = null
    try {
      refuseCheckpointPath(this.file)
      if (fs.statSync(this.file, { throwIfNoEntry: false })?.isDirectory()) reason = 'it is a directory'
      else {
        fs.closeSync(openTemp(this.tmp))
        fs.unlinkSync(this.tmp)
      }
    } catch (err) {
      if (err instanceof PipeloadError) throw err
      reason = fsReason(err, this.file)
    }
    if (reason !== null) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `checkpoint ${this.file} cannot be written: ${reason}`, { option: 'checkpoint', file: this.file })
    }
  }

  /** Whether the last write is old enough for another. */
  due () {
    return !this.failed && Date.now() - this.lastWrite >= WRITE_INTERVAL_MS
  }

  /** The file's text for `state`. */
  body (state) {
    return JSON.stringify({ version: VERSION, [Array.isArray(this.identity) ? 'inputs' : 'input']: this.identity, ...this.writes, ...state, updatedAt: new Date().toISOString() }, null, 2) + '\n'
  }

  /** Replace the checkpoint with `state`; a failure is PIPELOAD_OUTPUT_FAILED and ends the writes. */
  write (state) {
    if (this.failed) return
    this.lastWrite = Date.now()
    const body = this.body(state)
    let fd = null
    let opened = false // only then is the temporary file ours to remove
    try {
      fd = openTemp(this.tmp)
      opened = true
      fs.writeFileSync(fd, body)
      fs.fsyncSync(fd) // the rename must not outlive the bytes after a power loss
      fs.closeSync(fd)
      fd = null
      // The path may have become something a rename would destroy since the run began.
      const why = notReplaceable(this.file)
      if (why !== null) throw Object.assign(new Error(`${why}: not replaced`), { code: 'ENOTREG' })
      fs.renameSync(this.tmp, this.file)
    } catch (err) {
      this.failed = true
      if (fd !== null) try { fs.closeSync(fd) } catch {}
      if (opened) try { fs.unlinkSync(this.tmp) } catch {}
      throw new PipeloadError('PIPELOAD_OUTPUT_FAILED', `checkpoint ${this.file} could not be written: ${fsReason(err, this.file)}`,
        { output: 'checkpoint', file: this.file, cause: err })
    }
  }
}

module.exports = { Checkpointer, readCheckpoint, startingCheckpoint, checkResumable, checkListResumable, checkUrlResumable, checkpointProblems, inputIdentity, resumePlan }
