'use strict'

const { exportIdentity, refuseUncheckpointable, startingExport, checkSameMasters, ExportCheckpointer } = require('./checkpoint')
const { CursorLedger } = require('./cursors')
const { ExportCheckpoints } = require('./checkpoints')

// --checkpoint / --resume for exportKeys(): checked before anything is connected or opened
// (./checkpoint.js), then each master's ledger (./cursors.js) and the running checkpoints
// (./checkpoints.js).

/**
 * Before connecting: the export's checkpoint file and where it starts. Returns null without
 * --checkpoint, else { file, state (null: from the first key), at (the output's length to
 * keep, null: a new file), checkpointer }.
 */
function planCheckpoint (plan) {
  if (plan.checkpoint === undefined) return null
  refuseUncheckpointable(plan)
  const identity = exportIdentity(plan)
  const state = startingExport(plan.checkpoint, plan.resume, identity)
  const checkpointer = new ExportCheckpointer(plan.checkpoint, identity)
  if (!state?.complete) checkpointer.check()
  return { file: plan.checkpoint, state, at: state ? state.bytes : null, checkpointer }
}

/**
 * Each master's ledger (`cp`: null without --checkpoint), from the checkpoint's cursor when
 * it resumes: a CursorLedger per target.
 */
function ledgersOf (cp, targets) {
  if (cp?.state) checkSameMasters(cp.file, cp.state, targets)
  const from = new Map((cp?.state?.masters ?? []).map(m => [m.master, { cursor: m.cursor, done: m.done }]))
  return targets.map(t => new CursorLedger(from.get(t)))
}

/** The running checkpoints of an export (started). */
function startCheckpoints (cp, { masters, writer, output, path, keys, slots }) {
  const before = cp.state?.keys ?? 0
  const c = new ExportCheckpoints({ checkpointer: cp.checkpointer, masters, writer, output, path, base: cp.at ?? 0, keys: () => before + keys(), slots })
  c.start()
  return c
}

/** The summary of a --resume whose checkpoint says the export is complete: nothing written. */
function nothingLeft (plan, cp) {
  const s = cp.state
  return {
    keys: 0,
    types: {},
    parts: 0,
    total: null,
    deleted: 0,
    changed: 0,
    restarted: 0,
    otherTypes: 0,
    unsupported: {},
    batches: 0,
    bytes: 0,
    output: plan.output,
    format: plan.format,
    target: s.export.target,
    masters: s.masters.map(m => m.master),
    durationMs: 0,
    keysPerSec: 0,
    checkpoint: { file: cp.file, resumed: true, keptBytes: s.bytes, nothingLeft: true, keysBefore: s.keys, finishedAt: s.updatedAt }
  }
}

/** What the summary says of the checkpoint. */
function checkpointSummary (cp) {
  return { file: cp.file, resumed: cp.state !== null, keptBytes: cp.at, nothingLeft: false, keysBefore: cp.state?.keys ?? 0 }
}

module.exports = { planCheckpoint, ledgersOf, startCheckpoints, nothingLeft, checkpointSummary }
