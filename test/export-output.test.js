'use strict'
/* global describe, it, expect */

// The export's output closed while a write is still with the file (the export stopped: a
// hash the CSV columns cannot hold): the file stream then fails with ERR_STREAM_DESTROYED
// as that write completes. That must stay inside the output (its `failure`, already beside
// the point), never an unhandled rejection: in the CLI one ends the process with exit 1 and
// a stack instead of the error's own message and code. No server: the file stream only.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { openOutput } = require('../lib/export/output')

const tick = () => new Promise(resolve => setImmediate(resolve))

describe('openOutput close() with a write in flight', () => {
  for (const [name, options] of [['plain', {}], ['gzipped', {}], ['gzipped in members', { members: true }]]) {
    it(`${name}: close() resolves once the file is closed, and nothing is left unhandled`, async () => {
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-output-'))
      const unhandled = []
      const onUnhandled = err => unhandled.push(err)
      process.on('unhandledRejection', onUnhandled)
      try {
        const file = path.join(tmp, name === 'plain' ? 'out.ndjson' : 'out.ndjson.gz')
        const out = openOutput(file, options)
        // 8 MiB of random bytes: more than one write to the file, some still going when it closes.
        out.stream.write(require('node:crypto').randomBytes(8 << 20))
        await tick() // the file's first write started
        await out.close()
        // Node reports an unhandled rejection once the microtasks of the tick that made it ran.
        await tick()
        await tick()
        expect(unhandled.map(e => e.code ?? e.message)).toEqual([])
      } finally {
        process.off('unhandledRejection', onUnhandled)
        fs.rmSync(tmp, { recursive: true, force: true })
      }
    })
  }
})
