'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 22 item 5: with --json, a failure before any summary (a bad option, an unknown flag,
// a missing input, no server) is a JSON object on stdout as well as the line on stderr:
// { "error": { "code", "message", "exitCode" } }. A run stopped early prints its summary
// with `error` (exit code included) once, not a second object.

const { useServer, withDeadPort } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')

let srv
let write
useServer('pipeload-json-errors-', s => { ({ srv, write } = s) })

/** stdout as exactly one JSON line. */
function oneJson (r) {
  const lines = r.stdout.split('\n').filter(Boolean)
  expect(lines, r.stdout).toHaveLength(1)
  return JSON.parse(lines[0])
}

describe('--json: a failure before the run is JSON on stdout', () => {
  it('a bad option value: PIPELOAD_OPTION_INVALID, exit 2, the message as stderr has it', async () => {
    const file = write('a.csv', 'id\n1\n')
    const r = await runCli(['import', file, '--key', 'je:{id}', '-u', srv.url, '-b', 'x', '--json'])
    expect(r.code).toBe(2)
    expect(oneJson(r)).toEqual({ error: { code: 'PIPELOAD_OPTION_INVALID', message: '--batch-size must be a positive integer such as 5000 or "5k", got "x"', exitCode: 2 } })
    expect(r.stderr).toBe('pipeload: --batch-size must be a positive integer such as 5000 or "5k", got "x"\n')
  })

  it('an unknown flag and a bad choice (commander\'s errors): PIPELOAD_OPTION_INVALID, exit 2', async () => {
    const file = write('b.csv', 'id\n1\n')
    const r = await runCli(['import', file, '--key', 'je:{id}', '--bogus', '--json'])
    expect(r.code).toBe(2)
    expect(oneJson(r)).toEqual({ error: { code: 'PIPELOAD_OPTION_INVALID', message: 'unknown option "--bogus"', exitCode: 2 } })
    const c = await runCli(['import', file, '--json', '--key', 'je:{id}', '--format', 'xml'])
    expect(c.code).toBe(2)
    expect(oneJson(c).error).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', exitCode: 2 })
    expect(oneJson(c).error.message).toMatch(/argument 'xml' is invalid/)
  })

  it('a missing input: PIPELOAD_INPUT_NOT_FOUND, exit 3', async () => {
    const r = await runCli(['import', '/nonexistent/je.csv', '--key', 'je:{id}', '-u', srv.url, '--json'])
    expect(r.code).toBe(3)
    expect(oneJson(r)).toEqual({ error: { code: 'PIPELOAD_INPUT_NOT_FOUND', message: 'cannot read /nonexistent/je.csv: no such file', exitCode: 3 } })
  })

  it('an unreachable server: PIPELOAD_CONNECTION_FAILED, exit 4', async () => {
    const file = write('c.csv', 'id\n1\n')
    await withDeadPort(async port => {
      const r = await runCli(['import', file, '--key', 'je:{id}', '-h', '127.0.0.1', '-p', String(port), '--connect-timeout', '2s', '--json'])
      expect(r.code, r.stderr).toBe(4)
      const { error } = oneJson(r)
      expect(error).toMatchObject({ code: 'PIPELOAD_CONNECTION_FAILED', exitCode: 4 })
      expect(error.message).toMatch(`cannot connect to Redis at 127.0.0.1:${port}`)
    })
  })

  it('bench --json too', async () => {
    const r = await runCli(['bench', '-u', srv.url, '--count', '0', '--json'])
    expect(r.code).toBe(2)
    expect(oneJson(r).error).toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', exitCode: 2 })
  })

  it('without --json, or with "--json" as another option\'s value, stdout stays empty', async () => {
    const file = write('d.csv', 'id\n1\n')
    const plain = await runCli(['import', file, '--key', 'je:{id}', '-b', 'x'])
    expect(plain.code).toBe(2)
    expect(plain.stdout).toBe('')
    const value = await runCli(['import', file, '-c', '--json', '-b', 'x', '-u', srv.url])
    expect(value.code).toBe(2)
    expect(value.stdout).toBe('')
    // stdout belongs to --dry-run's commands (the pair is refused): nothing written there.
    const dry = await runCli(['import', file, '--key', 'je:{id}', '--json', '--dry-run', 'resp'])
    expect(dry.code).toBe(2)
    expect(dry.stdout).toBe('')
  })

  it('a run stopped early: one object, its summary with error.exitCode', async () => {
    let text = 'id,v\n'
    for (let i = 1; i <= 20; i++) text += `${i},v${i}\n`
    const file = write('e.csv', text + '21\n')
    const r = await runCli(['import', file, '-c', 'SET je:{id} {v}', '-u', srv.url, '--json', '-b', '5'])
    expect(r.code).toBe(3)
    const out = oneJson(r)
    expect(out).toMatchObject({ records: 21, loaded: 20, error: { code: 'PIPELOAD_INPUT_INVALID', exitCode: 3 } })
  })
})
