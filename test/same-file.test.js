'use strict'
/* global describe, it, expect, beforeEach */

// An output path that is an input (issue 22, HIGH): `--rejects data.csv` used to truncate
// the input before reading it ("loaded 0 of 0", exit 0), `--checkpoint data.csv` to replace
// it with JSON. Every such run is refused before anything is opened (exit 2), paths compared
// as files (a symlink, ./x and x, a hard link), and each file is left byte for byte as it was.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('..')

let server
let redis
let dir
let csv

// More than one read of the input (64 KiB), so a truncation mid-way would show too.
const DATA = 'id,v\n' + Array.from({ length: 20_000 }, (_, i) => `${i},value-${i}`).join('\n') + '\n'

useServer('pipeload-same-file-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(dir, 'case-'))
  csv = path.join(dir, 'data.csv')
  fs.writeFileSync(csv, DATA)
  await redis.flushall()
})

const escape = s => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const cli = extra => runCli(['import', csv, '-u', server.url, '-c', 'SET sf:{id} {v}', ...extra])

/** Refused with one line naming the output and the file it is; nothing sent, nothing written. */
async function expectRefused (r, message) {
  expect(r.code, r.stderr).toBe(2)
  expect(r.stderr).toMatch(new RegExp(`^pipeload: ${message}: .*; choose another path\n$`))
  expect(r.stdout).toBe('')
  expect(await redis.dbsize()).toBe(0)
  expect(fs.readFileSync(csv, 'utf8')).toBe(DATA)
}

describe('an output that is an input is refused before anything is opened', () => {
  it('--rejects is the input: exit 2, the input untouched', async () => {
    await expectRefused(await cli(['--rejects', csv, '--on-error', 'skip']), `--rejects ${escape(csv)} is the input ${escape(csv)}`)
  })

  it('--checkpoint is the input through a symlink, and through ./ and ..: exit 2, the input untouched', async () => {
    const link = path.join(dir, 'link.csv')
    fs.symlinkSync(csv, link)
    await expectRefused(await cli(['--checkpoint', link]), `--checkpoint ${escape(link)} is the input ${escape(csv)}`)
    const roundabout = `${dir}/./../${path.basename(dir)}/data.csv`
    await expectRefused(await cli(['--checkpoint', roundabout, '--resume']), `--checkpoint .* is the input ${escape(csv)}`)
  })

  it('a hard link of an input matched by a pattern: exit 2', async () => {
    fs.mkdirSync(path.join(dir, 'parts'))
    fs.writeFileSync(path.join(dir, 'parts', 'a.csv'), 'id,v\n1,a\n')
    fs.linkSync(csv, path.join(dir, 'parts', 'b.csv'))
    const r = await runCli(['import', path.join(dir, 'parts', '*.csv'), '-u', server.url, '-c', 'SET sf:{id} {v}', '--rejects', csv])
    await expectRefused(r, `--rejects ${escape(csv)} is the input ${escape(path.join(dir, 'parts', 'b.csv'))}`)
  })

  it('--checkpoint and --rejects one new path: exit 2, neither is created', async () => {
    const out = path.join(dir, 'out.json')
    await expectRefused(await cli(['--checkpoint', out, '--rejects', path.join(dir, '..', path.basename(dir), 'out.json')]),
      `--rejects .*out\\.json is the same file as --checkpoint ${escape(out)}`)
    expect(fs.readdirSync(dir)).toEqual(['data.csv'])
  })

  it('--map module and --tls-* files as outputs: exit 2, each left as it was', async () => {
    const map = path.join(dir, 'map.cjs')
    const mapText = "module.exports = r => [['SET', 'sf:' + r.id, r.v]]\n"
    fs.writeFileSync(map, mapText)
    const r = await runCli(['import', csv, '-u', server.url, '--map', map, '--rejects', map])
    await expectRefused(r, `--rejects ${escape(map)} is the --map module ${escape(map)}`)
    expect(fs.readFileSync(map, 'utf8')).toBe(mapText)
    for (const flag of ['--tls-ca', '--tls-cert']) {
      const pem = path.join(dir, 'client.pem')
      fs.writeFileSync(pem, 'not really PEM, never read\n')
      const args = flag === '--tls-ca' ? [flag, pem] : [flag, pem, '--tls-key', path.join(dir, 'missing.key')]
      await expectRefused(await cli([...args, '--checkpoint', pem]), `--checkpoint ${escape(pem)} is the ${flag} file ${escape(pem)}`)
      expect(fs.readFileSync(pem, 'utf8')).toBe('not really PEM, never read\n')
    }
  })

  it('outputs of their own still work: the load is exact', async () => {
    const r = await cli(['--rejects', path.join(dir, 'rejects.ndjson'), '--checkpoint', path.join(dir, 'run.ckpt'), '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ records: 20_000, loaded: 20_000 })
    expect(await redis.get('sf:19999')).toBe('value-19999')
  })

  it('the library: rejects or checkpoint at an input is PIPELOAD_OPTION_INVALID, the input untouched', async () => {
    const opts = { url: server.url, input: csv, command: 'SET sf:{id} {v}' }
    const r = await load({ ...opts, rejects: csv }).catch(e => e)
    expect(r).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_OPTION_INVALID', exitCode: 2, option: 'rejects', file: csv })
    expect(r.message).toBe(`rejects ${csv} is the input ${csv}: it would be overwritten before it is read; choose another path`)
    const c = await load({ ...opts, checkpoint: './' + path.relative(process.cwd(), csv) }).catch(e => e)
    expect(c).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'checkpoint' })
    expect(fs.readFileSync(csv, 'utf8')).toBe(DATA)
    expect(await redis.dbsize()).toBe(0)
  })
})
