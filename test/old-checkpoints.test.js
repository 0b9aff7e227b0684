'use strict'
/* global describe, it, expect */

// The checkpoint file format is part of the interface: a checkpoint and rejects file written
// by an earlier pipeload (test/fixtures/checkpoints-v1, made by its make.js with the code
// before issue 33's plan/Run split) resume with this one. Each fixture run stopped at
// max-errors 2 part-way; the resume, on a server that holds nothing, must send exactly the
// records after the checkpoint's count, and leave the rejects file as the old code's
// uninterrupted run left it (the old prefix kept, its tail cut, the rest appended in order).

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { FIXTURES, PREFIX, CASES, bad, optionsOf, loadIn, writeFiles, rewrite } = require('./helpers/old-checkpoints')
const { scaledMs } = require('./helpers/wait')

const ROOT = path.join(__dirname, '..')
let server
let redis
let tmp

useServer('pipeload-old-cp-', s => { server = s.srv; redis = s.redis; tmp = s.tmp })

describe('a checkpoint written before the plan/Run split resumes', () => {
  for (const name of Object.keys(CASES)) {
    it(`${name}: the records after it, once each; the rejects file as an uninterrupted run's`, async () => {
      const dir = fs.mkdtempSync(path.join(tmp, `${name}-`))
      writeFiles(name, dir)
      const saved = rewrite(JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.checkpoint.json`), 'utf8')), '$DIR', dir, file => fs.statSync(file).mtimeMs)
      fs.writeFileSync(path.join(dir, `${name}.checkpoint`), JSON.stringify(saved, null, 2) + '\n')
      fs.copyFileSync(path.join(FIXTURES, `${name}.rejects`), path.join(dir, `${name}.rejects`))
      expect(saved.complete).toBe(false)
      expect(saved.records).toBeGreaterThan(0)
      await redis.flushall() // this test's own server

      const { summary, error, notices } = await loadIn(ROOT, dir, { ...optionsOf(name, { resume: true }), url: server.url })
      expect(error).toBeUndefined()
      // It records neither the target nor the commands, nor whether it was closed cleanly: said, not refused.
      expect(notices.map(n => n.unchecked)).toEqual([['target', 'commands']])
      expect(summary).toMatchObject({ uncleanStop: null, possibleDuplicates: false })
      const [from, to] = CASES[name].ids
      const ids = Array.from({ length: to - from }, (_, i) => from + i)
      const failed = ids.filter(bad).length
      expect(summary).toMatchObject({ resumedFrom: saved.records, records: ids.length, errors: failed, loaded: ids.length - failed, commands: ids.length })
      // Sent: the records after the checkpoint's count, the failing ones excepted.
      const expected = ids.filter((id, i) => i >= saved.records && !bad(id)).map(id => PREFIX + id).sort()
      expect((await redis.keys(`${PREFIX}*`)).sort()).toEqual(expected)
      expect(fs.readFileSync(path.join(dir, `${name}.rejects`), 'utf8')).toBe(fs.readFileSync(path.join(FIXTURES, `${name}.whole.rejects`), 'utf8'))
      expect(JSON.parse(fs.readFileSync(path.join(dir, `${name}.checkpoint`), 'utf8'))).toMatchObject({ version: 1, complete: true, records: ids.length, errors: failed })
    }, scaledMs(30_000))
  }

  // The same two steps with this code alone: its checkpoint must count in the rejects file
  // the failures of the batches acknowledged (error replies included), or the resume cuts
  // them off.
  it('csv, stopped and resumed by this code: the rejects file as the old code\'s uninterrupted run\'s', async () => {
    const name = 'csv'
    const dir = fs.mkdtempSync(path.join(tmp, 'own-'))
    writeFiles(name, dir)
    await redis.flushall()
    const first = await loadIn(ROOT, dir, { ...optionsOf(name, { maxErrors: 2 }), url: server.url })
    expect(first.error?.code).toBe('PIPELOAD_TOO_MANY_ERRORS')
    const saved = JSON.parse(fs.readFileSync(path.join(dir, `${name}.checkpoint`), 'utf8'))
    expect(saved.rejects.records).toBe(saved.errors)
    const { summary, error } = await loadIn(ROOT, dir, { ...optionsOf(name, { resume: true }), url: server.url })
    expect(error).toBeUndefined()
    expect(summary).toMatchObject({ records: 6000, errors: 5, loaded: 5995 })
    expect(fs.readFileSync(path.join(dir, `${name}.rejects`), 'utf8')).toBe(fs.readFileSync(path.join(FIXTURES, `${name}.whole.rejects`), 'utf8'))
  }, scaledMs(30_000))
})
