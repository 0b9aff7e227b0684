'use strict'

const { performance } = require('node:perf_hooks')
const { PipeloadError } = require('../errors')
const { normalizeLoadOptions } = require('./options')
const { describeInputs } = require('../read/input')
const { openUrl } = require('../read/http-input')
const { autoWorkers } = require('../threads/modes')
const { Pipe } = require('../send/pipe')
const { DryRunSink } = require('../send/dry-run')
const { openControl, dataEndpoint, connectData, dataReconnector } = require('../send/connection')
const { isCluster } = require('../send/target-kind')
const { askReplication } = require('../send/replication')
const { Checkpointer, startingCheckpoint, checkResumable, checkListResumable, inputIdentity, resumePlan } = require('./checkpoint')
const { rangePlan, urlResumePlan } = require('./url-resume')
const { RejectsFile } = require('./rejects')
const { refuseOutputsOverInputs } = require('./same-file')
const { InputSequence } = require('./sources')
const { shardOf } = require('../read/shard')
const { Run, call } = require('./run')

/**
 * Load a dataset into Redis. Resolves with the run's summary; rejects with a
 * PipeloadError (carrying `summary` when records were already sent).
 * @param {import('../..').LoadOptions} options
 * @returns {Promise<import('../..').Summary>}
 */
async function load (options) {
  const o = normalizeLoadOptions(options)
  const startedAt = performance.now()
  const { label, inputs } = describeInputs(o)
  refuseOutputsOverInputs(outputsOf(o), inputs.filter(d => d.path).map(d => ({ what: 'the input', file: d.path })))
  const saved = o.checkpoint ? startingCheckpoint(o.checkpoint, o.resume) : null
  // One URL: its response's headers (format, size, identity) before the checkpoint is
  // checked, as they are part of its identity; with --resume, only the rest of its body
  // where the server allows (lib/run/url-resume.js). Of several, each is requested in its turn.
  let ranged = null
  if (inputs.length === 1 && inputs[0].kind === 'url') {
    ranged = rangePlan(o.checkpoint, saved, inputs[0], o.shard)
    await openUrl(inputs[0], o, ranged.range)
  }
  // Outputs first: a checkpoint or rejects path that cannot be written stops the run
  // before anything is read or sent.
  let resume, rejects
  try {
    resume = openCheckpoint(o, inputs, saved)
    rejects = o.rejects ? new RejectsFile(o.rejects, resume.state?.rejects ?? null) : null
  } catch (err) {
    if (inputs[0].http) inputs[0].stream?.destroy() // the response body is not read
    throw err
  }
  try {
    // --shard: each input's share (a byte range or every n-th chunk), after the checkpoint's
    // checks, as finding a byte range may scan the file.
    if (o.shard) for (const input of inputs) input.shard = await shardOf(input, o.shard, o)
    if (ranged) resume.plan = fromUrl(resume, inputs[0], ranged)
    else if (saved) resume.plan.notice = { input: label, records: saved.records, range: null, reason: null }
    if (resume.plan.notice && o.onResume) call(o.onResume, 'onResume', resume.plan.notice)
    const run = new Run(o, inputs, startedAt, resume, rejects, label)
    const sources = new InputSequence(inputs, o, resume.plan, run)
    // The first input first, so template and header errors come before connecting; but
    // `workers: 'auto'` may depend on the target being a cluster: then the sink first.
    const first = inputs[resume.plan.from]
    const auto = o.workers === 'auto' && !o.dryRun && first !== undefined && autoWorkers({ cluster: true, bytes: first.size }) > 0
    let opened = auto ? await openSink(o, inputs[0], run) : null
    sources.cluster = o.dryRun ? false : undefined
    if (opened) sources.target(opened.sink)
    try {
      await sources.start()
    } catch (err) {
      if (opened) await opened.close()
      throw err
    }
    try {
      run.resumeShape = sources.current?.resumeShape || null
      if (!opened) opened = await openSink(o, inputs[0], run)
      const { sink, close } = opened
      sources.target(sink) // the inputs after the first decide 'auto' knowing the sink
      if (sink.cluster) { // the workers hash the slots and group the commands by master
        sources.useSlots(sink.owners())
        sink.onSlotMap = () => sources.useSlots(sink.owners())
      }
      try {
        await run.pump(sources.batches(), sink)
        return run.summary(sink)
      } catch (err) {
        throw run.attach(err, sink)
      } finally {
        await close()
      }
    } finally {
      await sources.close()
    }
  } finally {
    if (rejects) try { rejects.close() } catch {} // pump() closed it and reported a failure to write
    if (inputs[0].http && inputs.length === 1) inputs[0].stream?.destroy() // a run stopped before reading it
  }
}

/** The files a run writes, by the option naming them. */
function outputsOf (o) {
  return [['checkpoint', o.checkpoint], ['rejects', o.rejects]].filter(([, file]) => file).map(([option, file]) => ({ option, file }))
}

/** A single URL resumed: from the range the server sent, or from its start (lib/run/url-resume.js). */
function fromUrl (resume, input, ranged) {
  const p = urlResumePlan(resume.state, input, ranged)
  input.start = p.start
  return { from: 0, skip: p.skip, before: p.before, notice: p.notice }
}

/**
 * The --checkpoint file and, with --resume (`state`: the checkpoint read), the state to
 * continue from. Of several inputs, the identity is the list, each input's own identity in it.
 */
function openCheckpoint (o, inputs, state) {
  if (!o.checkpoint) return { checkpointer: null, state: null, plan: resumePlan(null, inputs.length) }
  const identity = inputs.length === 1 ? inputIdentity(inputs[0], o.shard) : inputs.map(d => inputIdentity(d, o.shard))
  if (state && inputs.length === 1) checkResumable(o.checkpoint, state, identity)
  else if (state) checkListResumable(o.checkpoint, state, identity)
  const checkpointer = new Checkpointer(o.checkpoint, identity)
  checkpointer.check()
  return { checkpointer, state, plan: resumePlan(state, inputs.length) }
}

async function openSink (o, input, run) {
  const onFailure = (f, batch) => run.fail(f, batch)
  if (o.dryRun) {
    const output = o.output || process.stdout
    const sink = new DryRunSink({ output, name: output === process.stdout ? 'stdout' : 'the dry-run output', onAck: b => run.acked(b) })
    return { sink, close: async () => {} }
  }
  const owned = !o.redis
  const control = o.redis || await openControl(o)
  let conn
  let endpoint
  let replicated = null
  try {
    // The cluster sink is loaded for a cluster only: a run into one server loads none of it.
    if (await clusterMode(o, control)) return require('../send/cluster').openClusterSink(o, input, run, control, owned)
    endpoint = dataEndpoint(control)
    conn = await connectData(endpoint, o.connectTimeout, o.signal)
    // With Sentinel, batches are kept until the master's replicas have them: where its
    // replication stands before the first (lib/send/replication.js).
    if (endpoint.sentinel) replicated = await askReplication(conn, o.connectTimeout, o.signal)
  } catch (err) {
    conn?.close()
    if (owned) control.disconnect()
    throw err
  }
  const sink = new Pipe({
    conn,
    reconnect: dataReconnector(control, endpoint, o.connectTimeout, o.signal), // with Sentinel: asks where the master is now
    window: o.window,
    timeout: o.timeout,
    retryTimeout: o.retryTimeout,
    signal: o.signal,
    file: input.name,
    onFailure,
    onAck: b => run.acked(b),
    onReconnect: e => run.reconnected(e),
    replicated,
    connectTimeout: o.connectTimeout
  })
  run.target = conn.target
  return {
    sink,
    close: async () => {
      sink.conn.end() // the Pipe's current connection: after a reconnect, not the first one
      if (owned) control.disconnect()
    }
  }
}

/** cluster: true (required), false (never), undefined (asked with INFO cluster). */
async function clusterMode (o, control) {
  if (o.cluster === false) return false
  const detected = await isCluster(control, { ms: o.connectTimeout, signal: o.signal })
  if (o.cluster === true && !detected) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'cluster is set but the server has cluster support disabled (INFO cluster: cluster_enabled:0)', { option: 'cluster' })
  }
  return detected
}

module.exports = { load }
