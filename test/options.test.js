'use strict'
/* global describe, it, expect, vi, afterEach */ // vitest globals (see vitest.config.js)

const os = require('node:os')
const { normalizeLoadOptions } = require('../lib/run/options')

describe('load options: worker', () => {
  const base = { input: 'x.csv', key: 'k:{id}' }
  afterEach(() => vi.restoreAllMocks())

  it('is off by default, on when asked', () => {
    expect(normalizeLoadOptions(base).worker).toBe(false)
    expect(normalizeLoadOptions({ ...base, worker: true }).worker).toBe(true)
    expect(normalizeLoadOptions({ ...base, worker: false }).worker).toBe(false)
  })

  // The machine's own core count would make this test pass or fail by where it runs: the
  // count is stubbed, and each case says what "auto" must decide for it.
  it.each([[1, false], [2, false], [3, true], [16, true]])('"auto" with %i cores: worker %s (more than 2 cores)', (cores, want) => {
    const spy = vi.spyOn(os, 'availableParallelism').mockReturnValue(cores)
    expect(normalizeLoadOptions({ ...base, worker: 'auto' }).worker).toBe(want)
    expect(spy).toHaveBeenCalled()
  })
})

describe('load options: workers, chunkSize', () => {
  const base = { input: 'x.csv', key: 'k:{id}' }
  afterEach(() => vi.restoreAllMocks())

  it('workers: "auto" by default; a count, "auto"; worker: true is workers 1; workers wins', () => {
    expect(normalizeLoadOptions(base).workers).toBe('auto')
    expect(normalizeLoadOptions({ ...base, workers: 4 }).workers).toBe(4)
    expect(normalizeLoadOptions({ ...base, workers: '2' }).workers).toBe(2)
    expect(normalizeLoadOptions({ ...base, workers: 'auto' }).workers).toBe('auto')
    expect(normalizeLoadOptions({ ...base, worker: true }).workers).toBe(1)
    expect(normalizeLoadOptions({ ...base, worker: false }).workers).toBe(0)
    expect(normalizeLoadOptions({ ...base, worker: true, workers: 3 }).workers).toBe(3)
    for (const bad of [-1, 1.5, 'many', 1000]) {
      expect(() => normalizeLoadOptions({ ...base, workers: bad }), String(bad)).toThrow(/workers must be a number of threads from 0 to 256, or "auto"/)
    }
  })

  it('chunkSize: 1 MiB by default, a size with units', () => {
    expect(normalizeLoadOptions(base).chunkSize).toBe(1024 * 1024)
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
  const fs = require('node:fs')
  const path = require('node:path')
  const { LOAD_OPTIONS } = require('../lib/run/options')
  const { normalizeBenchOptions, BENCH_OPTIONS } = require('../lib/bench/options')
  const { load, bench } = require('..')
  const base = { input: 'x.csv', key: 'k:{id}' }
  const root = path.join(__dirname, '..')

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

  /** Property names of `interface name` in index.d.ts (one level: nested objects are one line). */
  function dtsProperties (name) {
    const text = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8')
    const m = new RegExp(`export interface ${name}(?: extends (\\w+))? \\{\\n([\\s\\S]*?)\\n\\}`).exec(text)
    const own = [...m[2].matchAll(/^ {2}(\w+)\??:/gm)].map(p => p[1])
    return m[1] ? [...dtsProperties(m[1]), ...own] : own
  }

  it('index.d.ts declares exactly the known options of load() and bench()', () => {
    expect(dtsProperties('LoadOptions').sort()).toEqual([...LOAD_OPTIONS].sort())
    expect(dtsProperties('BenchOptions').sort()).toEqual([...BENCH_OPTIONS].sort())
  })

  it("the manual's library options (docs/library.md) name every known option, and no other", () => {
    const lib = fs.readFileSync(path.join(root, 'docs', 'library.md'), 'utf8')
    const section = lib.slice(lib.indexOf('\n## Options\n'), lib.indexOf('\n## The summary\n'))
    expect(section.length).toBeGreaterThan(1000)
    const named = new Set([...section.matchAll(/`(\w+)(?:\([^)]*\))?`/g)].map(m => m[1]))
    for (const name of LOAD_OPTIONS) expect(named.has(name), name).toBe(true)
    // The table's first column: option names only.
    const rows = [...section.matchAll(/^\| ([^|]+) \|/gm)].map(m => m[1]).filter(c => c !== 'option' && !/^-+$/.test(c))
    for (const cell of rows) for (const [, name] of cell.matchAll(/`(\w+)/g)) expect(LOAD_OPTIONS, cell).toContain(name)
  })
})

describe('error codes', () => {
  it("every code is in the manual's errors table (docs/errors.md) with its exit code, and in index.d.ts", () => {
    const fs = require('node:fs')
    const path = require('node:path')
    const { CODES } = require('../lib/errors')
    const root = path.join(__dirname, '..')
    const errors = fs.readFileSync(path.join(root, 'docs', 'errors.md'), 'utf8')
    const dts = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8')
    for (const [code, exit] of Object.entries(CODES)) {
      expect(errors, code).toContain(`| \`${code}\` | ${exit} |`)
      expect(dts, code).toContain(`| '${code}'`)
    }
  })
})
