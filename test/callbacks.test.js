'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 22 item 7: a caller's callback that throws, or an output stream whose write() throws
// or that emits 'error', makes load() (and bench()) reject, always, with a PipeloadError
// whose code says what failed and whose `cause` is what was thrown: never a plain Error,
// never a promise that does not settle. Each case runs under a deadline.

const path = require('node:path')
const { Writable } = require('node:stream')
const { useServer } = require('./helpers/redis-server')
const { load, bench, PipeloadError } = require('../lib')
const { scaledMs } = require('./helpers/wait')

let srv
let redis
let write
let tmp
useServer('pipeload-callbacks-', s => { ({ srv, redis, write, tmp } = s) })

const ROWS = 20000 // batches of 100: 200 batches, many progress calls and replies

function csv (name) {
  let text = 'id,v\n'
  for (let i = 1; i <= ROWS; i++) text += `${i},v${i}\n`
  return write(name, text)
}

/** The promise's rejection, or a failure of the test if it does not settle within 10 s (on a quiet machine; scaled). */
async function rejection (promise) {
  let timer
  const ms = scaledMs(10_000)
  const deadline = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(`load() did not settle within ${ms} ms`)), ms) })
  try {
    return await Promise.race([promise.then(() => { throw new Error('load() resolved') }, err => err), deadline])
  } finally {
    clearTimeout(timer)
  }
}

describe('a callback that throws', () => {
  it('onProgress: PIPELOAD_CALLBACK_FAILED naming onProgress, the thrown error as cause', async () => {
    const boom = new Error('progress boom')
    const err = await rejection(load({ url: srv.url, input: csv('p.csv'), command: 'SET cbp:{id} {v}', batchSize: 100, progressInterval: 1, onProgress: () => { throw boom } }))
    expect(err).toBeInstanceOf(PipeloadError)
    expect(err).toMatchObject({ code: 'PIPELOAD_CALLBACK_FAILED', callback: 'onProgress', exitCode: 70, message: 'the onProgress callback threw: progress boom' })
    expect(err.cause).toBe(boom)
    expect(err.summary.records).toBeLessThan(ROWS) // it stopped the run
  })

  it('onFailure called from a reply (WRONGTYPE): rejects with PIPELOAD_CALLBACK_FAILED, the replies awaited', async () => {
    await redis.set('cbf:777', 'a string')
    const boom = new TypeError('failure boom')
    const err = await rejection(load({ url: srv.url, input: csv('f.csv'), command: 'HSET cbf:{id} v {v}', batchSize: 100, onError: 'skip', onFailure: () => { throw boom } }))
    expect(err).toMatchObject({ code: 'PIPELOAD_CALLBACK_FAILED', callback: 'onFailure' })
    expect(err.cause).toBe(boom)
    expect(err.summary.errors).toBe(1)
    expect(err.summary.records).toBeLessThan(ROWS) // no more reading after it
    expect(err.summary.loaded + err.summary.errors).toBe(err.summary.records) // every record read was answered
  })

  it('onFailure called for a bad input row (this thread): the same', async () => {
    let text = 'id,v\n'
    for (let i = 1; i <= 3000; i++) text += i === 1500 ? `${i}\n` : `${i},v${i}\n`
    const err = await rejection(load({ url: srv.url, input: write('bad.csv', text), command: 'SET cbi:{id} {v}', batchSize: 100, onError: 'skip', onFailure: () => { throw new Error('input boom') } }))
    expect(err).toMatchObject({ code: 'PIPELOAD_CALLBACK_FAILED', callback: 'onFailure' })
    expect(err.cause.message).toBe('input boom')
  })

  it('onResume: PIPELOAD_CALLBACK_FAILED before anything is sent', async () => {
    const file = csv('r.csv')
    const checkpoint = path.join(tmp, 'r.ckpt')
    await load({ url: srv.url, input: file, command: 'SET cbr:{id} {v}', checkpoint })
    await redis.del('cbr:1')
    const err = await rejection(load({ url: srv.url, input: file, command: 'SET cbr:{id} {v}', checkpoint, resume: true, onResume: () => { throw new Error('resume boom') } }))
    expect(err).toMatchObject({ code: 'PIPELOAD_CALLBACK_FAILED', callback: 'onResume' })
    expect(err.cause.message).toBe('resume boom')
  })

  it('bench onProgress: PIPELOAD_CALLBACK_FAILED, and bench deletes its keys', async () => {
    const err = await rejection(bench({ url: srv.url, workload: 'set', count: 2000, batchSizes: [100], baseline: false, onProgress: () => { throw new Error('bench boom') } }))
    expect(err).toMatchObject({ code: 'PIPELOAD_CALLBACK_FAILED', callback: 'onProgress' })
    expect(err.cause.message).toBe('bench boom')
    expect(await redis.keys('pipeload:bench:*')).toEqual([])
  })
})

describe('a dry-run output stream that fails', () => {
  it('write() throws: PIPELOAD_OUTPUT_FAILED naming the output, the thrown error as cause', async () => {
    const boom = new Error('write boom')
    let writes = 0
    const output = new Writable({ write (chunk, enc, cb) { cb() } })
    output.write = () => { if (++writes === 3) throw boom; return true }
    const err = await rejection(load({ input: csv('w.csv'), command: 'SET cbw:{id} {v}', batchSize: 100, dryRun: 'resp', output }))
    expect(err).toMatchObject({ code: 'PIPELOAD_OUTPUT_FAILED', output: 'the dry-run output', message: 'cannot write to the dry-run output: write boom' })
    expect(err.cause).toBe(boom)
    expect(writes).toBe(3) // nothing written after it
  })

  it('the stream emits \'error\' (its write callback fails): PIPELOAD_OUTPUT_FAILED with cause', async () => {
    const boom = new Error('stream boom')
    let n = 0
    const output = new Writable({ write (chunk, enc, cb) { cb(++n === 5 ? boom : null) } })
    output.on('error', () => {})
    const err = await rejection(load({ input: csv('e.csv'), command: 'SET cbe:{id} {v}', batchSize: 100, dryRun: 'text', output }))
    expect(err).toMatchObject({ code: 'PIPELOAD_OUTPUT_FAILED', output: 'the dry-run output' })
    expect(err.cause).toBe(boom)
  })
})
