'use strict'
/* global describe, it, expect, beforeEach */

// Checkpoints that --resume must refuse before anything is sent (exit 2, one line naming
// the checkpoint and what is wrong), beyond those in resume.test.js: the remaining ways a
// checkpoint can be malformed, a checkpoint that cannot be read, the same file changed
// since (size or modification time only: resume.test.js changes the path), and a file's
// checkpoint resumed over stdin or the other way round.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')

let server
let redis
let dir
let csv
const ROWS = 'id,v\n' + Array.from({ length: 20 }, (_, i) => `${i},v${i}`).join('\n') + '\n'

useServer('pipeload-cp-refused-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

beforeEach(async () => {
  csv = path.join(dir, 'rows.csv')
  fs.writeFileSync(csv, ROWS)
  await redis.flushall()
})

const escape = s => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A valid checkpoint of the first 5 records of `csv`, as a JSON value. */
function valid () {
  const st = fs.statSync(csv)
  return { version: 1, input: { name: csv, path: path.resolve(csv), size: st.size, mtimeMs: st.mtimeMs }, records: 5, loaded: 5, errors: 0, commands: 5, line: 6, complete: false }
}

async function expectRefused (cp, args, message, opts) {
  const r = await runCli(['import', ...args, '-u', server.url, '-c', 'SET r:{id} {v}', '--checkpoint', cp, '--resume'], opts)
  expect(r.code).toBe(2)
  expect(r.stdout).toBe('')
  expect(r.stderr).toMatch(new RegExp(`^pipeload: checkpoint ${escape(cp)}: `))
  expect(r.stderr).toMatch(message)
  expect(r.stderr.trim().split('\n')).toHaveLength(1)
  expect(r.stderr).not.toMatch(/NaN|undefined|\n\s+at /)
  expect(await redis.dbsize()).toBe(0) // nothing was sent
}

describe('--resume refuses a checkpoint it cannot trust, before anything is sent', () => {
  const malformed = [
    ['a JSON array', () => [1, 2], /it is not a JSON object/],
    ['JSON null', () => null, /it is not a JSON object/],
    ['no input', c => { delete c.input; return c }, /input is missing or has no name/],
    ['an input without a name', c => ({ ...c, input: { path: c.input.path, size: c.input.size, mtimeMs: c.input.mtimeMs } }), /input is missing or has no name/],
    ['a file input without a size', c => ({ ...c, input: { ...c.input, size: 'big' } }), /input names a file without a valid size and modification time/],
    ['line 0', c => ({ ...c, line: 0 }), /line is 0, not a line number/],
    ['complete not a boolean', c => ({ ...c, complete: 'yes' }), /complete is "yes", not true or false/],
    ['a rejects entry without bytes', c => ({ ...c, rejects: { path: '/tmp/x', records: 1 } }), /rejects is not \{ path, bytes, records \}/],
    ['a fractional count', c => ({ ...c, commands: 2.5 }), /commands is 2\.5, not a whole number ≥ 0/],
    ['several problems at once: all of them named', c => ({ ...c, records: -1, complete: 1, line: 'x' }), /records is -1.*line is "x".*complete is 1/]
  ]
  for (const [what, edit, message] of malformed) {
    it(what, async () => {
      const cp = path.join(dir, 'bad.checkpoint')
      fs.writeFileSync(cp, JSON.stringify(edit(valid())))
      await expectRefused(cp, [csv], message)
    })
  }

  it('a checkpoint path that is a directory cannot be read', async () => {
    const cp = path.join(dir, 'a-directory.checkpoint')
    fs.mkdirSync(cp, { recursive: true })
    await expectRefused(cp, [csv], /cannot read it/)
  })

  it('the same file grown since (a row appended): refused', async () => {
    const cp = path.join(dir, 'grown.checkpoint')
    const mtime = new Date('2030-01-02T03:04:05.678Z') // whole milliseconds: utimes keeps them exactly
    fs.utimesSync(csv, mtime, mtime)
    fs.writeFileSync(cp, JSON.stringify(valid()))
    fs.appendFileSync(csv, '20,v20\n')
    fs.utimesSync(csv, mtime, mtime) // only the size tells
    // What changed, with the old and new values: the sizes from the two versions' text.
    const [was, now] = [ROWS.length, ROWS.length + '20,v20\n'.length]
    await expectRefused(cp, [csv], new RegExp(`: the input ${escape(path.resolve(csv))} is not the same file any more: size ${was} → ${now} bytes since the checkpoint was written: remove the checkpoint to start over\n`))
  })

  it('the same file rewritten with the same size (only the modification time differs): refused', async () => {
    const cp = path.join(dir, 'touched.checkpoint')
    fs.writeFileSync(cp, JSON.stringify(valid()))
    const before = new Date(valid().input.mtimeMs).toISOString()
    fs.writeFileSync(csv, ROWS.replace('v3', 'w3'))
    const later = new Date('2031-02-03T04:05:06.789Z')
    fs.utimesSync(csv, later, later)
    await expectRefused(cp, [csv], new RegExp(`is not the same file any more: modified ${escape(before)} → 2031-02-03T04:05:06\\.789Z since the checkpoint was written: remove`))
  })

  it("a file's checkpoint resumed over stdin: refused (it would skip records of another input)", async () => {
    const cp = path.join(dir, 'file-then-stdin.checkpoint')
    fs.writeFileSync(cp, JSON.stringify(valid()))
    await expectRefused(cp, ['-', '--format', 'csv'], new RegExp(`it was written for ${escape(path.resolve(csv))}; the input is <stdin>`), { input: ROWS })
  })

  it("stdin's checkpoint resumed over a file: refused", async () => {
    const cp = path.join(dir, 'stdin-then-file.checkpoint')
    fs.writeFileSync(cp, JSON.stringify({ ...valid(), input: { name: '<stdin>' } }))
    await expectRefused(cp, [csv], new RegExp(`it was written for <stdin>; the input is ${escape(path.resolve(csv))}`))
  })

  it("stdin's checkpoint resumed over stdin is taken: the records it counts are skipped", async () => {
    const cp = path.join(dir, 'stdin.checkpoint')
    // As this pipeload writes it: with the target and the commands (an older one's gets a note on stderr).
    fs.writeFileSync(cp, JSON.stringify({ ...valid(), input: { name: '<stdin>' }, target: `127.0.0.1:${server.port}/0`, templates: ['SET r:{id} {v}'] }))
    const r = await runCli(['import', '-', '--format', 'csv', '-u', server.url, '-c', 'SET r:{id} {v}', '--checkpoint', cp, '--resume', '--json'], { input: ROWS })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ resumedFrom: 5, records: 20, loaded: 20 })
    expect(await redis.dbsize()).toBe(15)
    expect(await redis.exists('r:4')).toBe(0)
    expect(await redis.get('r:5')).toBe('v5')
  })
})
