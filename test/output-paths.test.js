'use strict'
/* global describe, it, expect, beforeEach */

// An output path that is not a regular file (issue 37, item 2). The checkpoint is replaced by
// renaming a new file over its path: as root, `--checkpoint /dev/null` put a plain file where
// the device was, and a FIFO or a symlink went the same way, exit 0. Such a path is refused
// before anything is read or sent (exit 2, saying what it is), and left as it was; the
// checkpoint's temporary file is never opened through a symlink; a path that becomes one
// mid-run is not renamed over (exit 74). The rejects file is written into, never renamed
// over: a pipe with a reader takes it; a FIFO with none is refused at once, where the open
// used to wait for a reader with Ctrl-C and SIGTERM ignored (item 7). The device case uses a
// device node made in the test's own directory (mknod, as root), never one of /dev.

const fs = require('node:fs')
const path = require('node:path')
const net = require('node:net')
const { execFileSync } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { runCli, runCliSpawned } = require('./helpers/run-cli')
const { load } = require('..')
const { scaledMs } = require('./helpers/wait')

let server
let redis
let top
let dir
let csv

const DATA = 'id,v\n' + Array.from({ length: 2000 }, (_, i) => `${i},value-${i}`).join('\n') + '\n'
const STACK = /\n\s+at /

useServer('pipeload-output-paths-', s => { server = s.srv; redis = s.redis; top = s.tmp })

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(top, 'case-'))
  csv = path.join(dir, 'data.csv')
  fs.writeFileSync(csv, DATA)
  await redis.flushall()
})

const escape = s => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const args = extra => ['import', csv, '-u', server.url, '-c', 'SET op:{id} {v}', ...extra]

/** A device node of our own, the kind /dev/null is (1, 3); null where this user may not make one. */
function charDevice (file) {
  try {
    execFileSync('mknod', [file, 'c', '1', '3'], { stdio: 'ignore' })
  } catch {
    return null
  }
  return fs.lstatSync(file).isCharacterDevice() ? file : null
}

const kind = file => {
  const st = fs.lstatSync(file)
  return st.isFIFO() ? 'fifo' : st.isSymbolicLink() ? 'symlink' : st.isCharacterDevice() ? 'char' : st.isFile() ? 'file' : 'other'
}

/** Refused with exit 2, one line saying what the path is; nothing sent. */
async function expectRefused (r, flag, file, what) {
  expect(r.code, r.stderr).toBe(2)
  expect(r.stderr).toMatch(new RegExp(`^pipeload: ${flag} ${escape(file)} cannot be written: it is ${what}`))
  expect(r.stderr.trim().split('\n')).toHaveLength(1)
  expect(r.stderr).not.toMatch(STACK)
  expect(await redis.dbsize()).toBe(0)
}

describe('--checkpoint on a path that is not a regular file is refused, and left as it was', () => {
  it('a FIFO: exit 2, still a FIFO (it was renamed over: a plain file, exit 0)', async () => {
    const fifo = path.join(dir, 'run.checkpoint')
    execFileSync('mkfifo', [fifo])
    await expectRefused(await runCli(args(['--checkpoint', fifo])), '--checkpoint', fifo, 'a FIFO \\(named pipe\\), not a regular file')
    expect(kind(fifo)).toBe('fifo')
  })

  it('a FIFO with --resume: exit 2 at once (its read waited for a writer for ever)', async () => {
    const fifo = path.join(dir, 'run.checkpoint')
    execFileSync('mkfifo', [fifo])
    // Spawned: the old read blocked the whole process, so an in-process run would hang the test.
    await expectRefused(await runCliSpawned(args(['--checkpoint', fifo, '--resume']), { timeoutMs: scaledMs(15_000) }), '--checkpoint', fifo, 'a FIFO')
    expect(kind(fifo)).toBe('fifo')
  })

  it('a symlink to a regular file: exit 2, the link and its target as they were', async () => {
    const target = path.join(dir, 'elsewhere.json')
    fs.writeFileSync(target, 'not mine\n')
    const link = path.join(dir, 'run.checkpoint')
    fs.symlinkSync(target, link)
    await expectRefused(await runCli(args(['--checkpoint', link])), '--checkpoint', link, `a symbolic link to ${escape(target)}, not a regular file`)
    expect(kind(link)).toBe('symlink')
    expect(fs.readFileSync(target, 'utf8')).toBe('not mine\n')
  })

  it('a dangling symlink: exit 2, the link kept', async () => {
    const link = path.join(dir, 'run.checkpoint')
    fs.symlinkSync(path.join(dir, 'nothing-here'), link)
    await expectRefused(await runCli(args(['--checkpoint', link])), '--checkpoint', link, 'a symbolic link')
    expect(kind(link)).toBe('symlink')
    expect(fs.existsSync(path.join(dir, 'nothing-here'))).toBe(false)
  })

  it('a character device (a node of /dev/null\'s kind made here): exit 2, still a device', async ({ skip }) => {
    const node = charDevice(path.join(dir, 'null'))
    if (node === null) skip('mknod needs root')
    await expectRefused(await runCli(args(['--checkpoint', node])), '--checkpoint', node, 'a character device')
    expect(kind(node)).toBe('char')
  })

  it('a regular file and a new path are still taken', async () => {
    const cp = path.join(dir, 'run.checkpoint')
    const r = await runCli(args(['--checkpoint', cp]))
    expect(r.code, r.stderr).toBe(0)
    expect(kind(cp)).toBe('file')
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ records: 2000, complete: true })
    const again = await runCli(args(['--checkpoint', cp])) // a finished run's checkpoint is replaced
    expect(again.code, again.stderr).toBe(0)
  })

  it('library: the temporary file\'s path a symlink (planted by someone else): refused, what it points to untouched', async () => {
    const cp = path.join(dir, 'run.checkpoint')
    const victim = path.join(dir, 'victim.txt')
    fs.writeFileSync(victim, 'precious\n')
    const tmp = path.join(dir, `.run.checkpoint.${process.pid}.tmp`) // Checkpointer's name for it, in this process
    fs.symlinkSync(victim, tmp)
    const err = await load({ url: server.url, input: csv, command: 'SET op:{id} {v}', checkpoint: cp }).catch(e => e)
    expect(err).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'checkpoint' })
    expect(err.message).toMatch(`temporary file ${tmp} is a symbolic link`)
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n')
    expect(kind(tmp)).toBe('symlink')
    expect(await redis.dbsize()).toBe(0)
  })

  it('library: the checkpoint path made a FIFO mid-run is not renamed over: PIPELOAD_OUTPUT_FAILED, still a FIFO', async () => {
    const cp = path.join(dir, 'run.checkpoint')
    let swapped = false
    // Records until the run stops: once the first checkpoint is there it is swapped for a
    // FIFO, so the next write (from a reply handler) finds one (the old code renamed over it:
    // then the records end).
    async function * records () {
      for (let i = 0; ; i++) {
        if (swapped && kind(cp) !== 'fifo') return
        if (!swapped && fs.existsSync(cp)) {
          fs.unlinkSync(cp)
          execFileSync('mkfifo', [cp])
          swapped = true
        }
        yield { id: i }
        if (i % 500 === 0) await new Promise(resolve => setImmediate(resolve))
      }
    }
    const err = await load({ url: server.url, input: records(), command: 'SET op:{id} 1', batchSize: 100, checkpoint: cp }).catch(e => e)
    expect(swapped).toBe(true)
    expect(err).toMatchObject({ code: 'PIPELOAD_OUTPUT_FAILED', exitCode: 74, output: 'checkpoint' })
    expect(err.message).toBe(`checkpoint ${cp} could not be written: it is a FIFO (named pipe), not a regular file: not replaced`)
    expect(kind(cp)).toBe('fifo')
    expect(fs.readdirSync(dir).filter(f => f.endsWith('.tmp'))).toEqual([]) // its temporary file removed
  })
})

describe('--rejects into a FIFO or a pipe', () => {
  const bad = () => {
    fs.writeFileSync(csv, 'id,v\n1,a\n2,b,extra\n3,c\n')
    return ['import', csv, '-u', server.url, '-c', 'SET op:{id} {v}', '--on-error', 'skip']
  }

  it('a FIFO that no process reads: exit 2 at once, still a FIFO (the open waited for a reader, deaf to Ctrl-C and SIGTERM)', async () => {
    const fifo = path.join(dir, 'rejects.fifo')
    execFileSync('mkfifo', [fifo])
    const r = await runCliSpawned([...bad(), '--rejects', fifo], { timeoutMs: scaledMs(15_000) })
    await expectRefused(r, '--rejects', fifo, 'a FIFO \\(named pipe\\) that no process has open for reading: start its reader first')
    expect(kind(fifo)).toBe('fifo')
  })

  it('a FIFO someone reads: the failed record arrives there, exit 1', async () => {
    const fifo = path.join(dir, 'rejects.fifo')
    execFileSync('mkfifo', [fifo])
    // The reader first, opened as pipeload opens an input FIFO: without waiting for a writer.
    const reader = new net.Socket({ fd: fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK), readable: true, writable: false })
    const chunks = []
    reader.on('data', d => chunks.push(d))
    const ended = new Promise(resolve => reader.on('end', resolve))
    const r = await runCliSpawned([...bad(), '--rejects', fifo])
    await ended
    reader.destroy()
    expect(r.code, r.stderr).toBe(1)
    const lines = Buffer.concat(chunks).toString().trim().split('\n').map(l => JSON.parse(l))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ line: 3, raw: '2,b,extra', code: 'PIPELOAD_INPUT_INVALID' })
    expect(await redis.get('op:3')).toBe('c')
    expect(kind(fifo)).toBe('fifo')
  })
})
