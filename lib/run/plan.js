'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError } = require('../errors')
const { normalizeLoadOptions } = require('./options')
const { describeInputs } = require('../read/input')
const { openUrl } = require('../read/http-input')
const { shardOf } = require('../read/shard')
const { Checkpointer, startingCheckpoint, checkResumable, checkListResumable, inputIdentity, resumePlan } = require('./checkpoint')
const { rangePlan, urlResumePlan } = require('./url-resume')
const { RejectsFile } = require('./rejects')
const { writesOf, checkSameWrites, unchecked } = require('./resume-into')
const { refuseOutputsOverInputs } = require('./same-file')
const { modeOf } = require('../threads/modes')

// load() decides, then does (load.js). The plan is what can be known before a record is
// read or sent, decided once and frozen: the options, the inputs resolved (a single URL's
// response is in: its format, size and identity are part of the checkpoint's check), each
// input's share (--shard) and, where it does not wait for the target, its execution mode,
// the target's kind, the checkpoint read and where the run starts. Nothing changes it
// afterwards: a description made from another (a URL once requested, an input with its
// share or its start) is a new object.
//
// The outputs (the checkpoint and rejects files) are opened while planning, in the order
// their errors must come: a path that cannot be written stops the run before anything is
// read or sent, and before a --shard scan of the input. They are not part of the plan: they
// are what the run writes to (`outputs`).

/**
 * @returns {Promise<{ plan: Readonly<object>, outputs: { checkpointer: Checkpointer|null, rejects: RejectsFile|null } }>}
 */
async function planLoad (options) {
  const checked = normalizeLoadOptions(options)
  const startedAt = performance.now()
  const { label, inputs: described } = describeInputs(checked)
  if (checked.restore) refuseNotDumps(described)
  refuseOutputsOverInputs(outputsOf(checked), described.filter(d => d.path).map(d => ({ what: 'the input', file: d.path })))
  const saved = checked.checkpoint ? startingCheckpoint(checked.checkpoint, checked.resume) : null
  const o = checked.restore ? restoreOptions(checked, saved) : checked
  // One URL: its response's headers (format, size, identity) before the checkpoint is
  // checked, as they are part of its identity; with --resume, only the rest of its body
  // where the server allows (./url-resume.js). Of several, each is requested in its turn.
  let inputs = described
  let ranged = null
  if (inputs.length === 1 && inputs[0].kind === 'url') {
    ranged = rangePlan(o.checkpoint, saved, inputs[0], { shard: o.shard, restore: o.restore })
    inputs = [await openUrl(inputs[0], o, ranged.range)]
  }
  const single = inputs.length === 1 ? inputs[0] : null
  let checkpoint, outputs
  try {
    checkpoint = checkpointOf(o, inputs, saved)
    outputs = openOutputs(o, checkpoint)
  } catch (err) {
    if (single?.http) single.stream?.destroy() // the response body is not read
    throw err
  }
  try {
    // --shard: each input's share (a byte range or every n-th chunk), after the checkpoint's
    // checks, as finding a byte range may scan the file.
    if (o.shard) inputs = await shares(inputs, o)
    let resume = resumePlan(saved, inputs.length)
    if (ranged) {
      const p = urlResumePlan(saved, inputs[0], ranged)
      inputs = [{ ...inputs[0], start: p.start }]
      resume = { from: 0, skip: p.skip, before: p.before, notice: p.notice }
    } else if (saved) {
      resume = { ...resume, notice: { input: label, records: saved.records, range: null, reason: null } }
    }
    // An older pipeload's checkpoint: what it does not record is not checked, and the notice says so.
    if (saved && resume.notice) resume = { ...resume, notice: { ...resume.notice, unchecked: unchecked(saved) } }
    const plan = {
      options: Object.freeze(o),
      startedAt,
      label, // the summary's `input` for several inputs (one: its name)
      inputs: Object.freeze(inputs.map(freezeInput)),
      // Each input's execution mode where it is known now: workers 'auto' decides by the
      // target and the input's size, and a URL of several is not known until requested.
      modes: Object.freeze(inputs.map(d => o.workers === 'auto' || d.kind === 'url' ? null : Object.freeze(modeOf(d, o, o.workers)))),
      target: o.dryRun ? 'dry-run' : o.cluster === true ? 'cluster' : o.cluster === false ? 'server' : 'detect',
      checkpoint: deepFreeze(checkpoint),
      resume: deepFreeze({ notice: null, ...resume })
    }
    return { plan: Object.freeze(plan), outputs }
  } catch (err) {
    if (outputs.rejects) try { outputs.rejects.close() } catch {}
    if (single?.http) single.stream?.destroy()
    throw err
  }
}

/**
 * A restore's expiries are its start time plus each key's ttl: a resumed restore keeps its
 * first run's start (the checkpoint's `restore.startedAt`), so the keys of both runs expire
 * as one restore's would.
 */
function restoreOptions (o, saved) {
  const at = saved?.restore?.startedAt
  return Object.freeze({ ...o, restoreAt: Number.isSafeInteger(at) ? at : Date.now() })
}

/** A restore reads dumps in the NDJSON format of pipeload export (docs/export.md) only. */
function refuseNotDumps (inputs) {
  for (const d of inputs) {
    if (d.kind === 'records' || d.format === 'ndjson') continue
    const got = d.format ? `its format is ${d.format}` : 'its format is not known (stdin or a stream: --format ndjson)'
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `restore reads the NDJSON dumps of pipeload export (a .ndjson or .ndjson.gz file, or --format ndjson): ${d.name}: ${got}`, { option: 'restore' })
  }
}

/** The files a run writes, by the option naming them. */
function outputsOf (o) {
  return [['checkpoint', o.checkpoint], ['rejects', o.rejects]].filter(([, file]) => file).map(([option, file]) => ({ option, file }))
}

/**
 * The --checkpoint file: { file, state, identity, writes }, null without one. `state`: the
 * checkpoint read with --resume, checked against the inputs (of several, the identity is
 * the list, each input's own identity in it), the target and the commands (`writes`).
 */
function checkpointOf (o, inputs, state) {
  if (!o.checkpoint) return null
  const identity = inputs.length === 1 ? inputIdentity(inputs[0], o.shard) : inputs.map(d => inputIdentity(d, o.shard))
  if (state && inputs.length === 1) checkResumable(o.checkpoint, state, identity)
  else if (state) checkListResumable(o.checkpoint, state, identity)
  // Where and with what: before anything is opened or sent, and before the rejects file is cut.
  const writes = writesOf(o)
  if (state) checkSameWrites(o.checkpoint, state, writes)
  return { file: o.checkpoint, state, identity, writes }
}

/** The checkpoint, checked to be writable, and the rejects file (cut back to the checkpoint's size on resume). */
function openOutputs (o, checkpoint) {
  let checkpointer = null
  if (checkpoint) {
    // Its own copy of the identity: a URL of several completes its entry once requested.
    const { identity, writes } = checkpoint
    checkpointer = new Checkpointer(checkpoint.file, Array.isArray(identity) ? identity.slice() : identity, writes)
    checkpointer.check()
  }
  const rejects = o.rejects ? new RejectsFile(o.rejects, checkpoint?.state?.rejects ?? null) : null
  return { checkpointer, rejects }
}

/** The inputs, each with its --shard share (lib/read/shard.js), one after another. */
async function shares (inputs, o) {
  const out = []
  for (const d of inputs) out.push({ ...d, shard: await shardOf(d, o.shard, o) })
  return out
}

/**
 * A description frozen, and what in it is ours (its share, its start, its HTTP identity);
 * not what it holds of the caller's or of the system (a stream, an iterable, a buffer).
 */
function freezeInput (d) {
  for (const key of ['shard', 'start', 'range', 'http']) if (d[key]) deepFreeze(d[key])
  return Object.freeze(d)
}

function deepFreeze (value) {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  for (const v of Object.values(value)) deepFreeze(v)
  return Object.freeze(value)
}

module.exports = { planLoad }
