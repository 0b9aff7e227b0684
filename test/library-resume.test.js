'use strict'
/* global describe, it, expect */

// The library's checkpoint and resume options end to end: load() interrupted through its
// AbortSignal at a known record, then load({ resume: true }) again. Each record is an INCR
// of its own counter, so the counters show how often each record was sent: after the
// abort, exactly the records the checkpoint counts ran once and none after them; after the
// resume, every record ran exactly once (an abort waits for its replies: nothing is re-sent).

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { recordCounts } = require('./helpers/counters')
const { load } = require('..')
const { scaledMs } = require('./helpers/wait')

const ROWS = 40_000
const ABORT_AT = 15_000 // the record whose mapping aborts the load
let server
let redis
let dir

useServer('pipeload-lib-resume-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

const counts = prefix => recordCounts(redis, prefix, ROWS)

function expectCounts (got, expected, label) {
  for (let i = 0; i < ROWS; i++) if (got[i] !== expected(i)) expect.fail(`${label}: record ${i} ran ${got[i]} times, expected ${expected(i)}`)
}

/** The ways of giving load() its input: a CSV file with map(), or an async iterable with a template. */
const inputs = {
  'a CSV file, map()': (prefix, onRecord) => {
    const file = path.join(dir, `${prefix.replace(/\W/g, '')}.csv`)
    if (!fs.existsSync(file)) fs.writeFileSync(file, 'id,v\n' + Array.from({ length: ROWS }, (_, i) => `${i},v${i}`).join('\n') + '\n')
    return { input: file, map: r => { onRecord(Number(r.id)); return [['INCR', prefix + r.id]] } }
  },
  'an async iterable, a template': (prefix, onRecord) => ({
    input: (async function * () { for (let i = 0; i < ROWS; i++) { onRecord(i); yield { id: i } } })(),
    name: 'generated',
    command: `INCR ${prefix}{id}`
  })
}

describe('load({ checkpoint, resume }) after an abort through signal', () => {
  for (const [how, make] of Object.entries(inputs)) {
    it(`${how}: aborted, then resumed: every record loaded exactly once, counts add up`, async () => {
      const prefix = `lib-${how.split(',')[0].replace(/\W/g, '')}:`
      const cp = path.join(dir, `${prefix.replace(/\W/g, '')}.checkpoint`)
      const ac = new AbortController()
      const opts = { url: server.url, checkpoint: cp, batchSize: 500 }
      const err = await load({ ...opts, ...make(prefix, i => { if (i === ABORT_AT) ac.abort() }), signal: ac.signal }).catch(e => e)
      expect(err.code).toBe('PIPELOAD_ABORTED')
      expect(err.exitCode).toBe(130)
      const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
      // Reading stopped about there (the reader may be a batch ahead of the sender).
      expect(saved).toMatchObject({ version: 1, complete: false, errors: 0 })
      expect(saved.records).toBeGreaterThan(0)
      expect(saved.records).toBeLessThanOrEqual(ABORT_AT + 500)
      expect(saved).toMatchObject({ loaded: saved.records, commands: saved.records, line: how.includes('CSV') ? saved.records + 1 : saved.records })
      expect(err.summary).toMatchObject({ records: saved.records, loaded: saved.records, recordsAcknowledged: saved.records, checkpoint: cp })
      expectCounts(await counts(prefix), i => (i < saved.records ? 1 : 0), 'after the abort')

      const summary = await load({ ...opts, ...make(prefix, () => {}), resume: true })
      expect(summary).toMatchObject({ resumedFrom: saved.records, records: ROWS, loaded: ROWS, commands: ROWS, errors: 0, checkpoint: cp })
      expect(summary.recordsAcknowledged).toBe(ROWS - saved.records) // this run's own records
      expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ records: ROWS, loaded: ROWS, errors: 0, commands: ROWS, complete: true })
      expectCounts(await counts(prefix), () => 1, 'after the resume')

      // Resuming a complete checkpoint sends nothing more.
      const again = await load({ ...opts, ...make(prefix, () => {}), resume: true })
      expect(again).toMatchObject({ resumedFrom: ROWS, records: ROWS, loaded: ROWS, recordsAcknowledged: 0 })
      expectCounts(await counts(prefix), () => 1, 'after resuming a complete checkpoint')
    }, scaledMs(60_000))
  }
})
