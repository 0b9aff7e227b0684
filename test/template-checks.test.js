'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 34 items 2 and 6, the pure part (lib/encode/template-checks.js, lib/encode/arity.js):
// keys that name no field are refused unless sameKey says they are meant; a command with
// too few (or, for an exact arity, too many) arguments, or unpaired ones, is refused; an
// empty {} says the shell may have eaten a $name. The arities are checked against a real
// server's COMMAND INFO.

const { useServer } = require('./helpers/redis-server')
const { templateSources, checkSources, refuseSameKey } = require('../lib/encode/template-checks')
const { ARITY } = require('../lib/encode/arity')
const { load } = require('..')

let redis
useServer('pipeload-template-checks-', s => { ({ redis } = s) })

/** The refusal of these options' templates (as load() reads key/command/commands), or null. */
function refusal (o, { sameKey = false, columns = null } = {}) {
  try {
    refuseSameKey(checkSources(templateSources(o)), { sameKey, columns })
    return null
  } catch (err) {
    expect(err.code).toBe('PIPELOAD_TEMPLATE_INVALID')
    return err
  }
}

describe('a key that names no field', () => {
  it('--key without braces: refused, with the braces suggested, in the library\'s words and the command line\'s', () => {
    const err = refusal({ key: 'airport:iata' })
    expect(err.message).toBe('key "airport:iata" names no field, so every record writes the same key; did you mean key "airport:{iata}"? (sameKey: true to write one key on purpose)')
    expect(err.cliMessage).toBe("--key 'airport:iata' names no field, so every record writes the same key; did you mean --key 'airport:{iata}'? (--same-key to write one key on purpose)")
    expect(err.option).toBe('key')
  })

  it('known columns: the part that is a column gets the braces; none: a generic hint naming one', () => {
    expect(refusal({ key: 'airport:IATA:x' }, { columns: ['name', 'iata'] }).cliMessage).toContain("did you mean --key 'airport:{iata}:x'?")
    expect(refusal({ key: 'airport:code' }, { columns: ['name', 'iata'] }).cliMessage).toContain('put a field in braces in the key, such as {name} or {$n}')
    expect(refusal({ command: 'INCR total' }).cliMessage).toBe("-c 'INCR total' names no field in its key \"total\", so every record writes the same key; put a field in braces in the key, such as {id} or {$n} (--same-key to write one key on purpose)")
    expect(refusal({ command: 'SET city:name {name}' }).cliMessage).toContain("did you mean -c 'SET city:{name} {name}'?")
  })

  it('several commands, none with a field in its key: all named', () => {
    expect(refusal({ commands: ['INCR total', 'RPUSH all {id}'] }).cliMessage).toBe(
      "no command names a field in its key (-c 'INCR total', -c 'RPUSH all {id}'), so every record writes the same keys; put a field in braces in a key, such as {id} or {$n} (--same-key to write them on purpose)")
  })

  it('a key with a field, {$n}, {$line}, {$file}, {$key}, a spread or {$} in it is fine; so is one such command among others', () => {
    for (const key of ['u:{id}', 'row:{$n}', 'l:{$line}', 'f:{$file}', 'c:{$key}', '{$}', 'k:{a.b}', 'k:{Hourly Wage ($)}']) {
      expect(refusal({ key }), key).toBe(null)
    }
    expect(refusal({ command: 'SADD {tags[]} x' })).toBe(null)
    expect(refusal({ commands: ['HSET user:{id} *', 'SADD users {id}', 'INCR total'] })).toBe(null)
  })

  it('sameKey: true lets it through', () => {
    expect(refusal({ command: 'INCR total' }, { sameKey: true })).toBe(null)
    expect(refusal({ key: 'airport:iata' }, { sameKey: true })).toBe(null)
  })

  it('the key is where the command has it: PUBLISH has none, DEL all its arguments, a module command its first', () => {
    expect(refusal({ command: 'PUBLISH events {$}' })).toBe(null)
    expect(refusal({ command: 'DEL a b:{id}' })).toBe(null)
    expect(refusal({ command: 'DEL a b' })).not.toBe(null)
    expect(refusal({ command: 'SET {{tag}}:x {v}' })).not.toBe(null) // literal braces are no field
    expect(refusal({ command: 'JSON.SET doc $ {$}' }).message).toContain('its key "doc"')
    expect(refusal({ command: 'JSON.SET doc:{id} $ {$}' })).toBe(null)
    // Keys only a record knows (MSET's pairs from *): not refused.
    expect(refusal({ command: 'MSET *' })).toBe(null)
  })

  it('load() refuses before connecting: nothing listens on port 1, and the error is the template\'s', async () => {
    const err = await load({ port: 1, input: [{ iata: 'LIS' }, { iata: 'OPO' }], key: 'airport:iata' }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_TEMPLATE_INVALID')
    expect(err.exitCode).toBe(2)
    // A map function writes the keys it returns: not checked, and sameKey with it is refused.
    await expect(load({ port: 1, input: [], map: () => [], sameKey: true })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'sameKey' })
    await expect(load({ port: 1, input: [], command: 'INCR total', sameKey: 'yes' })).rejects.toMatchObject({ code: 'PIPELOAD_OPTION_INVALID', option: 'sameKey' })
  })
})

describe('arity', () => {
  const problem = command => {
    try {
      checkSources(templateSources({ command }))
      return null
    } catch (err) {
      expect(err.code).toBe('PIPELOAD_TEMPLATE_INVALID')
      return err.cliMessage
    }
  }

  it('too few arguments, too many for an exact arity, unpaired fields and values', () => {
    expect(problem('HSET user:{id}')).toBe("-c 'HSET user:{id}': HSET needs at least 3 arguments (key field value), got 1")
    expect(problem('HSET user:{id} name')).toBe("-c 'HSET user:{id} name': HSET needs at least 3 arguments (key field value), got 2")
    expect(problem('INCR t:{id} 5')).toBe("-c 'INCR t:{id} 5': INCR takes 1 argument (key), got 2")
    expect(problem('SETEX k:{id} {v}')).toBe("-c 'SETEX k:{id} {v}': SETEX takes 3 arguments (key seconds value), got 2")
    expect(problem('HSET u:{id} a 1 b')).toBe("-c 'HSET u:{id} a 1 b': HSET takes field value pairs after the key (key field value [field value ...]), got 3 arguments after the key")
    expect(problem('HSET u:{id} name *')).toBe("-c 'HSET u:{id} name *': HSET takes field value pairs after the key (key field value [field value ...]), got 1 argument and * after the key")
    expect(problem('MSET a:{id} 1 b:{id}')).toBe("-c 'MSET a:{id} 1 b:{id}': MSET takes key value pairs (key value [key value ...]), got 3 arguments")
    expect(problem('ZADD z:{id} 1 a 2')).toMatch(/^-c 'ZADD z:\{id\} 1 a 2': ZADD takes score member pairs after the key and its options \(.*\), got 3 arguments after the key$/)
    expect(problem('ZADD z:{id} NX CH 1')).toMatch(/got 1 argument after the options$/)
    expect(problem('XADD s:{id} "*" {v}')).toBe(`-c 'XADD s:{id} "*" {v}': XADD needs at least 4 arguments (key id field value), got 3`)
    expect(problem('INCR t:{id} 1 *')).toBe("-c 'INCR t:{id} 1 *': INCR takes 1 argument (key), got 2 and *")
  })

  it('what only a record can tell is not refused: * and spreads, a field where ZADD takes options; unknown commands are left to the server', () => {
    for (const t of ['HSET u:{id} *', 'HSET u:{id} a 1 *', 'SADD s:{id} {tags[]}', 'HSET u:{id} {pairs[]}', 'ZADD z:{id} {flag} {score} {m}',
      'ZADD z:{id} {score} {m}', 'ZADD z:{id} NX 1 {m}', 'ZADD z:{id} {scores[]}', 'XADD s:{id} * a {a}', 'SET k:{id} {v} EX 60', 'TS.ADD t:{id} {ts}', 'FOO.BAR x:{id}']) {
      expect(problem(t), t).toBe(null)
    }
  })

  it('--key is HSET <key> *: never short', () => {
    expect(checkSources(templateSources({ key: 'u:{id}' }))).toHaveLength(1)
  })

  it("each arity is the server's (COMMAND INFO), the command name counted", async () => {
    const names = Object.keys(ARITY).filter(n => n !== 'JSON.SET') // RedisJSON is a module: not on this server
    const info = await redis.call('COMMAND', 'INFO', ...names)
    expect(Object.fromEntries(info.map(([name, arity]) => [name.toUpperCase(), arity])))
      .toEqual(Object.fromEntries(names.map(n => [n, ARITY[n][0]])))
  })
})

describe('an empty {}', () => {
  it('says the shell may have eaten $n, and how to quote', () => {
    let err
    try { checkSources(templateSources({ key: 'row:{}' })) } catch (e) { err = e }
    expect(err.code).toBe('PIPELOAD_TEMPLATE_INVALID')
    expect(err.cliMessage).toBe("--key 'row:{}' has an empty {}: in double quotes the shell replaces $n (and $line, $file, $key) with nothing; put the template in single quotes, e.g. --key 'row:{$n}'")
    expect(err.message).toBe('key "row:{}" has an empty {}: name a field in it, or {$n}, e.g. "row:{$n}" (from a shell: in double quotes it replaces $n with nothing); {{}} is a literal {}')
    try { checkSources(templateSources({ command: 'SET {{x}}:{ } {v}' })) } catch (e) { err = e }
    expect(err.cliMessage).toMatch(/e\.g\. -c 'SET \{\{x\}\}:\{\$n\} \{v\}'$/)
  })
})
