'use strict'
/* global describe, it, expect */

// --checkpoint / --resume over several inputs: the checkpoint holds the list and, per
// input, whether it is complete and how many of its records are acknowledged. A run
// SIGKILLed in the middle of the second input, then resumed: the first input is not read
// again, the second's loaded records are skipped, and every record is loaded, those the
// checkpoint counts exactly once. Each record is an INCR of its own counter, so the
// counters show how often it was sent. A different list is refused.

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { BIN, BASE_ENV } = require('./helpers/run-cli')
const { recordCounts } = require('./helpers/counters')
const { scaledMs } = require('./helpers/wait')

const PER_FILE = 600
const FILES = ['a.csv', 'b.ndjson', 'c.csv']
let server
let redis
let dir

useServer('pipeload-multi-resume-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

/** Three inputs of 600 records each (ids 0-1799); the records whose id ends in 07 fail to map. */
function dataset (name) {
  const d = path.join(dir, name)
  fs.mkdirSync(d)
  const ids = f => Array.from({ length: PER_FILE }, (_, i) => f * PER_FILE + i)
  fs.writeFileSync(path.join(d, 'a.csv'), 'id,v\n' + ids(0).map(i => `${i},a`).join('\n') + '\n')
  fs.writeFileSync(path.join(d, 'b.ndjson'), ids(1).map(i => JSON.stringify({ v: 'b', id: i })).join('\n') + '\n')
  fs.writeFileSync(path.join(d, 'c.csv'), 'v,id\n' + ids(2).map(i => `c,${i}`).join('\n') + '\n')
  // SLOW_MS: a pause per record of the second input, so that the kill lands there (the first
  // input, not paused, is done within the first checkpoint interval).
  fs.writeFileSync(path.join(d, 'map.cjs'), `
    const pause = new Int32Array(new SharedArrayBuffer(4))
    module.exports = (r, ctx) => {
      if (process.env.SLOW_MS && r.id >= ${PER_FILE} && r.id < ${2 * PER_FILE}) Atomics.wait(pause, 0, 0, Number(process.env.SLOW_MS))
      if (r.id % 100 === 7) throw new Error('no 07s')
      return [['INCR', '${name}:' + r.id]]
    }
  `)
  return d
}

function start (d, args, env = {}) {
  const child = spawn(process.execPath, [BIN, 'import', ...args, '-u', server.url], { cwd: d, env: { ...BASE_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', c => { out += c })
  child.stderr.on('data', c => { err += c })
  child.done = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal, out, err })))
  return child
}

function readState (file) {
  try { return JSON.parse(fs.readFileSync(file, 'utf8')) } catch { return null }
}

async function waitFor (ready, ms = 30_000) {
  const end = Date.now() + ms
  while (!ready()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/**
 * Start a slow run, SIGKILL it once the checkpoint says the first input is done and the second begun.
 * The pause is per record, and the map runs a whole reader batch (512 records) at a time, so
 * the checkpoint is written only between them, at most every 500 ms: the second input's last
 * batch of 88 records must take longer than that (88 x 6 ms) or the state "second input
 * begun" may never be written before the third input's 512 records (at 5 ms: 440 ms, and
 * the kill landed in the third input about one run in ten on a loaded machine).
 */
async function killedInTheSecondInput (d, args, env = { SLOW_MS: '6' }) {
  const cp = path.join(d, 'cp.json')
  const child = start(d, [...FILES, ...args, '--checkpoint', cp], env)
  await waitFor(() => {
    const st = readState(cp)
    return st && st.files[0].complete && st.files[1].records > 0
  })
  child.kill('SIGKILL')
  const r = await child.done
  expect(r.signal).toBe('SIGKILL')
  return readState(cp)
}

/**
 * A template doing what map.cjs does, run by the server: INCR of the record's counter, an error
 * reply for the ids ending in 07, and for the second input's records a busy loop of `turns`
 * (the server's pause instead of map()'s SLOW_MS: a resume must send the same commands).
 */
function serverSide (name, turns) {
  const slow = `if id >= ${PER_FILE} and id < ${2 * PER_FILE} then local i=0 while i<${turns} do i=i+1 end end`
  return `EVAL "local id=tonumber(ARGV[1]) if id % 100 == 7 then return redis.error_reply('ERR no 07s') end ${slow} return redis.call('INCR',KEYS[1])" 1 ${name}:{id} {id}`
}

describe('--resume over several inputs after a SIGKILL', () => {
  const cases = [['the same --map', []], ['templates in the worker thread', ['--workers', '1']]]
  for (const [how, worker] of cases) {
    it(`killed in the second input, resumed with ${how}: the first is not read again; every record loaded, the checkpointed ones exactly once; exact counts; each failure once in the rejects file`, async () => {
      const name = 'r' + worker.length
      const d = dataset(name)
      const common = ['--on-error', 'skip', '--rejects', 'rejects.ndjson', '--batch-size', '20', '--window', '1', '--json']
      // The same commands in both runs (a resume with others is refused): map.cjs, or in the
      // worker thread templates that do the same on the server (~6 ms a record of the second input).
      const writeWith = worker.length ? ['-c', serverSide(name, 800_000), ...worker] : ['--map', 'map.cjs']
      const st = await killedInTheSecondInput(d, [...writeWith, ...common], worker.length ? {} : undefined)
      expect(st.inputs.map(i => i.name)).toEqual(FILES)
      expect(st.files[2]).toMatchObject({ records: 0, complete: false })
      const checkpointed = st.records
      expect(checkpointed).toBeGreaterThan(PER_FILE)
      expect(checkpointed).toBeLessThan(2 * PER_FILE)

      const r = await start(d, [...FILES, ...writeWith, ...common, '--checkpoint', 'cp.json', '--resume']).done
      expect(r.err).not.toMatch(/internal error/)
      const s = JSON.parse(r.out)
      const total = 3 * PER_FILE
      const counts = await recordCounts(redis, `${name}:`, total)
      const failedIds = new Set()
      for (let i = 7; i < total; i += 100) failedIds.add(i)
      for (let i = 0; i < total; i++) {
        if (i < checkpointed) expect(counts[i], `record ${i}`).toBe(failedIds.has(i) ? 0 : 1)
        else if (failedIds.has(i)) expect(counts[i], `record ${i}`).toBe(0)
        else {
          expect(counts[i], `record ${i}`).toBeGreaterThanOrEqual(1)
          expect(counts[i], `record ${i}`).toBeLessThanOrEqual(2)
        }
      }
      // The first input was not read: the bytes read are the second's (read to skip its
      // loaded records) and the third's.
      expect(s.bytesRead).toBe(fs.statSync(path.join(d, 'b.ndjson')).size + fs.statSync(path.join(d, 'c.csv')).size)
      expect(s.resumedFrom).toBe(checkpointed)
      const errors = failedIds.size
      expect(s).toMatchObject({ records: total, errors, loaded: total - errors })
      expect(s.files.map(f => [f.input, f.records, f.loaded + f.errors])).toEqual(FILES.map(f => [f, PER_FILE, PER_FILE]))
      const final = readState(path.join(d, 'cp.json'))
      expect(final.complete).toBe(true)
      expect(final.files.map(f => f.complete)).toEqual([true, true, true])
      // Each failure once, in input order, whatever the crash cut off.
      const rejects = fs.readFileSync(path.join(d, 'rejects.ndjson'), 'utf8').trim().split('\n').map(l => JSON.parse(l))
      const expected = [...failedIds]
        .map(i => `${FILES[Math.floor(i / PER_FILE)]}:${FILES[Math.floor(i / PER_FILE)] === 'b.ndjson' ? i % PER_FILE + 1 : i % PER_FILE + 2}`)
      expect(rejects.map(f => `${f.file}:${f.line}`)).toEqual(expected)
    }, scaledMs(60_000))
  }

  it('killed in the second input of a parallel load (--workers 2), resumed in parallel: every record loaded, the checkpointed ones exactly once; exact counts', async () => {
    const name = 'p'
    const d = dataset(name)
    // The server is slowed (a busy Lua loop per record) so that the kill lands in the second
    // input; the parse and encode run in two worker threads on small chunks. The kill comes at
    // the first checkpoint that has records of the second input, and a checkpoint is written
    // every 500 ms: the input must last longer than 500 ms past that one. 100,000 turns
    // (~0.75 ms a record on a 2-core machine: 0.45 s an input) let the next checkpoint land in
    // the third input once; 400,000 (~2.7 ms: ~1.6 s) leave it room.
    // The resume sends the same (a resume with other commands is refused).
    const slow = `EVAL "local i=0 while i<400000 do i=i+1 end return redis.call('INCR',KEYS[1])" 1 ${name}:{id}`
    const common = ['--workers', '2', '--chunk-size', '2KiB', '--batch-size', '20', '--window', '1', '--json']
    const st = await killedInTheSecondInput(d, ['-c', slow, ...common], {})
    const checkpointed = st.records
    expect(checkpointed).toBeGreaterThan(PER_FILE)
    expect(checkpointed).toBeLessThan(2 * PER_FILE)
    const r = await start(d, [...FILES, '-c', slow, ...common, '--checkpoint', 'cp.json', '--resume']).done
    expect(r.err).not.toMatch(/internal error/)
    const s = JSON.parse(r.out)
    const total = 3 * PER_FILE
    const counts = await recordCounts(redis, `${name}:`, total)
    for (let i = 0; i < total; i++) {
      if (i < checkpointed) expect(counts[i], `record ${i}`).toBe(1)
      else {
        expect(counts[i], `record ${i}`).toBeGreaterThanOrEqual(1)
        expect(counts[i], `record ${i}`).toBeLessThanOrEqual(2)
      }
    }
    expect(s).toMatchObject({ records: total, loaded: total, errors: 0, resumedFrom: checkpointed })
    expect(s.files.map(f => [f.input, f.records, f.loaded])).toEqual(FILES.map(f => [f, PER_FILE, PER_FILE]))
    expect(s.bytesRead).toBe(fs.statSync(path.join(d, 'b.ndjson')).size + fs.statSync(path.join(d, 'c.csv')).size)
    expect(readState(path.join(d, 'cp.json')).files.map(f => f.complete)).toEqual([true, true, true])
  }, scaledMs(60_000))

  it('a different list, another order, or one input of it: refused, nothing sent', async () => {
    const d = dataset('refused')
    const cp = path.join(d, 'cp.json')
    const first = await start(d, ['a.csv', 'b.ndjson', '-c', 'INCR refused:{id}', '--checkpoint', cp, '--json']).done
    expect(first.code).toBe(0)
    await redis.del('refused:1')
    for (const list of [['a.csv', 'c.csv'], ['b.ndjson', 'a.csv'], ['a.csv', 'b.ndjson', 'c.csv']]) {
      const r = await start(d, [...list, '-c', 'INCR refused:{id}', '--checkpoint', cp, '--resume']).done
      expect(r.code).toBe(2)
      expect(r.err).toMatch(/^pipeload: checkpoint .*cp\.json: it was written for the 2 inputs .*a\.csv, .*b\.ndjson; the inputs are .* \(a different list\): remove the checkpoint to start over\n$/)
    }
    const one = await start(d, ['a.csv', '-c', 'INCR refused:{id}', '--checkpoint', cp, '--resume']).done
    expect(one.code).toBe(2)
    expect(one.err).toMatch(/it was written for the 2 inputs .*; the input is .*a\.csv: remove the checkpoint/)
    // A file of the list changed since: named, as for one input.
    fs.appendFileSync(path.join(d, 'b.ndjson'), '{"id":5000}\n')
    const changed = await start(d, ['a.csv', 'b.ndjson', '-c', 'INCR refused:{id}', '--checkpoint', cp, '--resume']).done
    expect(changed.code).toBe(2)
    expect(changed.err).toMatch(/b\.ndjson is not the same file any more/)
    expect(await redis.exists('refused:1')).toBe(0)
  })

  it('a checkpoint whose files do not add up is refused, every problem named', async () => {
    const d = dataset('invalid')
    const cp = path.join(d, 'cp.json')
    const first = await start(d, ['a.csv', 'b.ndjson', '-c', 'INCR invalid:{id}', '--checkpoint', cp]).done
    expect(first.code).toBe(0)
    const st = readState(cp)
    st.files[0].complete = false
    st.files[1].records = -1
    fs.writeFileSync(cp, JSON.stringify(st))
    const r = await start(d, ['a.csv', 'b.ndjson', '-c', 'INCR invalid:{id}', '--checkpoint', cp, '--resume']).done
    expect(r.code).toBe(2)
    expect(r.err).toMatch(/not a valid pipeload checkpoint: files\[1\] is not \{ records, loaded, errors, commands, complete \}; remove it to start over/)
    st.files[1].records = PER_FILE
    fs.writeFileSync(cp, JSON.stringify(st))
    const order = await start(d, ['a.csv', 'b.ndjson', '-c', 'INCR invalid:{id}', '--checkpoint', cp, '--resume']).done
    expect(order.err).toMatch(/files\[1\] is complete, but an input before it is not/)
  })
})
