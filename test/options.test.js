'use strict'
/* global describe, it, expect, vi, afterEach */ // vitest globals (see vitest.config.js)

const { normalizeLoadOptions } = require('../lib/run/options')
const { load } = require('..')

// 0.x: `worker` and `--worker`/`--no-worker` were a second switch for what `workers` says (issue 33).
describe('the removed worker option', () => {
  const base = { input: 'x.csv', key: 'k:{id}' }
  const { runCli } = require('./helpers/run-cli')
  const { EXIT } = require('../lib/errors')

  it.each([true, false, 'auto'])('load({ worker: %s }) is PIPELOAD_OPTION_INVALID naming workers', async worker => {
    const err = await load({ ...base, worker, dryRun: 'text' }).then(() => null, e => e)
    expect(err).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', exitCode: EXIT.USAGE, option: 'worker', message: 'option "worker" was removed: use workers: 1 (one worker thread) or workers: 0 (the main thread)' })
  })

  it.each([
    ['--worker', 'pipeload: --worker was removed: use --workers 1 (one worker thread) or --workers 0 (the main thread)\n'],
    ['--no-worker', 'pipeload: --no-worker was removed: use --workers 0 (the main thread)\n']
  ])('%s: exit 2 and the replacement, also in --json', async (flag, stderr) => {
    const r = await runCli(['import', 'x.csv', '-k', 'k:{id}', flag])
    expect([r.code, r.stderr, r.stdout]).toEqual([EXIT.USAGE, stderr, ''])
    const j = await runCli(['import', 'x.csv', '-k', 'k:{id}', flag, '--json'])
    expect(j.code).toBe(EXIT.USAGE)
    expect(JSON.parse(j.stdout)).toEqual({ error: { code: 'PIPELOAD_OPTION_INVALID', message: stderr.slice('pipeload: '.length, -1), exitCode: 2 } })
  })

  it('import --help lists neither flag', async () => {
    const r = await runCli(['import', '--help'])
    expect(r.stdout).toMatch(/--workers <n\|auto>/)
    expect(r.stdout).not.toMatch(/--(no-)?worker\b(?!s)/)
  })
})

describe('load options: workers, chunkSize', () => {
  const base = { input: 'x.csv', key: 'k:{id}' }
  afterEach(() => vi.restoreAllMocks())

  it('workers: "auto" by default; a count, "auto"', () => {
    expect(normalizeLoadOptions(base).workers).toBe('auto')
    expect(normalizeLoadOptions({ ...base, workers: 4 }).workers).toBe(4)
    expect(normalizeLoadOptions({ ...base, workers: '2' }).workers).toBe(2)
    expect(normalizeLoadOptions({ ...base, workers: 'auto' }).workers).toBe('auto')
    for (const bad of [-1, 1.5, 'many', 1000]) {
      expect(() => normalizeLoadOptions({ ...base, workers: bad }), String(bad)).toThrow(/workers must be a number of threads from 0 to 256, or "auto"/)
    }
  })

  it('chunkSize: 256 KiB by default (issue 35 item 3: 1 MiB chunks cost each worker ~25 MB more), a size with units', () => {
    expect(normalizeLoadOptions(base).chunkSize).toBe(256 * 1024)
    expect(normalizeLoadOptions({ ...base, chunkSize: '64KiB' }).chunkSize).toBe(65536)
    expect(() => normalizeLoadOptions({ ...base, chunkSize: 0 })).toThrow(/chunkSize/)
  })

  // What 'auto' decides, given the cores, the target and dry-run (docs/workers-and-shards.md "Parallel parsing").
  it.each([
    [1, true, false, 0], [2, true, false, 0], [2, false, true, 0],
    [4, false, false, 0], [16, false, false, 0], // one server: the server is the limit
    [4, true, false, 3], [4, false, true, 3], [5, true, false, 4], [16, true, false, 4], [16, false, true, 4],
    // a cluster of one master is one server; of several, or not yet known (before connecting), workers pay
    [16, true, false, 0, 1], [16, true, false, 4, 2], [16, true, false, 4, 12], [16, true, false, 4, undefined], [16, false, true, 4, 1],
    // a file too small for a worker to pay for its start; a size not known (stdin, a URL) is not small
    [16, true, false, 0, 3, 8 * 1024 * 1024 - 1], [16, false, true, 0, undefined, 1000], [16, true, false, 4, 3, 8 * 1024 * 1024], [16, false, true, 4, undefined, 1e9]
  ])('autoWorkers: %i cores, cluster %s, dry run %s: %i (masters %s, bytes %s)', (cores, cluster, dryRun, want, masters, bytes) => {
    const { autoWorkers } = require('../lib/threads/modes')
    expect(autoWorkers({ cores, cluster, masters, dryRun, bytes })).toBe(want)
  })
})

describe('unknown option names', () => {
  const { normalizeBenchOptions } = require('../lib/bench/options')
  const { bench } = require('..')
  const base = { input: 'x.csv', key: 'k:{id}' }

  it('load(): a misspelled option is PIPELOAD_OPTION_INVALID with the nearest names', async () => {
    for (const [name, hint] of [
      ['batchsize', 'did you mean "batchSize"?'],
      ['tll', 'did you mean "tls" or "ttl"?'],
      ['retryTimout', 'did you mean "retryTimeout"?'],
      ['onerror', 'did you mean "onError"?'],
      ['chekpoint', 'did you mean "checkpoint"?'],
      ['masterNmae', 'did you mean "masterName"?']
    ]) {
      await expect(load({ ...base, [name]: 10 })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: name, message: `unknown option "${name}": ${hint}` })
    }
    await expect(load({ ...base, somethingElse: 1 })).rejects.toMatchObject({ message: 'unknown option "somethingElse"' })
    expect(() => normalizeLoadOptions({ ...base, ttl: undefined, extra: undefined })).not.toThrow() // undefined sets nothing
  })

  it('bench(): the same', async () => {
    await expect(bench({ batchSize: [1, 10] })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: 'unknown option "batchSize": did you mean "batchSizes"?' })
    expect(() => normalizeBenchOptions({ workload: 'set', rttms: 5 })).toThrow('unknown option "rttms": did you mean "rttMs"?')
    expect(() => normalizeBenchOptions({ workload: 'set', map: () => [] })).toThrow(/map must be left out/)
  })
})
