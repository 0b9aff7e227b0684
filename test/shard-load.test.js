'use strict'
/* global describe, it, expect */

// load({ shard }) in the library: the option's forms and refusals, the summary, progress.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Writable } = require('node:stream')
const { load } = require('../lib/run/load')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-shard-load-'))
const file = path.join(dir, 'rows.ndjson')
fs.writeFileSync(file, Array.from({ length: 3000 }, (_, i) => JSON.stringify({ id: i, v: 'x'.repeat(i % 50) })).join('\n') + '\n')

function sink () {
  const chunks = []
  return { chunks, stream: new Writable({ write (c, e, cb) { chunks.push(c); cb() } }) }
}

function dry (extra) {
  const out = sink()
  return load({ input: file, key: 'r:{id}', dryRun: 'text', output: out.stream, ...extra }).then(s => ({ s, text: Buffer.concat(out.chunks).toString() }))
}

describe('load({ shard })', () => {
  it("'i/n' and { index, count } are the same shard; the summary names it; 0/1 is no shard", async () => {
    const a = await dry({ shard: '1/3' })
    const b = await dry({ shard: { index: 1, count: 3 } })
    expect(a.text).toBe(b.text)
    expect(a.s.shard).toBe('1/3')
    expect(a.s.records).toBeGreaterThan(500)
    expect(a.s.records).toBeLessThan(1500)
    const one = await dry({ shard: '0/1' })
    const none = await dry({})
    expect(one.text).toBe(none.text)
    expect(one.s.shard).toBeNull()
  })

  it('progress counts against the shard\'s own bytes', async () => {
    const seen = []
    const { s } = await dry({ shard: '1/2', onProgress: p => seen.push(p), progressInterval: 1 })
    const last = seen.at(-1)
    expect(last.totalBytes).toBe(s.bytesRead)
    expect(last.totalBytes).toBeLessThan(fs.statSync(file).size * 0.6)
    expect(last.bytesRead).toBe(last.totalBytes)
  })

  it('refused: bad specs, an iterable of records', async () => {
    for (const shard of ['2/2', { index: 0, count: 0 }, { index: 1.5, count: 3 }, 3, '']) {
      await expect(dry({ shard }), JSON.stringify(shard)).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'shard' })
    }
    await expect(load({ input: [{ id: 1 }], key: 'k:{id}', dryRun: 'text', output: sink().stream, shard: '0/2' }))
      .rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: expect.stringMatching(/iterable of records cannot be split/) })
  })
})
