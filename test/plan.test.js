'use strict'
/* global describe, it, expect */

// load() decides, then does (issue 33, item 5): the plan (lib/run/plan.js) is frozen, as are
// the descriptions it holds, and a description made from another is a new object (a URL
// once requested). The batches of a run are logged by sequence number (lib/run/batch-log.js),
// not by the identity of an array they hold: two batches sharing one `lines` array keep
// their failures apart, and each batch's go to the rejects file when it is acknowledged.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { planLoad } = require('../lib/run/plan')
const { BatchLog } = require('../lib/run/batch-log')
const { describeInputs } = require('../lib/read/input')
const { openUrl } = require('../lib/read/http-input')
const { useHttpServer } = require('./helpers/http-server')

const web = useHttpServer()

function tmpDir () {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-plan-'))
}

/** Whether a value and every object in it is frozen (streams and iterables are the caller's: skipped). */
function unfrozen (value, at = 'plan', seen = new Set()) {
  if (value === null || typeof value !== 'object' || seen.has(value)) return []
  seen.add(value)
  if (typeof value.pipe === 'function' || typeof value[Symbol.asyncIterator] === 'function') return []
  const out = Object.isFrozen(value) ? [] : [at]
  for (const [k, v] of Object.entries(value)) out.push(...unfrozen(v, `${at}.${k}`, seen))
  return out
}

describe('the plan', () => {
  it('is frozen, the inputs, their shares, the modes and the checkpoint read included', async () => {
    const dir = tmpDir()
    const file = path.join(dir, 'in.csv')
    fs.writeFileSync(file, 'id\n' + Array.from({ length: 1000 }, (_, i) => i).join('\n') + '\n')
    const first = await planLoad({ input: file, command: 'SET k:{id} 1', url: 'redis://127.0.0.1:1', cluster: false, shard: '1/2', workers: 0, checkpoint: path.join(dir, 'cp.json') })
    const { plan } = first
    expect(plan.inputs[0].shard).toMatchObject({ mode: 'range', index: 1, count: 2 })
    expect(plan.modes).toEqual([{ mode: 'thread', workers: 0 }])
    expect(plan.target).toBe('server') // planning connects to nothing: the port is never asked
    // Options are the caller's values normalized: the object is frozen, not what it holds (a signal, a stream).
    expect(Object.isFrozen(plan.options)).toBe(true)
    expect(unfrozen(plan, 'plan', new Set([plan.options]))).toEqual([])
    expect(() => { plan.inputs[0].shard.range.start = 0 }).toThrow(TypeError)

    // A checkpoint to resume: read into the plan, frozen too.
    first.outputs.checkpointer.write({ records: 10, loaded: 10, errors: 0, commands: 10, skipped: 0, line: 11, complete: false })
    const { plan: resumed } = await planLoad({ input: file, command: 'SET k:{id} 1', url: 'redis://127.0.0.1:1', cluster: false, shard: '1/2', workers: 0, checkpoint: path.join(dir, 'cp.json'), resume: true })
    expect(resumed.checkpoint.state).toMatchObject({ records: 10, line: 11 })
    expect(resumed.resume).toMatchObject({ from: 0, skip: 10, before: 10 })
    expect(unfrozen(resumed, 'plan', new Set([resumed.options]))).toEqual([])
  })

  it('a URL requested is a new description: the one described is left as it was', async () => {
    web.routes.set('/data.csv', (req, res) => { res.writeHead(200, { 'content-type': 'text/csv', 'content-length': 7 }); res.end('id\n1\n2\n') })
    const o = { input: `${web.base}/data.csv`, connectTimeout: 5000 }
    const [described] = describeInputs(o).inputs
    const before = { ...described }
    const opened = await openUrl(described, o)
    opened.stream.destroy()
    expect(described).toEqual(before)
    expect(described.kind).toBe('url')
    expect(opened).toMatchObject({ kind: 'bytes', format: 'csv', size: 7, name: described.name })
    // And so the plan holds the opened one, frozen.
    const { plan } = await planLoad({ input: `${web.base}/data.csv`, command: 'SET k:{id} 1', dryRun: 'resp' })
    plan.inputs[0].stream.destroy()
    expect(plan.inputs[0]).toMatchObject({ kind: 'bytes', format: 'csv', size: 7 })
    expect(Object.isFrozen(plan.inputs[0])).toBe(true)
  })
})

describe('the batch log', () => {
  const rejectsFile = () => {
    const written = []
    return { written, add: f => written.push(f.line), close () {} }
  }
  const batch = (lines, records = lines.length) => ({ records, lines, first: null })

  it('keeps the failures of two batches that share one lines array apart, by sequence number', () => {
    const rejects = rejectsFile()
    const log = new BatchLog({ starts: false, rejects })
    const shared = [1, 2]
    const a = batch(shared)
    const b = batch(shared)
    log.sent(a, 0)
    log.sent(b, 2)
    expect([a.seq, b.seq]).toEqual([0, 1])
    log.failed(b.seq, { line: 4 })
    log.failed(a.seq, { line: 2 })
    log.failed(a.seq, { line: 1 })
    log.acked(2) // the first batch only: its failures, in input order
    expect(rejects.written).toEqual([1, 2])
    log.acked(4)
    expect(rejects.written).toEqual([1, 2, 4])
  })

  it('writes failures of no batch and of batches never acknowledged last, at close', () => {
    const rejects = rejectsFile()
    const log = new BatchLog({ starts: false, rejects })
    const a = batch([1, 2])
    log.sent(a, 0)
    log.failed(undefined, { line: 9 })
    log.failed(a.seq, { line: 2 })
    log.close()
    expect(rejects.written).toEqual([2, 9])
  })

  it('says which batch start the acknowledged prefix reaches', () => {
    const log = new BatchLog({ starts: true, rejects: null })
    log.sent({ records: 2, lines: [2, 3], first: { offset: 3, line: 2 } }, 0)
    log.sent({ records: 2, lines: [4, 5], first: { offset: 9, line: 4 } }, 2)
    expect(log.acked(1)).toEqual({ at: 0, offset: 3, line: 2 })
    expect(log.acked(3)).toEqual({ at: 2, offset: 9, line: 4 })
    expect(log.acked(4)).toBe(null)
  })
})
