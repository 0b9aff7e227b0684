'use strict'
/* global describe, it, expect, afterEach */

// Batches without commands: the records of a batch that all mapped to nothing (map()
// returned [] or null, or failed) have nothing to send, and are acknowledged in turn, after
// what was sent before them. While the batch before is still awaiting its replies they are merged
// into it, and its counts must then include them: the checkpoint counts every record read.
// The server here answers the commands of the last batch sent 250 ms late, so that it is
// still in flight when the empty one comes.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { scriptedServer, usual } = require('./helpers/scripted-server')
const { load } = require('..')

const N = 5000
let srv = null
let dir = null
afterEach(async () => {
  await srv?.close()
  srv = null
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
  dir = null
})

describe('batches without commands', () => {
  it('merged into the batch in flight before them: the checkpoint counts their records', async () => {
    let sets = 0
    srv = await scriptedServer((args, conn) => {
      if (args[0] !== 'SET') return usual(args)
      sets++
      if (Number(args[1].slice(2)) < N - 2000) return '+OK\r\n'
      setTimeout(() => { if (!conn.socket.destroyed) conn.socket.write('+OK\r\n') }, 250)
      return null
    })
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-empty-batches-'))
    const csv = path.join(dir, 'rows.csv')
    fs.writeFileSync(csv, 'id,v\n' + Array.from({ length: N }, (_, i) => `${i},v${i}`).join('\n') + '\n')
    const cp = path.join(dir, 'run.checkpoint')
    // The last 1,500 rows send nothing: 500 map to no command (loaded), 500 to null
    // (skipped), 500 throw (failed). The input's last batch is those alone, and the batch
    // before it (rows up to 3,499) awaits its replies when it comes.
    const map = r => {
      const id = Number(r.id)
      if (id < N - 1500) return [['SET', `k:${id}`, r.v]]
      if (id < N - 1000) return []
      if (id < N - 500) return null
      throw new Error(`no command for ${id}`)
    }
    const summary = await load({ port: srv.port, input: csv, map, batchSize: 500, window: 4, checkpoint: cp, onError: 'skip' })
    // The oracle: the file's rows, counted by the rule above.
    const counts = { records: N, loaded: N - 1000, skipped: 500, errors: 500, commands: N - 1500 }
    expect(sets).toBe(N - 1500)
    expect(summary).toMatchObject(counts)
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ ...counts, complete: true })
  })
})
