'use strict'
/* global describe, it, expect */

// An input that fails while it is read (a generator that throws, a stream that emits
// 'error'): the records taken from it before are sent and acknowledged, then load()
// rejects with PIPELOAD_INPUT_FAILED naming the record that could not be produced, the
// original error as `cause`.
const { Readable } = require('node:stream')
const { useServer } = require('./helpers/redis-server')
const { load } = require('..')

let srv
useServer('pipeload-input-failures-', s => { srv = s.srv })

const boom = new Error('boom: the source went away')

function * syncRecords (n) {
  for (let i = 1; i <= n; i++) yield { id: i }
  throw boom
}

async function * asyncRecords (n) {
  for (let i = 1; i <= n; i++) {
    await new Promise(resolve => setImmediate(resolve))
    yield { id: i }
  }
  throw boom
}

function objectStream (n) {
  let i = 0
  return new Readable({
    objectMode: true,
    read () {
      if (i < n) this.push({ id: ++i })
      else this.destroy(boom)
    }
  })
}

async function loadedIds (prefix) {
  const keys = await srv.client().keys(`${prefix}*`)
  return keys.map(k => Number(k.slice(prefix.length))).sort((a, b) => a - b)
}

const range = n => Array.from({ length: n }, (_, i) => i + 1)

describe('an iterable input that throws midway', () => {
  const inputs = [
    ['a sync generator', n => syncRecords(n)],
    ['an async generator', n => asyncRecords(n)],
    ['an object-mode Readable emitting error', n => objectStream(n)]
  ]
  for (const [what, make] of inputs) {
    for (const n of [10, 1300]) { // within the first batch of records, and after a few
      it(`${what}, after ${n} records: they are loaded, then PIPELOAD_INPUT_FAILED for record ${n + 1}`, async () => {
        const prefix = `if:${what.replace(/\W+/g, '-')}:${n}:`
        const err = await load({ url: srv.url, input: make(n), command: `SET ${prefix}{id} 1`, name: 'users' }).catch(e => e)
        expect(err).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_INPUT_FAILED', exitCode: 3, file: 'users', line: n + 1 })
        expect(err.cause).toBe(boom)
        expect(err.message).toBe(`users:${n + 1}: the input failed before giving record ${n + 1}: boom: the source went away`)
        expect(err.summary).toMatchObject({ records: n, loaded: n, errors: 0, stoppedAt: { file: 'users', line: n + 1 } })
        expect(await loadedIds(prefix)).toEqual(range(n))
      })
    }
  }

  it('a byte stream that emits error: the lines before it are loaded, PIPELOAD_INPUT_FAILED with the cause', async () => {
    for (const worker of [false, true]) {
      const prefix = `if:bytes:${worker}:`
      let sent = false
      const stream = new Readable({
        read () {
          if (sent) return this.destroy(boom)
          sent = true
          this.push(range(50).map(i => JSON.stringify({ id: i })).join('\n') + '\n')
        }
      })
      const err = await load({ url: srv.url, input: stream, format: 'ndjson', name: 'upload', command: `SET ${prefix}{id} 1`, workers: worker ? 1 : 0 }).catch(e => e)
      expect(err, `worker ${worker}`).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_INPUT_FAILED', exitCode: 3, file: 'upload' })
      expect(err.message).toMatch(/^upload@\d+: the input stream failed: boom: the source went away$/)
      if (!worker) expect(err.cause).toBe(boom) // the worker passes only code and message across
      expect(err.summary).toMatchObject({ records: 50, loaded: 50 })
      expect(await loadedIds(prefix)).toEqual(range(50))
    }
  })
})
