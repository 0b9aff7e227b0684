'use strict'

const { PipeloadError } = require('../errors')
const { Pipe } = require('../send/pipe')
const { DryRunSink } = require('../send/dry-run')
const { openControl, dataEndpoint, connectData, dataReconnector } = require('../send/connection')
const { isCluster } = require('../send/target-kind')
const { askReplication } = require('../send/replication')
const { planLoad } = require('./plan')
const { InputSequence } = require('./sources')
const { Run, call } = require('./run')
const { checkReplaceRight } = require('./rights')

// load(): decide, then do. The plan (./plan.js) is built first and frozen; then it runs,
// in one order: the first input is opened (its header read, the templates compiled
// against it) before connecting, so those errors come first, unless its execution mode
// waits for the target (workers 'auto' may start workers on a cluster): then the input
// sequence connects first (./sources.js). The sink is opened once, by whichever asks first.

/**
 * Load a dataset into Redis. Resolves with the run's summary; rejects with a
 * PipeloadError (carrying `summary` when records were already sent).
 * @param {import('../..').LoadOptions} options
 * @returns {Promise<import('../..').Summary>}
 */
async function load (options) {
  const { plan, outputs } = await planLoad(options)
  try {
    return await execute(plan, outputs)
  } finally {
    if (outputs.rejects) try { outputs.rejects.close() } catch {} // pump() closed it and reported a failure to write
    const only = plan.inputs.length === 1 ? plan.inputs[0] : null
    if (only?.http) only.stream?.destroy() // a run stopped before reading it
  }
}

/** Run a plan: its inputs read, encoded and sent to its target; resolves with the summary. */
async function execute (plan, outputs) {
  const o = plan.options
  // The caller's to keep: a copy, not the frozen plan's.
  if (plan.resume.notice && o.onResume) call(o.onResume, 'onResume', structuredClone(plan.resume.notice))
  const run = new Run(plan, outputs)
  let opening = null
  const connect = () => (opening ??= openSink(plan, run))
  const sources = new InputSequence({ plan, run, connect })
  try {
    await sources.start()
  } catch (err) {
    if (opening) await opening.then(opened => opened.close(), () => {})
    throw err
  }
  try {
    run.resumeShape = sources.current?.resumeShape || null
    const { sink, close } = await connect()
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
}

/** The plan's target, as { sink, close }. */
async function openSink (plan, run) {
  const o = plan.options
  const input = plan.inputs[0]
  if (plan.target === 'dry-run') {
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
    await checkReplaceRight(control, o)
    const cluster = await clusterMode(plan, control)
    const connections = run.connections = await connectionsFor(control, o)
    // The cluster sink is loaded for a cluster only: a run into one server loads none of it.
    if (cluster) return require('../send/cluster').openClusterSink(o, input, run, { control, owned, connections: connections.count })
    endpoint = dataEndpoint(control)
    if (connections.count > 1) return await openLanes(o, { control, owned, endpoint, count: connections.count, input, run })
    conn = await connectData(endpoint, o.connectTimeout, o.signal, { said: o.said.connectTimeout })
    // With Sentinel, batches are kept until the master's replicas have them: where its
    // replication stands before the first (lib/send/replication.js).
    if (endpoint.sentinel) replicated = await askReplication(conn, o.connectTimeout, o.signal, o.said.connectTimeout)
  } catch (err) {
    conn?.close()
    if (owned) control.disconnect()
    throw err
  }
  const sink = new Pipe({ conn, replicated, ...pipeOptions(o, { control, endpoint, input, run }) })
  run.target = conn.target
  return {
    sink,
    close: async () => {
      sink.conn.end() // the Pipe's current connection: after a reconnect, not the first one
      if (owned) control.disconnect()
    }
  }
}

/** What a Pipe, or each Pipe of the lanes, is given besides its connection. */
function pipeOptions (o, { control, endpoint, input, run }) {
  return {
    reconnect: dataReconnector(control, endpoint, o.connectTimeout, o.signal), // with Sentinel: asks where the master is now
    window: o.window,
    timeout: o.timeout,
    retryTimeout: o.retryTimeout,
    said: o.said,
    signal: o.signal,
    file: input.name,
    onFailure: (f, batch) => run.fail(f, batch),
    onAck: b => run.acked(b),
    onReconnect: e => run.reconnected(e),
    connectTimeout: o.connectTimeout,
    written: run.written
  }
}

/** How many connections per server: { count, auto } (lib/send/io-threads.js unless 1). */
async function connectionsFor (control, o) {
  if (o.connections === 1) return { count: 1, auto: null }
  return require('../send/io-threads').connectionCount(control, { ...o, said: o.said.connectTimeout })
}

/** One server over `count` connections (lib/send/lanes.js), as { sink, close }. */
async function openLanes (o, { control, owned, endpoint, count, input, run }) {
  const { Lanes, openConnections } = require('../send/lanes')
  const conns = await openConnections(count, () => connectData(endpoint, o.connectTimeout, o.signal, { said: o.said.connectTimeout }))
  const sink = new Lanes({ conns, ...pipeOptions(o, { control, endpoint, input, run }) })
  run.target = endpoint.target
  return {
    sink,
    close: async () => {
      sink.end()
      if (owned) control.disconnect()
    }
  }
}

/** The target's kind: 'cluster' (required), 'server' (never a cluster), 'detect' (asked with INFO cluster). */
async function clusterMode (plan, control) {
  const o = plan.options
  if (plan.target === 'server') return false
  const detected = await isCluster(control, { ms: o.connectTimeout, said: o.said.connectTimeout, signal: o.signal })
  if (plan.target === 'cluster' && !detected) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'cluster is set but the server has cluster support disabled (INFO cluster: cluster_enabled:0)', { option: 'cluster' })
  }
  return detected
}

module.exports = { load }
