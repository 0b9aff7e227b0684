'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 33, item 1: a run loads the code of its own input format, target and mode only. A
// CSV (or NDJSON) run, dry or into one server, loads no module of the Parquet reader, the
// cluster sink or the timing mode (bench): each is required where a run of that kind starts.
// Counted as a user runs the command: bin/pipeload.js in a process of its own, with
// helpers/loaded-modules.js preloaded to list lib/'s modules in require.cache at exit.

const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { useServer } = require('./helpers/redis-server')
const { BIN, BASE_ENV, ROOT } = require('./helpers/run-cli')

const PRELOAD = path.join(__dirname, 'helpers', 'loaded-modules.js')
// Code only another format, target or mode needs, by its path under lib/ (encode/slots.js and
// encode/group.js: a cluster's hash slots and the grouping of commands by master;
// threads/row-groups.js and threads/group-worker.js: Parquet row groups over n workers;
// send/lanes.js and send/io-threads.js: --connections other than 1, issue 35).
const OTHERS = /parquet|cluster|bench|encode\/slots\.js|encode\/group\.js|threads\/row-groups\.js|threads\/group-worker\.js|send\/lanes\.js|send\/io-threads\.js/
// The modules of a format's folder (lib/read/csv/, json/, parquet/) other than `own`'s: a run
// loads its own format's code only (lib/read/formats.js loads a format's rows on first use).
const otherFormats = (loaded, own) => loaded.filter(m => /^read\/[^/]+\//.test(m) && !m.startsWith(`read/${own}/`))

let srv, redis, tmp
useServer('pipeload-loaded-modules-', s => { ({ srv, redis, tmp } = s) })

let runs = 0
/**
 * Run pipeload with `args`; resolves with { code, stdout, stderr, loaded, threads } (loaded:
 * lib/ modules of the main thread; threads: those of each parse worker that sent a batch).
 */
async function loadedBy (args) {
  const list = path.join(tmp, `loaded-${runs++}.json`)
  const env = { ...BASE_ENV, PIPELOAD_LOADED_MODULES: list }
  let res
  try {
    res = await promisify(execFile)(process.execPath, ['-r', PRELOAD, BIN, ...args], { cwd: ROOT, env })
    res.code = 0
  } catch (err) {
    res = err
  }
  const threads = fs.readdirSync(tmp).filter(f => f.startsWith(`${path.basename(list)}.thread-`))
    .map(f => JSON.parse(fs.readFileSync(path.join(tmp, f), 'utf8')))
  return { code: res.code, stdout: res.stdout, stderr: res.stderr, loaded: JSON.parse(fs.readFileSync(list, 'utf8')), threads }
}

function input (name, text) {
  const file = path.join(tmp, name)
  fs.writeFileSync(file, text)
  return file
}

const CSV = 'id,name,score\n1,Ada,10\n2,Bob,20\n3,Cy,30\n'
const NDJSON = '{"id":1,"name":"Ada"}\n{"id":2,"name":"Bob"}\n{"id":3,"name":"Cy"}\n'

describe('the modules a run loads', () => {
  it.each([
    ['CSV', 'in.csv', CSV, 'csv'],
    ['NDJSON', 'in.ndjson', NDJSON, 'json']
  ])('a %s dry run loads no Parquet, cluster or timing-mode module, nor another format\'s', async (_, name, text, own) => {
    const res = await loadedBy(['import', input(name, text), '--dry-run', 'resp', '--key', 'u:{id}'])
    expect(res.stderr).toMatch(/wrote resp for 3 of 3 records/)
    expect(res.code).toBe(0)
    // The list in the message says what a run of this kind loads.
    expect(res.loaded.filter(m => OTHERS.test(m)), `loaded (${res.loaded.length}): ${res.loaded.join(' ')}`).toEqual([])
    expect(res.loaded).toContain('read/reader.js') // the list is lib/'s, and the reader in it
    expect(otherFormats(res.loaded, own), `loaded (${res.loaded.length}): ${res.loaded.join(' ')}`).toEqual([])
    expect(res.loaded).toContain(`read/${own}/row.js`) // its own rows: the list sees format folders
  })

  it('a CSV run into one server loads no Parquet, cluster or timing-mode module', async () => {
    const res = await loadedBy(['import', input('one.csv', CSV), '--key', 'one:{id}', '-u', srv.url])
    expect(res.stderr).toMatch(/loaded 3 of 3 records/)
    expect(res.code).toBe(0)
    expect(await redis.hgetall('one:2')).toEqual({ id: '2', name: 'Bob', score: '20' })
    expect(res.loaded.filter(m => OTHERS.test(m)), `loaded (${res.loaded.length}): ${res.loaded.join(' ')}`).toEqual([])
    expect(res.loaded).toContain('send/pipe.js')
    expect(otherFormats(res.loaded, 'csv')).toEqual([])
  })

  it('nor do the parse workers of a CSV run into one server', async () => {
    const res = await loadedBy(['import', input('workers.csv', CSV), '--key', 'w:{id}', '--workers', '2', '-u', srv.url])
    expect(res.stderr).toMatch(/loaded 3 of 3 records.*\n.*parse workers: 2/)
    expect(res.code).toBe(0)
    expect(await redis.hgetall('w:3')).toEqual({ id: '3', name: 'Cy', score: '30' })
    expect(res.threads.length).toBeGreaterThan(0) // a worker parsed the file and sent its batch
    for (const loaded of res.threads) {
      expect(loaded, 'a parse worker').toContain('threads/worker.js')
      expect(loaded.filter(m => OTHERS.test(m)), `loaded by a parse worker (${loaded.length}): ${loaded.join(' ')}`).toEqual([])
      expect(otherFormats(loaded, 'csv'), `loaded by a parse worker: ${loaded.join(' ')}`).toEqual([])
    }
  })
})
