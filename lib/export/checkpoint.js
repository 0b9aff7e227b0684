'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { PipeloadError, fsReason } = require('../errors')
const { Checkpointer } = require('../run/checkpoint')
const { refuseCheckpointPath } = require('../run/output-path')
const { targetOf } = require('../run/resume-into')
const { refuseOutputsOverInputs } = require('../run/same-file')

// export --checkpoint / --resume (docs/export.md "Resume and consistency"). The checkpoint
// records what export it belongs to (`export`: the target, --match, --type, --format and the
// output's path), each master's SCAN cursor whose keys are all written (./cursors.js), of a
// cluster `slots`: its slot map as the export began (a resume reads again the keys of slots
// moved since, ./cluster-faults.js), and `bytes`: the output's length holding them, flushed
// and fsynced before the checkpoint names it; `clean`: written as the export stopped (the
// end, Ctrl-C, an error), not on its interval, after which a kill may have come. A resume cuts the output back to `bytes` (what was
// written after the checkpoint goes) and SCANs each master on from its cursor. Only an NDJSON
// file can be cut back so (a gzipped one is written in members, one ended at each checkpoint:
// ./gzip-members.js): stdout, a stream, CSV (its header) and Parquet (its footer) are refused.

const VERSION = 1
const KIND = 'export'

function invalid (file, reason) {
  return new PipeloadError('PIPELOAD_CHECKPOINT_INVALID', `checkpoint ${file}: ${reason}`, { file })
}

/** What identifies the export a checkpoint belongs to. */
function exportIdentity (plan) {
  return {
    target: targetOf(plan.connection),
    match: plan.match ?? null,
    types: plan.types ? [...plan.types] : null,
    format: plan.format,
    output: path.resolve(plan.output)
  }
}

/** --checkpoint needs an output it can cut back: an NDJSON file (.gz too). */
function refuseUncheckpointable (plan) {
  const refuse = why => new PipeloadError('PIPELOAD_OPTION_INVALID', `checkpoint cannot be used ${why}: a resume cuts the output back to the length the checkpoint records (docs/export.md "Resume and consistency")`, { option: 'checkpoint' })
  if (typeof plan.output !== 'string') throw refuse('with stdout or a stream as the output')
  if (plan.format !== 'ndjson') throw refuse(`with --format ${plan.format}, only with ndjson`)
  // One file as both would be replaced by the other.
  refuseOutputsOverInputs([{ option: '--checkpoint', file: plan.checkpoint }, { option: 'the output', file: plan.output }], [])
}

const isCount = v => Number.isSafeInteger(v) && v >= 0
const isRange = r => Array.isArray(r) && r.length === 3 && isCount(r[0]) && isCount(r[1]) && r[0] <= r[1] && r[1] < 16384 && typeof r[2] === 'string'

/** What is wrong with a parsed export checkpoint; [] when nothing is. */
function problemsOf (state) {
  if (state === null || typeof state !== 'object' || Array.isArray(state)) return ['it is not a JSON object']
  if (state.kind !== KIND) return ['it is not the checkpoint of an export (an import\'s, perhaps)']
  if (state.version !== VERSION) return [`version ${JSON.stringify(state.version)} is not ${VERSION}`]
  const problems = []
  const e = state.export
  if (e === null || typeof e !== 'object' || typeof e.target !== 'string' || typeof e.format !== 'string' || typeof e.output !== 'string') problems.push('export is not { target, match, types, format, output }')
  if (!Array.isArray(state.masters) || state.masters.some(m => m === null || typeof m !== 'object' || typeof m.master !== 'string' || !/^\d+$/.test(m.cursor) || typeof m.done !== 'boolean')) {
    problems.push('masters is not a list of { master, cursor, done }')
  }
  if (state.slots !== undefined && !(Array.isArray(state.slots) && state.slots.every(isRange))) problems.push('slots is not a list of [start, end, master]')
  if (!isCount(state.bytes)) problems.push(`bytes is ${JSON.stringify(state.bytes)}, not a whole number ≥ 0`)
  if (!isCount(state.keys)) problems.push(`keys is ${JSON.stringify(state.keys)}, not a whole number ≥ 0`)
  if (typeof state.complete !== 'boolean') problems.push(`complete is ${JSON.stringify(state.complete)}, not true or false`)
  if (typeof state.clean !== 'boolean') problems.push(`clean is ${JSON.stringify(state.clean)}, not true or false`)
  return problems
}

/** The checkpoint at `file`, validated whole, or null when there is none. */
function readExportCheckpoint (file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw invalid(file, `cannot read it: ${fsReason(err, file)}`)
  }
  let state
  try {
    state = JSON.parse(text)
  } catch (err) {
    throw invalid(file, `not a pipeload checkpoint (not JSON${text.trim() === '' ? ': the file is empty' : `: ${err.message}`}); remove it to start over`)
  }
  const problems = problemsOf(state)
  if (problems.length) throw invalid(file, `not a valid export checkpoint: ${problems.join('; ')}; remove it to start over`)
  return state
}

const FLAGS = { target: 'target', match: '--match', types: '--type', format: '--format', output: 'output' }
// --match as a JSON string (a glob may hold spaces or quotes); the target and output as they are.
const shown = (k, v) => v === null ? 'none' : Array.isArray(v) ? v.join(',') : k === 'match' ? JSON.stringify(v) : v

/** Refuse a checkpoint of another export, naming each difference with both values. */
function checkSameExport (file, was, now) {
  const diffs = Object.keys(FLAGS).filter(k => JSON.stringify(was[k] ?? null) !== JSON.stringify(now[k]))
  if (diffs.length === 0) return
  const said = diffs.map(k => `${FLAGS[k]} ${shown(k, was[k] ?? null)} (this run: ${shown(k, now[k])})`)
  throw invalid(file, `it was written by another export: ${said.join(', ')}: resume with the same ${diffs.map(k => FLAGS[k]).join(', ')}, or remove the checkpoint to start over`)
}

/**
 * The checkpoint this export resumes from, or null to start from the first key. `resume`:
 * a checkpoint must be there and be this export's; without it, only a finished export's
 * checkpoint (or an empty file) may be at the path: an unfinished one is not overwritten.
 */
function startingExport (file, resume, identity) {
  refuseCheckpointPath(file)
  if (!resume) {
    const st = fs.statSync(file, { throwIfNoEntry: false })
    if (!st || !st.isFile() || st.size === 0) return null
    const state = readExportCheckpoint(file)
    if (!state.complete) {
      throw new PipeloadError('PIPELOAD_CHECKPOINT_UNFINISHED', `checkpoint ${file} holds an unfinished export (written ${state.updatedAt}) to ${state.export.output}: run with --resume to continue it, or delete it (or choose another --checkpoint path) to start over`, { file })
    }
    return null
  }
  const state = readExportCheckpoint(file)
  if (state === null) {
    throw new PipeloadError('PIPELOAD_CHECKPOINT_NOT_FOUND', `checkpoint ${file}: no such file, so there is nothing to resume (--resume): check the path, or run without --resume to start over`, { file })
  }
  checkSameExport(file, state.export, identity)
  if (!state.complete) checkOutput(file, state, identity.output)
  return state
}

/** The output must still hold what the checkpoint says was written: at least `bytes`, ending a line. */
function checkOutput (file, state, output) {
  let fd
  try {
    fd = fs.openSync(output, 'r')
  } catch (err) {
    throw invalid(file, `the output ${output} cannot be read to resume it: ${fsReason(err, output)}`)
  }
  try {
    const size = fs.fstatSync(fd).size
    if (size < state.bytes) throw invalid(file, `the output ${output} holds ${size.toLocaleString('en-US')} bytes, fewer than the ${state.bytes.toLocaleString('en-US')} the checkpoint says were written: it changed since; remove the checkpoint to start over`)
    // A line's end there; of a gzipped file, a gzip member's (its trailer is not checked).
    const last = Buffer.alloc(1)
    if (state.bytes > 0 && !output.endsWith('.gz') && (fs.readSync(fd, last, 0, 1, state.bytes - 1) !== 1 || last[0] !== 0x0a)) {
      throw invalid(file, `the output ${output} does not end a line at byte ${state.bytes.toLocaleString('en-US')}, where the checkpoint says its lines end: it changed since; remove the checkpoint to start over`)
    }
  } finally {
    fs.closeSync(fd)
  }
}

/** Refuse a resume whose masters are not those of the checkpoint (their cursors are theirs). */
function checkSameMasters (file, state, targets) {
  const was = state.masters.map(m => m.master).sort()
  const now = [...targets].sort()
  if (JSON.stringify(was) === JSON.stringify(now)) return
  throw invalid(file, `it was written for the masters ${was.join(', ')}; the masters now are ${now.join(', ')}: a SCAN cursor belongs to its master, so it cannot be resumed (a failover or resharding since): remove the checkpoint to start over`)
}

class ExportCheckpointer extends Checkpointer {
  body (state) {
    return JSON.stringify({ version: VERSION, kind: KIND, export: this.identity, ...state, updatedAt: new Date().toISOString() }, null, 2) + '\n'
  }
}

module.exports = { exportIdentity, refuseUncheckpointable, readExportCheckpoint, startingExport, checkSameMasters, ExportCheckpointer }
