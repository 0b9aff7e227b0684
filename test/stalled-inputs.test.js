'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// An input that stalls must not hold back the end of a run (issue 37, item 7). A FIFO with no
// writer was opened by a blocking open() in libuv's thread pool: Ctrl-C and SIGTERM, even the
// second (process.exit() waits for the pool's threads), left the process hanging. The first
// Ctrl-C while stdin stalled did nothing until stdin ended. The library's `signal` did not
// settle load() while a stream or an async iterable gave nothing. Now every wait for input is
// raced against the run's signal (lib/read/abortable.js) and a FIFO is read as a pipe.
// Each test waits for the run to be waiting on its input (an event, not a time), then aborts
// and checks that the run ends, as an abort does, within a bound scaled to this machine.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, execFileSync } = require('node:child_process')
const { Readable, Writable } = require('node:stream')
const { BIN, ROOT, BASE_ENV, runCli } = require('./helpers/run-cli')
const { useServer } = require('./helpers/redis-server')
const { waitFor, scaledMs } = require('./helpers/wait')
const { load } = require('..')

let tmp
let slackMs
let server
let redis

useServer('pipeload-stalled-srv-', s => { server = s.srv; redis = s.redis })

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-stalled-'))
  // The bound: far more than an abort takes (milliseconds), scaled to this machine
  // (helpers/wait.js), so that a loaded machine does not fail it.
  slackMs = scaledMs(5000)
})

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
})

const STACK = /\n\s+at |internal error/
const sink = () => new Writable({ write (chunk, enc, cb) { cb() } })

/** Resolves with what `promise` gives, or with 'still waiting' once `ms` have passed. */
function within (promise, ms) {
  let timer
  return Promise.race([promise, new Promise(resolve => { timer = setTimeout(resolve, ms, 'still waiting') })]).finally(() => clearTimeout(timer))
}

function fifo (name) {
  const file = path.join(tmp, name)
  execFileSync('mkfifo', [file])
  return file
}

/**
 * Whether process `pid` waits on the FIFO `file`: holds it open (read as a pipe), or has a
 * thread in the kernel's wait for a FIFO's other end (a blocking open()).
 */
function waitsOn (pid, file) {
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try { if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === file) return true } catch {}
  }
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    try { if (fs.readFileSync(`/proc/${pid}/task/${task}/wchan`, 'utf8').includes('wait_for_partner')) return true } catch {}
  }
  return false
}

/** Whether process `pid` has a terminal open besides its stdin, stdout and stderr: the input. */
function opensTerminal (pid) {
  return fs.readdirSync(`/proc/${pid}/fd`).some(fd => {
    try { return Number(fd) > 2 && fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('/dev/pts/') } catch { return false }
  })
}

/** A blocked reader of `file` (if any) gets its writer and then the end: nothing is left waiting. */
function release (file) {
  try { fs.closeSync(fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)) } catch {} // ENXIO: no reader left
}

/** Spawn the CLI; `exited` resolves with { code, stdout, stderr }. */
function startCli (args, stdin = 'ignore') {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: BASE_ENV, stdio: [stdin, 'pipe', 'pipe'] })
  const out = []
  const err = []
  child.stdout.on('data', d => out.push(d))
  child.stderr.on('data', d => err.push(d))
  const exited = new Promise(resolve => child.on('close', code => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() })))
  return { child, exited, stdout: () => Buffer.concat(out).toString() }
}

/** Signal the child, expect it to end within the bound with `code`, as an aborted run. */
async function expectEnds (cli, signal, code) {
  try {
    cli.child.kill(signal)
    const res = await within(cli.exited, slackMs)
    expect(res, `no exit within ${slackMs} ms of ${signal}`).not.toBe('still waiting')
    expect(res.code, res.stderr).toBe(code)
    expect(res.stderr).toMatch(/^pipeload: the load was aborted\n/)
    expect(res.stderr).not.toMatch(STACK)
    return res
  } finally {
    cli.child.kill('SIGKILL') // the old code's process, deaf to both
  }
}

describe.concurrent('CLI: the first Ctrl-C or SIGTERM ends a run whose input stalls', () => {
  for (const [workers, signal, code] of [['0', 'SIGINT', 130], ['0', 'SIGTERM', 143], ['1', 'SIGINT', 130], ['2', 'SIGTERM', 143]]) {
    it(`an input FIFO no process writes to, --workers ${workers}, ${signal}: exit ${code}`, async () => {
      const file = fifo(`in-${workers}-${signal}.csv`)
      const cli = startCli(['import', file, '--key', 'k:{id}', '--dry-run', 'text', '--workers', workers])
      try {
        await waitFor('the run to wait on the FIFO', () => waitsOn(cli.child.pid, file))
        await expectEnds(cli, signal, code)
      } finally {
        release(file)
      }
    })
  }

  it('a terminal named as the input (/dev/stdin under script(1)), SIGINT: exit 130', async ({ skip }) => {
    try { execFileSync('script', ['--version'], { stdio: 'ignore' }) } catch { skip('script(1) is not installed') }
    // script gives the CLI a pseudo-terminal as stdin; `exec` makes the CLI script's child.
    const cmd = `exec '${process.execPath}' '${BIN}' import /dev/stdin --format csv --key 'k:{id}' --dry-run text --workers 0`
    const wrapper = spawn('script', ['-qfec', cmd, '/dev/null'], { cwd: ROOT, env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] })
    let shown = ''
    wrapper.stdout.on('data', d => { shown += d })
    const closed = new Promise(resolve => wrapper.on('close', code => resolve(code)))
    try {
      const pid = await waitFor('the CLI to open the terminal', () => {
        const child = Number(fs.readFileSync(`/proc/${wrapper.pid}/task/${wrapper.pid}/children`, 'utf8').trim().split(' ')[0])
        return child && opensTerminal(child) ? child : null
      })
      // Typed on the terminal: a header and a record; once its command is out, the CLI waits
      // for the next line.
      wrapper.stdin.write('id,name\n1,ada\n')
      await waitFor('the first record\'s command', () => shown.includes('HSET k:1 id 1 name ada'))
      const t0 = Date.now()
      process.kill(pid, 'SIGINT')
      await waitFor(`the CLI to exit after SIGINT (bound ${slackMs} ms)`, () => !fs.existsSync(`/proc/${pid}`), slackMs)
      expect(Date.now() - t0).toBeLessThan(slackMs)
      expect(await closed).toBe(130) // script -e: its child's exit code
    } finally {
      wrapper.stdin.destroy()
      wrapper.kill('SIGKILL')
      await closed
    }
  })

  it('stdin that stalls after a record: the first Ctrl-C ends it (exit 130), the record written, the summary printed', async () => {
    const cli = startCli(['import', '-', '--format', 'csv', '--key', 'k:{id}', '--dry-run', 'text', '--workers', '0'], 'pipe')
    cli.child.stdin.on('error', () => {})
    cli.child.stdin.write('id,name\n1,ada\n') // and then nothing, stdin left open
    try {
      await waitFor('the first record on stdout', () => cli.stdout().includes('HSET k:1 id 1 name ada'))
      const res = await expectEnds(cli, 'SIGINT', 130)
      expect(res.stderr).toMatch(/stopped after 1 record: 1 written, 0 failed/)
    } finally {
      cli.child.stdin.destroy()
    }
  })
})

describe('CLI against a server: stdin stalls mid-load', () => {
  it('Ctrl-C: exit 130, the checkpoint holds what was acknowledged, and --resume loads the rest once', async () => {
    const cp = path.join(tmp, 'stdin.checkpoint')
    const rows = n => Array.from({ length: n }, (_, i) => `${i},v${i}\n`).join('')
    const all = 'id,v\n' + rows(3000)
    const first = 'id,v\n' + rows(1000)
    const cli = startCli(['import', '-', '--format', 'csv', '-u', server.url, '-c', 'SET st:{id} {v}', '--checkpoint', cp, '--workers', '0'], 'pipe')
    cli.child.stdin.on('error', () => {})
    cli.child.stdin.write(first) // and then nothing: stdin stays open
    try {
      await waitFor('the first 1,000 records loaded', async () => await redis.dbsize() === 1000)
      const res = await expectEnds(cli, 'SIGINT', 130)
      expect(res.stderr).toMatch(/stopped after 1,000 records: 1,000 loaded and acknowledged, 0 failed/)
    } finally {
      cli.child.stdin.destroy()
    }
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ records: 1000, loaded: 1000, complete: false })
    const resumed = await runCli(['import', '-', '--format', 'csv', '-u', server.url, '-c', 'SET st:{id} {v}', '--checkpoint', cp, '--resume', '--json'], { input: all })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(JSON.parse(resumed.stdout)).toMatchObject({ resumedFrom: 1000, records: 3000, loaded: 3000 })
    expect(await redis.dbsize()).toBe(3000)
    expect(await redis.get('st:2999')).toBe('v2999')
  })
})

describe.concurrent('library: signal settles load() while its input gives nothing', () => {
  /** A Readable that gives `first` (if any) and then nothing; `asked` once it was read. */
  function stalled (first = null) {
    const s = new Readable({ read () { s.asked = true } })
    s.asked = false
    if (first !== null) s.push(first)
    return s
  }

  for (const workers of [0, 1, 2]) {
    it(`a stream that never gives its header, workers ${workers}: PIPELOAD_ABORTED`, async () => {
      const input = stalled()
      const ac = new AbortController()
      const run = load({ input, format: 'csv', key: 'k:{id}', dryRun: 'resp', output: sink(), workers, signal: ac.signal }).catch(e => e)
      await waitFor('the stream to be read', () => input.asked)
      ac.abort()
      const err = await within(run, slackMs)
      expect(err).toMatchObject({ name: 'PipeloadError', code: 'PIPELOAD_ABORTED' })
      expect(input.destroyed).toBe(true)
    })
  }

  it('a stream that stalls after its first record: PIPELOAD_ABORTED, that record written', async () => {
    const input = stalled('id,name\n1,ada\n')
    const ac = new AbortController()
    const out = []
    const output = new Writable({ write (chunk, enc, cb) { out.push(chunk); cb() } })
    const run = load({ input, format: 'csv', key: 'k:{id}', dryRun: 'text', output, workers: 0, signal: ac.signal }).catch(e => e)
    await waitFor('the first record written', () => Buffer.concat(out).toString().includes('HSET k:1'))
    ac.abort()
    const err = await within(run, slackMs)
    expect(err).toMatchObject({ code: 'PIPELOAD_ABORTED' })
    expect(err.summary).toMatchObject({ records: 1, loaded: 1 })
  })

  it('an async iterable that stops giving records: PIPELOAD_ABORTED, stoppedAt the first record not sent', async () => {
    let waiting = false
    async function * records () {
      yield { id: 1 }
      yield { id: 2 }
      waiting = true
      await new Promise(() => {}) // never
    }
    const ac = new AbortController()
    const run = load({ input: records(), key: 'k:{id}', dryRun: 'resp', output: sink(), signal: ac.signal }).catch(e => e)
    await waitFor('the iterable to stall', () => waiting)
    ac.abort()
    const err = await within(run, slackMs)
    expect(err).toMatchObject({ code: 'PIPELOAD_ABORTED' })
    // Its two records wait in a batch that was not sent: the first not sent is record 1.
    expect(err.summary).toMatchObject({ records: 0, stoppedAt: { file: '<records>', line: 1, offset: null } })
  })

  it('an iterator whose next() never settles: PIPELOAD_ABORTED', async () => {
    let asked = false
    const input = { [Symbol.asyncIterator] () { return { next () { asked = true; return new Promise(() => {}) } } } }
    const ac = new AbortController()
    const run = load({ input, key: 'k:{id}', dryRun: 'resp', output: sink(), signal: ac.signal }).catch(e => e)
    await waitFor('next() to be called', () => asked)
    ac.abort()
    expect(await within(run, slackMs)).toMatchObject({ code: 'PIPELOAD_ABORTED' })
  })

  it('a FIFO path no process writes to: PIPELOAD_ABORTED', async () => {
    const file = fifo('lib-in.ndjson')
    const ac = new AbortController()
    try {
      const run = load({ input: file, key: 'k:{id}', dryRun: 'resp', output: sink(), signal: ac.signal }).catch(e => e)
      await waitFor('the run to wait on the FIFO', () => waitsOn(process.pid, file))
      ac.abort()
      expect(await within(run, slackMs)).toMatchObject({ code: 'PIPELOAD_ABORTED' })
    } finally {
      release(file) // the old code's open, still blocked in a thread of this process's pool
    }
  })

  it('a FIFO path written to, then ended: its records are loaded as a file\'s', async () => {
    const file = fifo('lib-ok.csv')
    const out = []
    const output = new Writable({ write (chunk, enc, cb) { out.push(chunk); cb() } })
    const run = load({ input: file, key: 'k:{id}', dryRun: 'text', output })
    await waitFor('the run to open the FIFO', () => waitsOn(process.pid, file))
    // Opened as pipeload reads it: there is a reader now, so this open does not wait.
    const w = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
    fs.writeSync(w, 'id,name\n1,ada\n2,grace\n')
    fs.closeSync(w)
    const summary = await run
    expect(summary).toMatchObject({ records: 2, loaded: 2 })
    expect(Buffer.concat(out).toString()).toBe('HSET k:1 id 1 name ada\nHSET k:2 id 2 name grace\n')
  })

  it('a Parquet FIFO is refused (it cannot be read from its end), never opened', async () => {
    const file = fifo('lib-in.parquet')
    try {
      const err = await within(load({ input: file, key: 'k:{id}', dryRun: 'resp', output: sink() }).catch(e => e), slackMs)
      expect(err).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', message: expect.stringMatching(/^.*lib-in\.parquet: Parquet cannot be read from a FIFO or a device: /) })
    } finally {
      release(file)
    }
  })
})
