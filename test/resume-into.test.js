'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// A resume checks what it resumes into (issue 34 items 1 and 5): the checkpoint records the
// target and the commands; --resume into another server, or with other templates or another
// --map module content, is refused (exit 2) naming both values, before anything is sent. An
// older checkpoint (no such fields) resumes with a note saying what it cannot check. A resume
// from a checkpoint that was not closed cleanly (kill -9) warns, as a reconnect does, when a
// command is not idempotent, and sets possibleDuplicates; a clean Ctrl-C stop does not.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { useServer, startRedis } = require('./helpers/redis-server')
const { BIN, BASE_ENV } = require('./helpers/run-cli')
const { waitFor, scaledMs } = require('./helpers/wait')
const { load } = require('../lib')

const KILL = path.join(__dirname, 'helpers', 'kill-after-checkpoint.js')
const ROWS = 200_000
const BAD = 101 // the NDJSON record without `v`: --on-error abort stops the run there
let a // the server the checkpoints are written for
let redisA
let b // another server
let redisB
let dir
let ndjson
let csv

useServer('pipeload-resume-into-', s => { a = s.srv; redisA = s.redis; dir = s.tmp })

beforeAll(async () => {
  b = await startRedis()
  redisB = b.client()
  ndjson = path.join(dir, 'rows.ndjson')
  fs.writeFileSync(ndjson, Array.from({ length: 200 }, (_, i) => JSON.stringify(i + 1 === BAD ? { id: i + 1 } : { id: i + 1, v: `v${i + 1}` })).join('\n') + '\n')
  csv = path.join(dir, 'rows.csv')
  fs.writeFileSync(csv, 'id,v\n' + Array.from({ length: ROWS }, (_, i) => `${i},v${i}`).join('\n') + '\n')
})

afterAll(async () => {
  if (b) await b.stop()
})

/** The CLI, spawned; `preload`: { KILL_CHECKPOINT, KILL_AFTER_RECORDS } for the kill hook. */
function start (args, preload = null) {
  const argv = [...(preload ? ['--require', KILL] : []), BIN, 'import', ...args]
  const child = spawn(process.execPath, argv, { env: { ...BASE_ENV, ...preload }, stdio: ['ignore', 'pipe', 'pipe'] })
  child.out = ''
  child.err = ''
  child.stdout.on('data', d => { child.out += d })
  child.stderr.on('data', d => { child.err += d })
  child.done = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal, out: child.out, err: child.err })))
  return child
}

const pipeload = (args, preload) => start(args, preload).done

/** A run of the NDJSON input stopped by its bad record: an unfinished checkpoint for server A. */
async function stoppedRun (name, writeWith) {
  const cp = path.join(dir, `${name}.checkpoint`)
  const first = await pipeload([ndjson, '-u', a.url, ...writeWith, '--checkpoint', cp, '--on-error', 'abort', '--batch-size', '10'])
  expect(first.code, first.err).toBe(1)
  const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
  expect(saved).toMatchObject({ complete: false, clean: true })
  expect(saved.records).toBeGreaterThan(0)
  return cp
}

describe('--resume refuses another target or other commands, naming both', () => {
  it('a resume into another server exits 2 naming both targets and writes nothing to it', async () => {
    const cp = await stoppedRun('server', ['-c', 'HSET srv:{id} v {v}'])
    const before = fs.readFileSync(cp, 'utf8')
    const r = await pipeload([ndjson, '-u', b.url, '-c', 'HSET srv:{id} v {v}', '--checkpoint', cp, '--resume', '--on-error', 'abort', '--batch-size', '10'])
    expect(r.code, r.err).toBe(2)
    expect(r.err).toBe(`pipeload: checkpoint ${cp}: it was written for a load into 127.0.0.1:${a.port}/0; this run loads into 127.0.0.1:${b.port}/0: resume with the same target, or remove the checkpoint to start over\n`)
    expect(await redisB.dbsize()).toBe(0)
    expect(fs.readFileSync(cp, 'utf8')).toBe(before)
  }, scaledMs(30_000))

  it('the library: load() with resume into another database is PIPELOAD_CHECKPOINT_INVALID, the same refusal', async () => {
    const cp = await stoppedRun('library', ['-c', 'HSET lib:{id} v {v}'])
    const err = await load({ input: ndjson, url: `${a.url}/3`, commands: ['HSET lib:{id} v {v}'], checkpoint: cp, resume: true }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_CHECKPOINT_INVALID')
    expect(err.exitCode).toBe(2)
    expect(err.message).toBe(`checkpoint ${cp}: it was written for a load into 127.0.0.1:${a.port}/0; this run loads into 127.0.0.1:${a.port}/3: resume with the same target, or remove the checkpoint to start over`)
  }, scaledMs(30_000))

  it('a resume with other templates (--key for -c) exits 2 naming both', async () => {
    const cp = await stoppedRun('templates', ['-c', 'HSET tpl:{id} v {v}', '-c', 'SADD tpl-ids {id}'])
    const r = await pipeload([ndjson, '-u', a.url, '--key', 'tpl:{id}', '--checkpoint', cp, '--resume'])
    expect(r.code, r.err).toBe(2)
    expect(r.err).toBe(`pipeload: checkpoint ${cp}: its commands were "HSET tpl:{id} v {v}", "SADD tpl-ids {id}"; this run's are "HSET tpl:{id} *": resume with the same commands, or remove the checkpoint to start over\n`)
    expect(await redisA.exists('tpl:150')).toBe(0)
  }, scaledMs(30_000))

  it('a resume with another --ttl or without --replace exits 2 naming both', async () => {
    const cp = await stoppedRun('ttl', ['-c', 'HSET ttl:{id} v {v}', '--ttl', '1h', '--replace'])
    const r = await pipeload([ndjson, '-u', a.url, '-c', 'HSET ttl:{id} v {v}', '--ttl', '2h', '--checkpoint', cp, '--resume'])
    expect(r.code, r.err).toBe(2)
    expect(r.err).toBe(`pipeload: checkpoint ${cp}: its commands were "HSET ttl:{id} v {v}" with --ttl 3600 --replace; this run's are "HSET ttl:{id} v {v}" with --ttl 7200: resume with the same commands, or remove the checkpoint to start over\n`)
    expect(await redisA.exists('ttl:150')).toBe(0)
    const same = await pipeload([ndjson, '-u', a.url, '-c', 'HSET ttl:{id} v {v}', '--ttl', '3600', '--replace', '--checkpoint', cp, '--resume', '--on-error', 'skip'])
    expect(same.code, same.err).toBe(1) // the bad record again, skipped
    expect(await redisA.ttl('ttl:150')).toBeGreaterThan(3500)
  }, scaledMs(30_000))

  it('another target and other commands: both named in one message', async () => {
    const cp = await stoppedRun('both', ['-c', 'HSET both:{id} v {v}'])
    const r = await pipeload([ndjson, '-u', b.url, '-c', 'HSET other:{id} v {v}', '--checkpoint', cp, '--resume'])
    expect(r.code, r.err).toBe(2)
    expect(r.err).toMatch(`written for a load into 127.0.0.1:${a.port}/0; this run loads into 127.0.0.1:${b.port}/0; its commands were "HSET both:{id} v {v}"; this run's are "HSET other:{id} v {v}": resume with the same target and commands`)
    expect(await redisB.dbsize()).toBe(0)
  }, scaledMs(30_000))

  it('a --map module whose content changed exits 2 naming both hashes', async () => {
    const mod = path.join(dir, 'map.cjs')
    fs.writeFileSync(mod, "module.exports = r => { if (r.v === undefined) throw new Error('no v'); return [['HSET', 'map:' + r.id, 'v', r.v]] }\n")
    const old = crypto.createHash('sha256').update(fs.readFileSync(mod)).digest('hex')
    const cp = await stoppedRun('map', ['--map', mod])
    expect(JSON.parse(fs.readFileSync(cp, 'utf8')).map).toEqual({ module: mod, sha256: old })
    fs.appendFileSync(mod, '// v2: another key\n')
    const now = crypto.createHash('sha256').update(fs.readFileSync(mod)).digest('hex')
    const r = await pipeload([ndjson, '-u', a.url, '--map', mod, '--checkpoint', cp, '--resume'])
    expect(r.code, r.err).toBe(2)
    expect(r.err).toBe(`pipeload: checkpoint ${cp}: its commands were those of the --map module ${mod} (sha256 ${old.slice(0, 12)}); this run's are those of the --map module ${mod} (sha256 ${now.slice(0, 12)}), changed since: resume with the same commands, or remove the checkpoint to start over\n`)
  }, scaledMs(30_000))

  it('the library: a map() function of another source is refused, both source hashes named', async () => {
    const cp = path.join(dir, 'library-map.checkpoint')
    const v1 = r => { if (r.v === undefined) throw new Error('no v'); return [['HSET', 'lm:' + r.id, 'v', r.v]] }
    const v2 = r => [['HSET', 'lm:' + r.id, 'v', r.v ?? '']]
    const hash = fn => crypto.createHash('sha256').update(String(fn)).digest('hex').slice(0, 12)
    const first = await load({ input: ndjson, url: a.url, map: v1, checkpoint: cp, onError: 'abort', batchSize: 10 }).catch(e => e)
    expect(first.code).toBe('PIPELOAD_RECORD_FAILED')
    const err = await load({ input: ndjson, url: a.url, map: v2, checkpoint: cp, resume: true }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_CHECKPOINT_INVALID')
    expect(err.message).toBe(`checkpoint ${cp}: its commands were those of a map function (source sha256 ${hash(v1)}); this run's are those of a map function (source sha256 ${hash(v2)}): resume with the same commands, or remove the checkpoint to start over`)
    expect(await redisA.exists('lm:150')).toBe(0)
  }, scaledMs(30_000))

  it('no credential is written into the checkpoint', async () => {
    const admin = a.client()
    await admin.acl('SETUSER', 'cpuser', 'on', '>s3cr3t-pw', '~*', '+@all')
    try {
      const cp = path.join(dir, 'secret.checkpoint')
      const r = await pipeload([ndjson, '-u', `redis://cpuser:s3cr3t-pw@127.0.0.1:${a.port}/2`, '-c', 'HSET sec:{id} v {v}', '--checkpoint', cp, '--on-error', 'skip'])
      expect(r.code, r.err).toBe(1)
      const text = fs.readFileSync(cp, 'utf8')
      expect(JSON.parse(text).target).toBe(`127.0.0.1:${a.port}/2`)
      expect(text).not.toMatch(/s3cr3t|cpuser/)
    } finally {
      await admin.acl('DELUSER', 'cpuser')
    }
  }, scaledMs(30_000))

  it('a checkpoint of an older pipeload (no target, no commands) resumes with a one-line note', async () => {
    const cp = await stoppedRun('older', ['-c', 'HSET old:{id} v {v}'])
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8'))
    for (const k of ['target', 'templates', 'clean']) delete saved[k]
    fs.writeFileSync(cp, JSON.stringify(saved, null, 2) + '\n')
    // Into B: an older checkpoint cannot tell, so it is not refused.
    const r = await pipeload([ndjson, '-u', b.url, '-c', 'HSET old:{id} v {v}', '--checkpoint', cp, '--resume', '--on-error', 'skip'])
    expect(r.code, r.err).toBe(1) // the bad record fails again
    expect(r.err.split('\n')[0]).toBe(`pipeload: note: checkpoint ${cp} was written by an older pipeload: it does not record the target or the commands of its run, so this resume cannot check them`)
    expect(r.err).not.toMatch(/warning:/)
    expect(await redisB.exists('old:200')).toBe(1)
  }, scaledMs(30_000))
})

describe('a resume after an unclean stop warns like a reconnect', () => {
  const SLOW = ['--batch-size', '10', '--window', '1']
  /** A load of the CSV with `template`, SIGKILLed once its checkpoint counts past 3,000 records. */
  async function killed (name, template, ...more) {
    const cp = path.join(dir, `${name}.checkpoint`)
    // Batches of 10, one awaiting replies at a time: 20,000 round trips, so the load spans
    // several checkpoint writes (500 ms apart) however fast the machine (Node 24 loaded all
    // 200,000 rows in batches of 100 before its first).
    const args = [csv, '-u', a.url, '-c', template, ...more, '--checkpoint', cp, ...SLOW]
    const first = await pipeload(args, { KILL_CHECKPOINT: cp, KILL_AFTER_RECORDS: '3000' })
    expect(first.signal, first.err).toBe('SIGKILL')
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ complete: false, clean: false })
    return args
  }

  it('kill -9, then --resume with RPUSH: the warning line, and the run ends clean', async () => {
    const args = await killed('rpush-text', 'RPUSH rpush-text {id}', '--same-key')
    const r = await pipeload([...args, '--resume'])
    expect(r.code, r.err).toBe(0)
    expect(r.err.trimEnd().split('\n').at(-1)).toBe('warning: resumed after an unclean stop (the checkpoint was not closed: kill -9, a crash, or replies not awaited), so the commands acknowledged after its last write were re-sent and may have run twice: RPUSH is not idempotent (docs/resume.md "Re-sent commands")')
    expect(JSON.parse(fs.readFileSync(args[args.indexOf('--checkpoint') + 1], 'utf8'))).toMatchObject({ complete: true, clean: true })
    expect(await redisA.llen('rpush-text')).toBeGreaterThanOrEqual(ROWS)
  }, scaledMs(60_000))

  it('kill -9, then --resume --json with RPUSH: possibleDuplicates true', async () => {
    const args = await killed('rpush-json', 'RPUSH rpush-json {id}', '--same-key')
    const r = await pipeload([...args, '--resume', '--json'])
    expect(r.code, r.err).toBe(0)
    expect(r.err).toBe('')
    expect(JSON.parse(r.out)).toMatchObject({ records: ROWS, uncleanStop: true, resentCommands: 0, notIdempotent: ['RPUSH'], possibleDuplicates: true })
  }, scaledMs(60_000))

  it('kill -9, then --resume with HSET (idempotent): no warning, possibleDuplicates false', async () => {
    const args = await killed('hset', 'HSET hset:{id} v {v}')
    const text = await pipeload([...args, '--resume'])
    expect(text.code, text.err).toBe(0)
    expect(text.err).not.toMatch(/warning/)
    const args2 = await killed('hset2', 'HSET hset2:{id} v {v}')
    const json = await pipeload([...args2, '--resume', '--json'])
    expect(JSON.parse(json.out)).toMatchObject({ uncleanStop: true, notIdempotent: [], possibleDuplicates: false })
  }, scaledMs(90_000))

  it('a clean Ctrl-C stop, then --resume with RPUSH: no warning', async () => {
    const cp = path.join(dir, 'sigint.checkpoint')
    const args = [csv, '-u', a.url, '-c', 'RPUSH sigint {id}', '--same-key', '--checkpoint', cp, ...SLOW]
    // The kill hook never kills here (the count is past the input's): it only slows the load.
    const first = start(args, { KILL_CHECKPOINT: cp, KILL_AFTER_RECORDS: String(10 * ROWS) })
    await waitFor('a checkpoint past 3,000 records', () => { try { return JSON.parse(fs.readFileSync(cp, 'utf8')).records > 3000 } catch { return false } })
    first.kill('SIGINT')
    const stopped = await first.done
    expect(stopped.code, stopped.err).toBe(130)
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ complete: false, clean: true })
    const r = await pipeload([...args, '--resume'])
    expect(r.code, r.err).toBe(0)
    expect(r.err).not.toMatch(/warning/)
    expect(await redisA.llen('sigint')).toBe(ROWS) // exactly once each: nothing re-sent
    const json = await pipeload([...args, '--resume', '--json'])
    expect(JSON.parse(json.out)).toMatchObject({ uncleanStop: false, possibleDuplicates: false })
  }, scaledMs(90_000))
})
