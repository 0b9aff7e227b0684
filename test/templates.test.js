'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 13 items 1–6, end to end against a real server: field names with spaces in braces,
// --key quoting as in -c, {$n} {$line} {$file} {$}, spread {x[]} / {x[sep]}, vector bytes
// {x:f32} / --vector, and a real field named like one of these winning.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('../lib')

let srv, redis, tmp
useServer('pipeload-templates-', s => { ({ srv, redis, tmp } = s) })

let files = 0
function file (name, content) {
  const dir = path.join(tmp, `f${files++}`)
  fs.mkdirSync(dir)
  const p = path.join(dir, name)
  fs.writeFileSync(p, content)
  return p
}

const WAGES = 'id,Age,Hourly Wage ($),borders\n8,34,21.50,"AND,BEL,DEU"\n9,51,18,\n'
const PEOPLE = [
  { id: 1, name: 'Ada', tags: ['math', 'engines'], embedding: [0.5, -1.25, 3] },
  { id: 2, name: 'Bob', tags: [], embedding: [1, 2, 4] }
].map(r => JSON.stringify(r)).join('\n') + '\n'

function f32 (...xs) {
  const b = Buffer.alloc(4 * xs.length)
  xs.forEach((x, i) => b.writeFloatLE(x, 4 * i))
  return b
}
function f64 (...xs) {
  const b = Buffer.alloc(8 * xs.length)
  xs.forEach((x, i) => b.writeDoubleLE(x, 8 * i))
  return b
}

// Both encoding paths: on the main thread and in the parse worker.
for (const worker of [false, true]) {
  const flag = worker ? '--workers=1' : '--workers=0'
  describe(`templates (${flag})`, () => {
    it('item 1: braces group a field name with spaces and punctuation, in -c and --key', async () => {
      const csv = file('wages.csv', WAGES)
      const p = `i1${worker}:`
      const r = await runCli(['import', csv, '-u', srv.url, flag, '-q', '-c', `HSET ${p}w:{Age} wage {Hourly Wage ($)}`])
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      expect(await redis.hgetall(`${p}w:34`)).toEqual({ wage: '21.50' })
      expect(await redis.hgetall(`${p}w:51`)).toEqual({ wage: '18' })
      // --key: quotes group as in -c (not literal), braces group spaces.
      const k = await runCli(['import', csv, '-u', srv.url, flag, '-q', '-k', `${p}q:"{id}"`])
      expect(k.code).toBe(0)
      expect(await redis.exists(`${p}q:8`, `${p}q:"8"`)).toBe(1)
      expect(await redis.hget(`${p}q:8`, 'Hourly Wage ($)')).toBe('21.50')
      await load({ url: srv.url, workers: worker ? 1 : 0, input: csv, key: `${p}lib w:{Hourly Wage ($)}` })
      expect(await redis.hget(`${p}lib w:21.50`, 'Age')).toBe('34')
    })

    it('item 3: {$n} {$line} {$file}; item 4: {$} as compact JSON', async () => {
      const csv = file('wages.csv', WAGES)
      const nd = file('people.ndjson', PEOPLE)
      const p = `i3${worker}:`
      const r = await runCli(['import', csv, '-u', srv.url, flag, '-q', '-c', `HSET ${p}row:{$n} line {$line} file {$file}`, '-c', `SET ${p}json:{id} {$}`])
      expect(r.code).toBe(0)
      expect(await redis.hgetall(`${p}row:1`)).toEqual({ line: '2', file: csv })
      expect(await redis.hgetall(`${p}row:2`)).toEqual({ line: '3', file: csv })
      expect(JSON.parse(await redis.get(`${p}json:8`))).toEqual({ id: '8', Age: '34', 'Hourly Wage ($)': '21.50', borders: 'AND,BEL,DEU' })
      const h = await runCli(['import', csv, '-u', srv.url, flag, '-q', '--no-header', '-c', `SET ${p}arr:{$n} {$}`])
      expect(h.code).toBe(0)
      expect(await redis.get(`${p}arr:3`)).toBe('["9","51","18",""]')
      await load({ url: srv.url, workers: worker ? 1 : 0, input: nd, command: `SET ${p}nd:{$n} {$}` })
      expect(await redis.get(`${p}nd:2`)).toBe(JSON.stringify(JSON.parse(PEOPLE.split('\n')[1])))
      // --key with a record number, for data without an id.
      const k = await runCli(['import', csv, '-u', srv.url, flag, '-q', '--key', `${p}city:{$n}`])
      expect(k.code).toBe(0)
      expect(await redis.hget(`${p}city:2`, 'id')).toBe('9')
    })

    it('item 2: {x[]} spreads an array, {x[,]} splits text; empty: the command is skipped', async () => {
      const csv = file('wages.csv', WAGES)
      const nd = file('people.ndjson', PEOPLE)
      const p = `i2${worker}:`
      const r = await runCli(['import', nd, '-u', srv.url, flag, '--json', '-c', `SADD ${p}tags:{id} {tags[]}`, '-c', `SET ${p}seen:{id} 1`])
      expect(r.code).toBe(0)
      expect((await redis.smembers(`${p}tags:1`)).sort()).toEqual(['engines', 'math'])
      expect(await redis.exists(`${p}tags:2`)).toBe(0)
      expect(await redis.get(`${p}seen:2`)).toBe('1')
      expect(JSON.parse(r.stdout)).toMatchObject({ records: 2, loaded: 2, errors: 0, commands: 3 })
      const s = await runCli(['import', csv, '-u', srv.url, flag, '-q', '-c', `RPUSH ${p}b:{id} {borders[,]}`])
      expect(s.code).toBe(0)
      expect(await redis.lrange(`${p}b:8`, 0, -1)).toEqual(['AND', 'BEL', 'DEU'])
      expect(await redis.exists(`${p}b:9`)).toBe(0)
      // A text cell for {x[]} (not an array) fails its record with its line.
      const bad = await runCli(['import', csv, '-u', srv.url, flag, '-c', `SADD ${p}x:{id} {borders[]}`])
      expect(bad.code).toBe(1)
      expect(bad.stderr).toContain('wages.csv:2: field "borders" is text, not an array')
    })

    it('item 5: {x:f32} / {x:f64} / --vector write little-endian float bytes, byte for byte', async () => {
      const nd = file('people.ndjson', PEOPLE)
      const csv = file('vec.csv', 'id,embedding\n1,"[0.5,-1.25,3]"\n2,"[0.1,0.2,0.3]"\n')
      const p = `i5${worker}:`
      const r = await runCli(['import', nd, '-u', srv.url, flag, '-q', '-c', `HSET ${p}a:{id} v32 {embedding:f32:3} v64 {embedding:f64}`])
      expect(r.stderr).toBe('')
      const a = await redis.hgetallBuffer(`${p}a:1`)
      expect(a.v32.equals(f32(0.5, -1.25, 3))).toBe(true)
      expect(a.v64.equals(f64(0.5, -1.25, 3))).toBe(true)
      const c = await runCli(['import', csv, '-u', srv.url, flag, '-q', '-c', `HSET ${p}c:{id} v {embedding:f32}`])
      expect(c.code).toBe(0)
      expect((await redis.hgetBuffer(`${p}c:2`, 'v')).equals(f32(0.1, 0.2, 0.3))).toBe(true)
      // --vector: `*` writes that field as bytes, the others as text.
      const k = await runCli(['import', csv, '-u', srv.url, flag, '-q', '--key', `${p}k:{id}`, '--vector', 'embedding:f32:3'])
      expect(k.code).toBe(0)
      const h = await redis.hgetallBuffer(`${p}k:1`)
      expect(h.id.toString()).toBe('1')
      expect(h.embedding.equals(f32(0.5, -1.25, 3))).toBe(true)
      await load({ url: srv.url, workers: worker ? 1 : 0, input: nd, key: `${p}lib:{id}`, vector: 'embedding:f64' })
      expect((await redis.hgetBuffer(`${p}lib:2`, 'embedding')).equals(f64(1, 2, 4))).toBe(true)
    })

    it('item 5: a wrong length or a non-number fails that record with file:line', async () => {
      const csv = file('vec.csv', 'id,embedding\n1,"[1,2,3]"\n2,"[1,2]"\n3,"[1,""x"",3]"\n4,"[4,5,6]"\n')
      const p = `i5b${worker}:`
      const r = await runCli(['import', csv, '-u', srv.url, flag, '--on-error', 'skip', '--json', '-c', `HSET ${p}v:{id} v {embedding:f32:3}`])
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('vec.csv:3: field "embedding" has 2 numbers, {embedding:f32:3} expects 3')
      expect(r.stderr).toContain('vec.csv:4: field "embedding" element 1 is "x", not a number')
      expect(JSON.parse(r.stdout)).toMatchObject({ records: 4, loaded: 2, errors: 2 })
      expect(await redis.exists(`${p}v:1`, `${p}v:2`, `${p}v:3`, `${p}v:4`)).toBe(2)
    })

    it('item 6: a real field named with ":" or "$" wins; {=…} forces the special reading, a backslash the field', async () => {
      const csv = file('odd.csv', 'id,$n,ratio:f32,tags[]\n7,first,half,t\n')
      const p = `i6${worker}:`
      const r = await runCli(['import', csv, '-u', srv.url, flag, '-q', '-c',
        `HSET ${p}o:{id} a {$n} b {ratio:f32} c {tags[]} d {=$n} e {\\$n}`])
      expect(r.stderr).toBe('')
      expect(await redis.hgetall(`${p}o:7`)).toEqual({ a: 'first', b: 'half', c: 't', d: '1', e: 'first' })
      // JSON: decided per record, by whether the record has that key.
      const nd = file('odd.ndjson', '{"id":1,"$n":"mine","e:f32":"text"}\n{"id":2,"e":[1]}\n')
      await load({ url: srv.url, workers: worker ? 1 : 0, input: nd, command: `HSET ${p}j:{id} n {$n} e {e:f32}` })
      expect(await redis.hgetall(`${p}j:1`)).toEqual({ n: 'mine', e: 'text' })
      const j2 = await redis.hgetallBuffer(`${p}j:2`)
      expect(j2.n.toString()).toBe('2')
      expect(j2.e.equals(f32(1))).toBe(true)
    })
  })
}

describe('templates: parsing and help', () => {
  it('a spread inside a word is refused with how to name such a field', async () => {
    const csv = file('wages.csv', WAGES)
    const r = await runCli(['import', csv, '--dry-run', 'text', '-c', 'SADD k x{borders[,]}'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('must be a word of its own')
  })

  // A parse worker compiled the templates first and its error stopped the thread: exit 70,
  // "internal error, please report it" and a stack trace, for a typo in a template.
  it.each(['0', '1', '2', 'auto'])('a template error with --workers %s: exit 2, the message, no stack', async workers => {
    const r = await runCli(['import', file('wages.csv', WAGES), '--dry-run', 'text', '-c', 'SADD k x{borders[,]}', '--workers', workers])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^pipeload: invalid command template "SADD k x\{borders\[,\]\}": .*must be a word of its own/)
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /)
  })

  it('{=…} on a plain name is refused', async () => {
    const r = await runCli(['import', file('wages.csv', WAGES), '--dry-run', 'text', '-c', 'SET k {=id}'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('"=" forces the reading')
  })

  it('--vector must name a float type', async () => {
    const r = await runCli(['import', file('wages.csv', WAGES), '--dry-run', 'text', '--key', 'k:{id}', '--vector', 'embedding'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('vector must be a field and a float type')
  })

  it('import --help lists the new template words and --vector', async () => {
    const r = await runCli(['import', '--help'])
    for (const s of ['{Hourly Wage ($)}', '{$n}', '{$line}', '{$file}', '{$}', '{tags[]}', '{borders[,]}', '{emb:f32}', '{=$n}', '--vector', "--key 'city:{$n}'"]) {
      expect(r.stdout).toContain(s)
    }
  })
})

describe('{$n} is stable across --resume', () => {
  it('record numbers after a resume continue from the checkpoint', async () => {
    const ROWS = 3000
    const cp = path.join(tmp, 'n.checkpoint')
    const rows = abortAt => (async function * () {
      for (let i = 0; i < ROWS; i++) {
        if (i === abortAt) ac.abort()
        yield { id: i }
      }
    })()
    const ac = new AbortController()
    const opts = { url: srv.url, checkpoint: cp, batchSize: 100, name: 'generated', command: 'SET rn:{id} {$n}' }
    const err = await load({ ...opts, input: rows(1500), signal: ac.signal }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_ABORTED')
    const saved = JSON.parse(fs.readFileSync(cp, 'utf8')).records
    expect(saved).toBeGreaterThan(0)
    expect(saved).toBeLessThan(ROWS)
    const summary = await load({ ...opts, input: rows(-1), resume: true })
    expect(summary).toMatchObject({ resumedFrom: saved, records: ROWS, loaded: ROWS })
    const values = await redis.mget(Array.from({ length: ROWS }, (_, i) => `rn:${i}`))
    for (let i = 0; i < ROWS; i++) if (values[i] !== String(i + 1)) expect.fail(`rn:${i} is ${values[i]}, expected ${i + 1}`)
  })
})

describe('template parsing (pure)', () => {
  const { parseTemplate, keyWord } = require('../lib/encode/template')
  const names = t => parseTemplate(t).words.slice(1).map(w => w.star ? '*' : w.parts.map(p => p.type === 1 ? `{${p.name}}` : p.text).join(''))

  it('braces group whitespace; quotes still group; {{ }} stay literal', () => {
    expect(names('HSET w:{Age} wage {Hourly Wage ($)} "two words" {{tag}}:{id} *')).toEqual(['w:{Age}', 'wage', '{Hourly Wage ($)}', 'two words', '{tag}:{id}', '*'])
  })

  it('--key: quotes group as in -c, whitespace stays in the key', () => {
    expect(keyWord('w:"{id}"')).toBe('w:{id}')
    expect(names(`HSET ${keyWord('my key:{Hourly Wage ($)}')} *`)).toEqual(['my key:{Hourly Wage ($)}', '*'])
    expect(names(`HSET ${keyWord('"it\'s":{id}')} *`)).toEqual(["it's:{id}", '*'])
  })

  it('the other readings, forced or escaped', () => {
    const parts = t => parseTemplate(t).words[1].parts[0]
    expect(parts('SET {$n}')).toMatchObject({ name: '$n', alt: { kind: 'meta', which: 'n' }, forced: false })
    expect(parts('SET {=tags[|]}')).toMatchObject({ name: 'tags[|]', alt: { kind: 'spread', name: 'tags', sep: '|' }, forced: true })
    expect(parts('SET {e:f64:768}')).toMatchObject({ alt: { kind: 'vector', name: 'e', type: 'f64', dim: 768 } })
    expect(parts('SET {e\\:f32}')).toEqual({ type: 1, name: 'e:f32' })
    expect(parts('SET {$name}')).toEqual({ type: 1, name: '$name' })
  })
})
