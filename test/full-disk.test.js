'use strict'
/* global describe, it, expect, afterEach, vi */

// A full disk under the rejects file or the checkpoint (issue 22): the run stops loudly
// (PIPELOAD_OUTPUT_FAILED), the counts it reports are what the files hold, and no rejects
// line is left half-written as if complete. The disk is modelled at the fs call: writes to
// the one file take what still fits (a real full disk's short write), then fail with ENOSPC;
// everything else is the real fs.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { load } = require('..')

let server
let redis
let dir

useServer('pipeload-full-disk-', s => { server = s.srv; redis = s.redis; dir = s.tmp })
afterEach(() => vi.restoreAllMocks())

const ROWS = 20_000
/** NDJSON lines, every third without "v" (a failed record), written here: the oracle. */
const LINES = Array.from({ length: ROWS }, (_, i) => JSON.stringify((i + 1) % 3 === 0 ? { id: i + 1 } : { id: i + 1, v: `v${i + 1}` }))
const FAILED_RAWS = LINES.filter((_, i) => (i + 1) % 3 === 0)

function input (name) {
  const file = path.join(dir, name)
  fs.writeFileSync(file, LINES.join('\n') + '\n')
  return file
}

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' })

/** Writes to `file` (by inode, once it exists) get `free` bytes in all, then ENOSPC. */
function fullDiskFor (file, free) {
  const real = fs.writeSync
  let used = 0
  const isIt = fd => {
    const st = fs.statSync(file, { throwIfNoEntry: false })
    return st !== undefined && fs.fstatSync(fd).ino === st.ino
  }
  vi.spyOn(fs, 'writeSync').mockImplementation((fd, buf, offset = 0, ...rest) => {
    if (typeof fd !== 'number' || !Buffer.isBuffer(buf) || !isIt(fd)) return real(fd, buf, offset, ...rest)
    if (used >= free) throw enospc()
    const wrote = real(fd, buf, offset, Math.min(free - used, buf.length - offset))
    used += wrote
    return wrote
  })
}

/** The rejects file's lines: each must be whole (newline-terminated JSON). */
function wholeLines (file) {
  const text = fs.readFileSync(file, 'utf8')
  expect(text === '' || text.endsWith('\n'), 'the file ends with a whole line').toBe(true)
  return text.split('\n').slice(0, -1).map(l => JSON.parse(l))
}

describe('a full disk', () => {
  it('under the rejects file: exit-74 error, the file holds whole lines only, as many as reported, the first failures in order', async () => {
    const file = input('rejects-full.ndjson')
    const rejects = path.join(dir, 'rejects-full.rejects')
    fullDiskFor(rejects, 100_000) // the first 64 KiB block fits, the second does not (a short write, then ENOSPC)
    const err = await load({ url: server.url, input: file, command: 'SET fd:{id} {v}', onError: 'skip', rejects, batchSize: 500 }).catch(e => e)
    expect(err).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_OUTPUT_FAILED', exitCode: 74, output: 'rejects' })
    expect(err.message).toBe(`rejects ${rejects} could not be written: no space left on the device`)
    vi.restoreAllMocks()
    const lines = wholeLines(rejects)
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.length).toBeLessThan(FAILED_RAWS.length)
    expect(err.summary.rejects).toEqual({ file: rejects, records: lines.length })
    expect(lines.map(l => l.raw)).toEqual(FAILED_RAWS.slice(0, lines.length))
    // The run's own counts add up: every record read is loaded or failed, and loaded ones are there.
    const s = err.summary
    expect(s.loaded + s.errors).toBe(s.records)
    expect(await redis.dbsize()).toBe(s.loaded)
  })

  it('under the checkpoint: exit-74 error, the checkpoint on disk is the last whole one and true, no temporary file left', async () => {
    const file = input('cp-full.ndjson')
    const cp = path.join(dir, 'cp-full.ckpt')
    const rejects = path.join(dir, 'cp-full.rejects')
    const real = fs.writeFileSync
    let writes = 0
    vi.spyOn(fs, 'writeFileSync').mockImplementation((fd, data, ...rest) => {
      // Checkpointer#write writes its temporary file through an fd: the second such write fails.
      if (typeof fd === 'number' && typeof data === 'string' && data.includes('"version": 1') && ++writes === 2) throw enospc()
      return real(fd, data, ...rest)
    })
    // The first checkpoint is written at the first acknowledgement; the second, 500 ms later
    // or at the end, finds the disk full.
    const map = r => { if (r.v === undefined) throw new Error('no v'); return [['SET', `fc:${r.id}`, r.v]] }
    const err = await load({ url: server.url, input: file, map, onError: 'skip', rejects, checkpoint: cp, batchSize: 500 }).catch(e => e)
    vi.restoreAllMocks()
    expect(writes).toBeGreaterThanOrEqual(2)
    expect(err).toMatchObject({ code: 'PIPELOAD_OUTPUT_FAILED', exitCode: 74, output: 'checkpoint' })
    expect(err.message).toBe(`checkpoint ${cp} could not be written: no space left on the device`)
    expect(fs.readdirSync(dir).filter(f => f.endsWith('.tmp'))).toEqual([])
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    expect(saved.complete).toBe(false)
    expect(saved.records).toBeLessThanOrEqual(err.summary.records)
    // What it counts is true: every record it says is loaded is on the server.
    const ids = Array.from({ length: saved.records }, (_, i) => i + 1).filter(id => id % 3 !== 0)
    expect(saved.loaded).toBe(ids.length)
    const values = await redis.mget(ids.map(id => `fc:${id}`))
    expect(values.every((v, i) => v === `v${ids[i]}`)).toBe(true)
    // Its rejects part: the file's first `bytes` are whole lines, `records` of them, the failures it counts.
    expect(saved.errors).toBe(saved.records - ids.length)
    const head = fs.readFileSync(rejects).subarray(0, saved.rejects.bytes).toString('utf8')
    const lines = head.split('\n').slice(0, -1).map(l => JSON.parse(l))
    expect(head === '' || head.endsWith('\n')).toBe(true)
    expect(saved.rejects.records).toBe(saved.errors)
    expect(lines.map(l => l.raw)).toEqual(FAILED_RAWS.slice(0, saved.errors))
  })
})
