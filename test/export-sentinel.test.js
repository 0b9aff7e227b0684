'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// export through Sentinel (--sentinel/--master-name; the library's sentinels and masterName)
// when the master dies mid-export: the sentinel promotes the replica, and the export, its
// connection lost, asks the sentinel where the master is now and reads it from its first key
// (another server: SCAN starts again). Every key of the keyspace, written by the test's own
// client and replicated before the export, is in the output, read back by the test's reader.

const { Writable } = require('node:stream')
const { startSentinelTrio, masterPort } = require('./helpers/sentinel')
const { waitFor, scaledMs } = require('./helpers/wait')
const { writeDataset, readExport, restoredText, comparable } = require('./helpers/export-data')
const { exportKeys } = require('..')

describe('export through Sentinel: the master dies mid-export', () => {
  let trio, want
  beforeAll(async () => {
    trio = await startSentinelTrio()
    const c = trio.master.client()
    try {
      want = await writeDataset(c, 's:', { big: 600, small: 300 })
      // Every write on the replica too: the failover loses none of them.
      expect(await c.call('WAIT', '1', String(scaledMs(10_000)))).toBe(1)
    } finally {
      c.disconnect()
    }
  }, scaledMs(60_000))
  afterAll(async () => { await trio?.stop() })

  it('the replica promoted: the export asks the sentinel again, reads the new master from its first key, every key', async () => {
    const chunks = []
    let killed = false
    const out = new Writable({
      highWaterMark: 1024,
      write (c, e, cb) {
        chunks.push(c)
        if (killed) return cb()
        killed = true
        // The master gone with the export under way; the sentinel fails over after ~1 s.
        trio.master.kill('SIGKILL').then(() => cb(), cb)
      }
    })
    const s = trio.sentinel.client()
    try {
      const summary = await exportKeys({
        sentinels: [`127.0.0.1:${trio.sentinel.port}`],
        masterName: 'm',
        output: out,
        batchSize: 50,
        window: 1,
        pageSize: 100,
        scanCount: 50,
        retryTimeout: scaledMs(30_000)
      })
      expect(killed).toBe(true)
      expect(await masterPort(s)).toBe(String(trio.replica.port))
      expect(summary).toMatchObject({ reconnects: 1, rescans: 1 })
      expect(summary.masters).toEqual([`127.0.0.1:${trio.replica.port}`])
      expect(summary.target).toBe(`127.0.0.1:${trio.replica.port}`)
      const text = Buffer.concat(chunks).toString('utf8')
      expect(comparable(readExport(restoredText(text)).keys)).toEqual(comparable(want))
    } finally {
      s.disconnect()
    }
  }, scaledMs(120_000))
})
