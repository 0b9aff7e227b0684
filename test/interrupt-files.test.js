'use strict'
/* global describe, it, expect */

// Several inputs, interrupted before the last (issue 22): the inputs the run never reached say
// "not started" in the summary, not "0 of 0 records loaded" as if they were empty files.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('..')
const { scaledMs } = require('./helpers/wait')

let server
let redis
let dir

useServer('pipeload-interrupt-files-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

const ROWS = 5000
const csv = (name, from) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, 'id,v\n' + Array.from({ length: ROWS }, (_, i) => `${from + i},v`).join('\n') + '\n')
  return file
}

describe('an interrupted run of several inputs', () => {
  it('CLI: Ctrl-C in the third of four inputs: the fourth says "not started"; an empty one read before still says 0 of 0', async () => {
    const a = csv('a.csv', 0)
    const empty = path.join(dir, 'empty.csv')
    fs.writeFileSync(empty, 'id,v\n')
    const b = csv('b.csv', ROWS)
    const c = csv('c.csv', 2 * ROWS)
    // SIGINT to itself at record 3000 of b.csv: a.csv and the empty one are read, c.csv never.
    const map = path.join(dir, 'stop.cjs')
    fs.writeFileSync(map, "module.exports = (r, ctx) => { if (ctx.n === 8000) process.kill(process.pid, 'SIGINT'); return [['SET', 'if:' + r.id, r.v]] }\n")
    const r = await runCli(['import', a, empty, b, c, '-u', server.url, '--map', map, '-b', '100'], { spawn: true }) // the map signals its own process
    expect(r.code, r.stderr).toBe(130)
    expect(r.stderr).toContain(`\n  ${empty}: 0 of 0 records loaded\n`)
    expect(r.stderr).toContain(`\n  ${c}: not started (the run stopped before it)\n`)
    expect(r.stderr).toMatch(new RegExp(`\n  ${b.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: [\\d,]+ of [\\d,]+ records loaded\n`))
    expect(await redis.exists(`if:${2 * ROWS}`)).toBe(0)
  }, scaledMs(60_000))

  it('library: summary.files[i].started is false for the inputs not reached, true for a resumed run\'s complete ones', async () => {
    const [a, b] = [csv('la.csv', 0), csv('lb.csv', ROWS)]
    const cp = path.join(dir, 'files.ckpt')
    const ac = new AbortController()
    const opts = { url: server.url, input: [a, b], batchSize: 100, checkpoint: cp }
    // The same map() for the resume (one of another source is refused); aborting again does nothing.
    const map = (r, ctx) => { if (ctx.n === 1000) ac.abort(); return [['SET', 'lf:' + r.id, r.v]] }
    const err = await load({ ...opts, signal: ac.signal, map }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_ABORTED')
    expect(err.summary.files.map(f => [f.started, f.records > 0])).toEqual([[true, true], [false, false]])
    const s = await load({ ...opts, resume: true, map })
    expect(s.files.map(f => f.started)).toEqual([true, true])
    expect(s).toMatchObject({ records: 2 * ROWS, loaded: 2 * ROWS })
  }, scaledMs(60_000))
})
