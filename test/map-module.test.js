'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 13 item 11 against a real server: --map ./module.js (CommonJS or ESM) gets
// (record, ctx) with ctx = { n, line, file }; null skips the record (counted as skipped,
// not failed); a throw fails that record with its file:line; a module that cannot be loaded
// or exports no function is a usage error (exit 2). The library's map() gets the same.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')
const { scaledMs } = require('./helpers/wait')

let srv
let redis
let tmp
let write
useServer('pipeload-map-', s => { ({ srv, redis, tmp, write } = s) })

// A CSV with a header: records reach map() as objects of column -> text.
const CSV = 'id,name,population\n1,Tokyo,37400068\n2,Vaduz,5696\n3,Delhi,28514000\n4,Monaco,38300\n'

describe('--map <module>', () => {
  it('CommonJS: module.exports = fn gets (record, ctx); null skips the record', async () => {
    const file = write('cities.csv', CSV)
    const mod = write('big.cjs', `module.exports = (r, ctx) => Number(r.population) < 1e6 ? null
      : [['HSET', 'mc:' + r.id, 'name', r.name, 'n', ctx.n, 'at', require('node:path').basename(ctx.file) + ':' + ctx.line]]\n`)
    const r = await runCli(['import', file, '-u', srv.url, '--map', mod, '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const s = JSON.parse(r.stdout)
    expect(s).toMatchObject({ records: 4, loaded: 2, skipped: 2, errors: 0, commands: 2 })
    expect(await redis.hgetall('mc:3')).toEqual({ name: 'Delhi', n: '3', at: 'cities.csv:4' })
    expect(await redis.exists('mc:2')).toBe(0)
    // The summary on the terminal says how many were skipped.
    const human = await runCli(['import', file, '-u', srv.url, '--map', mod])
    expect(human.stderr).toMatch(/loaded 2 of 4 records/)
    expect(human.stderr).toMatch(/skipped: 2 \(map returned null\)/)
  })

  it('ESM: export default; a throw fails that record with file:line (skip policy goes on)', async () => {
    const file = write('cities2.csv', CSV)
    const mod = write('throws.mjs', "export default function (r) { if (r.id === '3') throw new Error('no Delhi today'); return [['SET', 'me:' + r.id, r.name]] }\n")
    const r = await runCli(['import', file, '-u', srv.url, '--map', mod, '--on-error', 'skip', '--json'])
    expect(r.code).toBe(1)
    const s = JSON.parse(r.stdout)
    expect(s).toMatchObject({ records: 4, loaded: 3, errors: 1, skipped: 0 })
    expect(s.failures[0]).toMatchObject({ line: 4, code: 'PIPELOAD_RECORD_INVALID' })
    expect(s.failures[0].message).toMatch(/map\(\) threw: no Delhi today/)
    expect(r.stderr).toMatch(/cities2\.csv:4: map\(\) threw: no Delhi today/)
    expect(await redis.get('me:4')).toBe('Monaco')
  })

  // Issue 34 item 11: a map() that forgets to return (undefined) was told only what it must
  // return; the message names what it returned.
  it('map() returning undefined, or something else that is no commands: the failure names what it returned', async () => {
    const file = write('cities-undef.csv', CSV)
    const mod = write('forgets.cjs', `module.exports = r => {
      if (r.id === '1') return [['SET', 'mu:1', r.name]]
      if (r.id === '2') { [['SET', 'mu:2', r.name]]; return } // the commands built, not returned: undefined
      if (r.id === '3') return { cmd: 'SET' }
      return [['SET', 'mu:4', r.name], 'oops']
    }\n`)
    const r = await runCli(['import', file, '-u', srv.url, '--map', mod, '--on-error', 'skip'])
    expect(r.code, r.stderr).toBe(1)
    const must = 'map(record) must return an array of commands, each an array like ["SET", key, value], or null to skip the record; it returned'
    expect(r.stderr.split('\n').slice(0, 3)).toEqual([
      `${file}:3: ${must} undefined (a path without a return statement?)`,
      `${file}:4: ${must} an object`,
      `${file}:5: ${must} an array whose element [1] is "oops"`
    ])
    expect(await redis.get('mu:1')).toBe('Tokyo')
    const failures = []
    await load({ url: srv.url, input: file, map: () => undefined, onError: 'skip', onFailure: f => failures.push(f) })
    expect(failures.map(f => f.message)).toEqual(Array(4).fill(`${must} undefined (a path without a return statement?)`))
  })

  it('works with --replace and --ttl --ttl-keys all', async () => {
    const file = write('cities3.csv', CSV)
    const mod = write('idx.cjs', "module.exports = r => [['HSET', 'mr:' + r.id, 'name', r.name], ['SADD', 'mr:ids', r.id]]\n")
    await redis.hset('mr:1', 'stale', 'x')
    const r = await runCli(['import', file, '-u', srv.url, '--map', mod, '--replace', '--ttl', '1h', '--ttl-keys', 'all'])
    expect(r.code).toBe(0)
    expect(await redis.hgetall('mr:1')).toEqual({ name: 'Tokyo' })
    expect(await redis.ttl('mr:ids')).toBeGreaterThan(3500)
  })

  it('a module that throws on load, exports no function or does not exist: exit 2 naming --map', async () => {
    const file = write('c.csv', CSV)
    const cases = [
      [write('bad.mjs', "throw new Error('broken on purpose')\n"), /--map .*bad\.mjs: the module failed to load: broken on purpose/],
      [write('nofn.cjs', 'module.exports = 42\n'), /--map .*nofn\.cjs: the module exports no function/],
      [path.join(tmp, 'missing.js'), /--map .*missing\.js: no such file/]
    ]
    for (const [mod, msg] of cases) {
      const r = await runCli(['import', file, '-u', srv.url, '--map', mod])
      expect(r.code, mod).toBe(2)
      expect(r.stderr).toMatch(msg)
    }
    const ok = write('ok.cjs', "module.exports = r => [['SET', 'x:' + r.id, r.name]]\n")
    const both = await runCli(['import', file, '-u', srv.url, '--map', ok, '-k', 'x:{id}'])
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--map must be used without key\/command templates/)
  })

  it('--dry-run text leaves skipped records out', async () => {
    const file = write('c4.csv', CSV)
    const mod = write('odd.cjs', "module.exports = (r, ctx) => ctx.n % 2 ? [['SET', 'o:' + r.id, ctx.n]] : null\n")
    const r = await runCli(['import', file, '--map', mod, '--dry-run', 'text'])
    expect(r.stdout.trim().split('\n')).toEqual(['SET o:1 1', 'SET o:3 3'])
  })

  it('the library: map(record, ctx), null skips, n goes on over a resumed run', async () => {
    const file = write('lib.csv', CSV)
    const seen = []
    const s = await load({ url: srv.url, input: file, map: (r, ctx) => { seen.push([r.name, ctx.n, ctx.line]); return r.id === '2' ? null : [['SET', 'ml:' + r.id, r.name]] } })
    expect(s).toMatchObject({ records: 4, loaded: 3, skipped: 1, errors: 0 })
    expect(seen).toEqual([['Tokyo', 1, 2], ['Vaduz', 2, 3], ['Delhi', 3, 4], ['Monaco', 4, 5]])
    expect(await redis.exists('ml:2')).toBe(0)
    // Resume: a checkpoint saying 2 records are done; the next record is n = 3.
    const checkpoint = path.join(tmp, 'lib.ckpt')
    const ns = []
    // The same map() for the resume: one of another source is refused.
    const map = (r, ctx) => { ns.push(ctx.n); return r.id === '2' ? null : [['SET', 'mk:' + r.id, r.name]] }
    const first = await load({ url: srv.url, input: file, checkpoint, map })
    expect(first).toMatchObject({ loaded: 3, skipped: 1 })
    ns.length = 0
    const state = JSON.parse(fs.readFileSync(checkpoint, 'utf8'))
    state.records = 2; state.loaded = 1; state.skipped = 1; state.commands = 1; state.line = 3; state.complete = false
    // Whether the first run's checkpoint has a `next` (a record start to read from) depends on
    // when its last write came: one past record 2 would contradict the records set here.
    delete state.next
    fs.writeFileSync(checkpoint, JSON.stringify(state))
    const again = await load({ url: srv.url, input: file, checkpoint, resume: true, map })
    expect(ns).toEqual([3, 4])
    expect(again).toMatchObject({ records: 4, loaded: 3, skipped: 1 })
  })

  it('map() returning a Promise fails that record clearly (not a crash: a rejection is handled); an async function is refused before anything is sent', async () => {
    const rows = 3000 // several reader batches of 512
    const file = write('promises.csv', 'id,v\n' + Array.from({ length: rows }, (_, i) => `${i + 1},v${i + 1}`).join('\n') + '\n')
    // CLI, skip: a rejected promise for odd ids, a resolved one for even ids; never a crash.
    const mod = write('promise.cjs', "module.exports = r => Number(r.id) % 2 ? Promise.reject(new Error('lookup failed')) : Promise.resolve([['SET', 'mp:' + r.id, r.v]])\n")
    const r = await runCli(['import', file, '-u', srv.url, '--map', mod, '--on-error', 'skip', '--json'])
    expect(r.stderr).not.toMatch(/lookup failed|\n\s+at /)
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ records: rows, loaded: 0, errors: rows })
    expect(JSON.parse(r.stdout).failures[0]).toMatchObject({ line: 2, code: 'PIPELOAD_RECORD_INVALID', message: expect.stringMatching(/^map\(\) returned a Promise, which pipeload does not wait for: return the commands themselves/) })
    // The library in this process: no unhandled rejection reaches the host.
    const unhandled = []
    const onUnhandled = e => unhandled.push(e)
    process.on('unhandledRejection', onUnhandled)
    try {
      const s = await load({ url: srv.url, input: file, onError: 'skip', map: r => Promise.reject(new Error('lookup ' + r.id)) })
      expect(s).toMatchObject({ records: rows, errors: rows })
      await new Promise(resolve => setTimeout(resolve, 50)) // unhandled rejections are reported after a turn
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
    expect(unhandled).toEqual([])
    expect(await redis.keys('mp:*')).toEqual([])
    // An async function: refused up front, exit 2, nothing sent.
    const asyncMod = write('async.mjs', "export default async r => [['SET', 'ma:' + r.id, r.v]]\n")
    const a = await runCli(['import', file, '-u', srv.url, '--map', asyncMod])
    expect(a.code).toBe(2)
    expect(a.stderr).toBe('pipeload: --map must be a function that returns the commands, not a Promise of them (pipeload does not wait for map(): fetch what it needs before the load), got "an async function"\n')
    await expect(load({ url: srv.url, input: file, map: async () => [] })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID' })
    expect(await redis.keys('ma:*')).toEqual([])
  })

  it('a map() whose Promise never settles holds nothing up: the run ends, and Ctrl-C during it stops it as usual', async () => {
    const rows = 200_000
    const file = write('never.csv', 'id,v\n' + Array.from({ length: rows }, (_, i) => `${i + 1},v${i + 1}`).join('\n') + '\n')
    const mod = write('never.cjs', 'let n = 0\nmodule.exports = r => ++n % 1000 ? [["SET", "mn:" + r.id, r.v]] : new Promise(() => {})\n')
    const r = await runCli(['import', file, '-u', srv.url, '--map', mod, '--on-error', 'skip', '--json'])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ records: rows, loaded: rows - rows / 1000, errors: rows / 1000 })
    // Ctrl-C mid-run, with promises pending: the run stops (exit 130, its summary), no hang.
    const long = write('never-long.csv', 'id,v\n' + Array.from({ length: 1_000_000 }, (_, i) => `${i + 1},v${i + 1}`).join('\n') + '\n')
    const { spawn } = require('node:child_process')
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'bin', 'pipeload.js'), 'import', long, '-u', srv.url, '-n', '3', '--map', mod, '--on-error', 'skip', '--workers', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let err = ''
    child.stderr.on('data', d => { err += d })
    const db3 = srv.client({ db: 3 })
    try {
      const deadline = Date.now() + scaledMs(10_000)
      while (Date.now() < deadline && await db3.dbsize() < 5000) await new Promise(resolve => setTimeout(resolve, 20))
    } finally {
      db3.disconnect()
    }
    child.kill('SIGINT')
    const code = await new Promise(resolve => child.on('close', resolve))
    expect(code).toBe(130)
    expect(err).toMatch(/the load was aborted/)
    expect(err).not.toMatch(/\n\s+at /)
  })

  it('help lists --map', async () => {
    const text = (await runCli(['import', '--help'])).stdout.replace(/\s+/g, ' ')
    expect(text).toMatch(/--map <module> a JS module \(CommonJS or ESM\) .*or null to skip it; ctx = \{ n, line, file \}/)
    expect(text).toMatch(/Examples:.* pipeload import cities\.csv --map \.\/big-cities\.cjs/)
    expect(text).toMatch(/Examples:.* --replace --ttl 1d --ttl-keys all/)
    expect(text).toMatch(/Examples:.* -b 10k --max-record-size 1MiB --timeout 90s/)
  })
})
