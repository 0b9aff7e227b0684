'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 34 items 2 and 6 on the command line: a key that names no field (`--key
// 'airport:iata'`, the braces forgotten), a command short of arguments and an empty {} are
// refused with exit 2 before connecting, and nothing reaches the server; --same-key loads
// the deliberate case (a counter, one list), as redis-cli-like reads of the server show.

const { useServer, withDeadPort } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')

let srv, redis, write
useServer('pipeload-same-key-', s => { ({ srv, redis, write } = s) })

const AIRPORTS = 'iata,name\nLIS,Lisbon\nOPO,Porto\nFAO,Faro\n'

describe('a key that names no field', () => {
  it('--key without braces: exit 2, the braces suggested, nothing written', async () => {
    const file = write('airports.csv', AIRPORTS)
    const before = await redis.dbsize()
    const res = await runCli(['import', file, '--key', 'sk1:airport:iata', '-u', srv.url])
    expect(res.code).toBe(2)
    expect(res.stderr).toBe("pipeload: --key 'sk1:airport:iata' names no field, so every record writes the same key; did you mean --key 'sk1:airport:{iata}'? (--same-key to write one key on purpose)\n")
    expect(res.stdout).toBe('')
    expect(await redis.dbsize()).toBe(before)
  })

  it('before connecting: with nothing on the port, exit 2 and not 4; --json has the same message', async () => {
    const file = write('airports.csv', AIRPORTS)
    await withDeadPort(async port => {
      const res = await runCli(['import', file, '-c', 'INCR total', '-p', String(port), '--json'])
      expect(res.code).toBe(2)
      const message = "-c 'INCR total' names no field in its key \"total\", so every record writes the same key; put a field in braces in the key, such as {id} or {$n} (--same-key to write one key on purpose)"
      expect(res.stderr).toBe(`pipeload: ${message}\n`)
      expect(JSON.parse(res.stdout)).toEqual({ error: { code: 'PIPELOAD_TEMPLATE_INVALID', message, exitCode: 2 } })
    })
  })

  it('--same-key: a counter and one list load, every record in them', async () => {
    const file = write('airports.csv', AIRPORTS)
    const res = await runCli(['import', file, '-c', 'INCR sk2:total', '-c', 'RPUSH sk2:all {iata}', '--same-key', '-u', srv.url, '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.get('sk2:total')).toBe('3')
    expect(await redis.lrange('sk2:all', 0, -1)).toEqual(['LIS', 'OPO', 'FAO'])
  })

  it('one command whose key names a field is enough; a command without a key (PUBLISH) is not refused', async () => {
    const file = write('airports.csv', AIRPORTS)
    const res = await runCli(['import', file, '-c', 'HSET sk3:a:{iata} name {name}', '-c', 'SADD sk3:all {iata}', '-c', 'PUBLISH sk3 {iata}', '-u', srv.url, '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect((await redis.smembers('sk3:all')).sort()).toEqual(['FAO', 'LIS', 'OPO'])
    expect(await redis.hget('sk3:a:OPO', 'name')).toBe('Porto')
  })

  it('bench with a file refuses it too, before connecting; --same-key times it', async () => {
    const file = write('airports.csv', AIRPORTS)
    await withDeadPort(async port => {
      const res = await runCli(['bench', file, '--key', 'airport:iata', '-p', String(port)])
      expect(res.code).toBe(2)
      expect(res.stderr).toContain("pipeload: --key 'airport:iata' names no field, so every record writes the same key; did you mean --key 'airport:{iata}'?")
    })
    const res = await runCli(['bench', file, '-c', 'RPUSH list {iata}', '--same-key', '--batch-sizes', '10', '--no-baseline', '--json', '-u', srv.url])
    expect(res.code, res.stderr).toBe(0)
    const { rows } = JSON.parse(res.stdout)
    expect(rows.map(r => [r.correct, r.records])).toEqual([[true, 3]])
  })
})

describe('a template short of arguments, an empty {}', () => {
  it('-c \'HSET user:{id}\': exit 2 by arity, before connecting', async () => {
    const file = write('users.csv', 'id,name\n1,Ada\n')
    await withDeadPort(async port => {
      const res = await runCli(['import', file, '-c', 'HSET user:{id}', '-p', String(port)])
      expect(res.code).toBe(2)
      expect(res.stderr).toBe("pipeload: -c 'HSET user:{id}': HSET needs at least 3 arguments (key field value), got 1\n")
    })
  })

  it('--key "row:{$n}" as the shell passes it (row:{}): exit 2, single quotes suggested', async () => {
    const file = write('users.csv', 'id,name\n1,Ada\n')
    const res = await runCli(['import', file, '--key', 'row:{}', '--dry-run', 'text'])
    expect(res.code).toBe(2)
    expect(res.stderr).toBe("pipeload: --key 'row:{}' has an empty {}: in double quotes the shell replaces $n (and $line, $file, $key) with nothing; put the template in single quotes, e.g. --key 'row:{$n}'\n")
    expect(res.stdout).toBe('')
  })
})
