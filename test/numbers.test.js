'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Numbers as written (issue 22 item 1): a JSON number reaches Redis with the input's digits
// (12345678901234567890, 1.10, 1e3, -0, 0.1000000000000000055511151231257827), on every
// reader path, in keys, values, nested values and {$}. The oracle is the generator's own
// tokens and lines: the expected text is what the test wrote, never what a reader read.

const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { prng } = require('./helpers/prng')
const { load, JsonNumber } = require('../lib')
const { mayHoldInexact, parseJson, exactJson } = require('../lib/read/json-number')

let srv, redis, tmp
useServer('pipeload-numbers-', s => { ({ srv, redis, tmp } = s) })

const digits = (r, n) => Array.from({ length: n }, () => r.int(10)).join('')
const nonZero = r => String(1 + r.int(9))

/** Number tokens a double would change (or print otherwise), and some it keeps. */
function inexactToken (r) {
  switch (r.int(8)) {
    case 0: return (r.chance(0.3) ? '-' : '') + nonZero(r) + digits(r, 16 + r.int(10)) // beyond 2^53
    case 1: return `${r.int(1000)}.${digits(r, r.int(4))}${nonZero(r)}0` // a trailing zero: 1.10
    case 2: return `${nonZero(r)}${r.chance(0.5) ? '.' + digits(r, 1 + r.int(3)) : ''}${r.pick(['e', 'E'])}${r.pick(['', '+', '-'])}${1 + r.int(30)}` // 1e3
    case 3: return r.pick(['-0', '-0.0', '0.0', '1.0', '1E+400', '-1e-400'])
    case 4: return '0.' + digits(r, 18 + r.int(12)) + nonZero(r) // more digits than a double holds
    case 5: return '0.000000' + nonZero(r) + digits(r, r.int(3)) // below 1e-6
    case 6: return '0.1000000000000000055511151231257827'
    default: return '9007199254740993' // 2^53 + 1
  }
}

function exactToken (r) {
  return r.pick([String(r.int(100000)), `-${r.int(1000)}.${r.int(9) + 1}`, '3.25', '0', '100000000000000', '0.000001'])
}

const tok = r => r.chance(0.6) ? inexactToken(r) : exactToken(r)

/**
 * n records as compact JSON lines (so {$} is the line itself), in three shapes: flat lines
 * the NDJSON fast path takes (exact numbers only), flat lines with numbers it leaves to
 * JSON.parse (ids beyond 2^53, or "f…" ids with 1.10 and the like), and nested lines.
 * Each record's expected hash holds the tokens as written.
 */
function records (n, seed) {
  const r = prng(seed)
  const out = []
  for (let i = 0; i < n; i++) {
    const kind = i % 3
    const id = kind === 0 ? JSON.stringify(`s${i}`) : kind === 1 && i % 2 ? JSON.stringify(`f${i}`) : `${i % 4 === 1 ? '-' : ''}9${String(i).padStart(21, '0')}`
    const key = id.startsWith('"') ? JSON.parse(id) : id
    let line, hash
    if (kind === 0) {
      const a = exactToken(r)
      const b = exactToken(r)
      line = `{"id":${id},"a":${a},"b":${b}}`
      hash = { id: key, a, b }
    } else if (kind === 1) {
      const a = inexactToken(r)
      const b = tok(r)
      line = `{"id":${id},"a":${a},"b":${b}}`
      hash = { id: key, a, b }
    } else {
      const [a, x, l0, l1] = [tok(r), tok(r), tok(r), tok(r)]
      line = `{"id":${id},"a":${a},"n":{"x":${x}},"l":[${l0},${l1}]}`
      hash = { id: key, a, n: `{"x":${x}}`, l: `[${l0},${l1}]` }
    }
    out.push({ line, key, hash })
  }
  return out
}

const RECS = records(6000, 22) // ~450 KB: more than one 256 KiB read
const NDJSON = RECS.map(x => x.line).join('\n') + '\n'

let run = 0
/** Load with `options` under a fresh prefix; every record's hash and {$} as the generator wrote them. */
async function expectExact (options, label) {
  const p = `num${++run}:`
  const summary = await load({ url: srv.url, command: [`HSET ${p}h:{id} *`, `SET ${p}j:{id} {$}`], ...options })
  if (!options.shard) expect(summary.records, label).toBe(RECS.length)
  return { p, summary }
}

async function checkAll (p, label) {
  const pipe = redis.pipeline()
  for (const x of RECS) {
    pipe.hgetall(`${p}h:${x.key}`)
    pipe.get(`${p}j:${x.key}`)
  }
  const replies = await pipe.exec()
  const got = []
  const want = []
  RECS.forEach((x, i) => {
    got.push([replies[2 * i][1], replies[2 * i + 1][1]])
    want.push([x.hash, x.line])
  })
  // One comparison, so a failure shows the first record that differs.
  for (let i = 0; i < want.length; i++) expect(got[i], `${label}: record ${i} ${RECS[i].line}`).toEqual(want[i])
}

describe('JSON numbers reach Redis with the input\'s digits (issue 22 item 1)', () => {
  it('NDJSON: the fast path and the JSON.parse path', async () => {
    const input = path.join(tmp, 'n.ndjson')
    fs.writeFileSync(input, NDJSON)
    const { p } = await expectExact({ input, workers: 0 }, 'ndjson')
    await checkAll(p, 'ndjson')
  })

  it('NDJSON with parse workers (--workers 2, many chunks)', async () => {
    const input = path.join(tmp, 'w.ndjson')
    fs.writeFileSync(input, NDJSON)
    const { p, summary } = await expectExact({ input, workers: 2, chunkSize: 16384 }, 'workers')
    expect(summary.workers).toBe(2)
    await checkAll(p, 'workers 2')
  })

  it('NDJSON read as three shards', async () => {
    const input = path.join(tmp, 's.ndjson')
    fs.writeFileSync(input, NDJSON)
    const p = `num${++run}:`
    let total = 0
    for (const shard of ['0/3', '1/3', '2/3']) {
      const s = await load({ url: srv.url, input, shard, workers: 0, command: [`HSET ${p}h:{id} *`, `SET ${p}j:{id} {$}`] })
      total += s.records
    }
    expect(total).toBe(RECS.length)
    await checkAll(p, 'shards')
  })

  it('a JSON document, on one line and one element a line', async () => {
    for (const [name, text] of [['one-line.json', `[${RECS.map(x => x.line).join(',')}]`], ['lines.json', `[\n${RECS.map(x => x.line).join(',\n')}\n]\n`]]) {
      const input = path.join(tmp, name)
      fs.writeFileSync(input, text)
      const { p } = await expectExact({ input }, name)
      await checkAll(p, name)
    }
  })

  it('map() sees a JsonNumber where a JS number would change the digits: its text written, arithmetic on its value', async () => {
    const input = path.join(tmp, 'm.ndjson')
    fs.writeFileSync(input, '{"id":12345678901234567890,"a":1.10,"b":7}\n')
    const seen = []
    const p = `num${++run}:`
    await load({
      url: srv.url,
      input,
      map: rec => {
        seen.push(rec)
        return [['SET', `${p}${rec.id}`, rec.a], ['SET', `${p}sum`, rec.a + 1], ['SET', `${p}b`, rec.b]]
      }
    })
    expect(seen[0].id).toBeInstanceOf(JsonNumber)
    expect(String(seen[0].id)).toBe('12345678901234567890')
    expect(seen[0].b).toBe(7) // a number a double keeps is a number
    expect(await redis.get(`${p}12345678901234567890`)).toBe('1.10')
    expect(await redis.get(`${p}sum`)).toBe('2.1')
    expect(await redis.get(`${p}b`)).toBe('7')
  })

  // A record holding a number a double would change is parsed a second time, by parseExact:
  // its strings, keys and nested strings must still be read through their escapes. The
  // oracle: the strings the generator wrote, escaped here (\", \\, \n, \u00e9, \/, a
  // surrogate pair as two \u escapes), not read back by any reader.
  it('strings with escapes in a record with such numbers: each string as the generator wrote it, the numbers as written', async () => {
    const r = prng(33)
    const parts = ['"', '\\', '\n', '\t', '/', 'é', '😀', 'a', ' ', '\u0001', 'x"y', '{}[],:']
    /** JSON text of `s`, with some characters escaped otherwise than JSON.stringify does. */
    const escaped = s => JSON.stringify(s).replace(/é/g, () => r.pick(['é', '\\u00e9', '\\u00E9'])).replace(/\//g, '\\/').replace(/😀/g, '\\ud83d\\ude00')
    const rows = []
    const lines = []
    for (let i = 0; i < 400; i++) {
      const s = Array.from({ length: 1 + r.int(8) }, () => r.pick(parts)).join('')
      const inner = Array.from({ length: 1 + r.int(5) }, () => r.pick(parts)).join('')
      const a = inexactToken(r)
      const x = inexactToken(r)
      // "k\u0065y": a key written with an escape is "key".
      lines.push(`{"id":"e${i}","s":${escaped(s)},"a":${a},"n":{"k\\u0065y":${escaped(inner)},"x":${x}},"l":[${escaped(inner)},${x}],"t":${escaped(`[${escaped(s)}, ${a}]`)}}`)
      rows.push({ s, inner, a, x })
    }
    lines.forEach((l, i) => expect(JSON.parse(l).s).toBe(rows[i].s)) // the texts say what was meant
    const input = path.join(tmp, 'escapes.ndjson')
    fs.writeFileSync(input, lines.join('\n') + '\n')
    const p = `num${++run}:`
    const summary = await load({ url: srv.url, input, command: [`HSET ${p}h:{id} s {s} a {a} x {n.x}`, `RPUSH ${p}l:{id} {l[]}`] })
    expect(summary).toMatchObject({ records: rows.length, errors: 0 })
    const pipe = redis.pipeline()
    rows.forEach((_, i) => pipe.hgetall(`${p}h:e${i}`).lrange(`${p}l:e${i}`, 0, -1))
    const replies = (await pipe.exec()).map(([err, v]) => err || v)
    rows.forEach(({ s, inner, a, x }, i) => {
      expect(replies.slice(2 * i, 2 * i + 2), `record ${i}: ${lines[i]}`).toEqual([{ s, a, x }, [inner, x]])
    })
    // A member's key written with an escape ({n.key} finds it); a text holding an array ({t[]}).
    await load({ url: srv.url, input, command: [`SET ${p}k:{id} {n.key}`, `RPUSH ${p}t:{id} {t[]}`] })
    expect(await redis.mget(rows.map((_, i) => `${p}k:e${i}`))).toEqual(rows.map(x => x.inner))
    const spread = redis.pipeline()
    rows.forEach((_, i) => spread.lrange(`${p}t:e${i}`, 0, -1))
    expect((await spread.exec()).map(([, v]) => v)).toEqual(rows.map(x => [x.s, x.a]))
  })

  it('{x:f32} and {x:f64} of big or long numbers: the nearest float to the number; {x[]} each as written', async () => {
    const input = path.join(tmp, 'v.ndjson')
    const nums = ['12345678901234567890', '0.1000000000000000055511151231257827', '1.10', '-0']
    fs.writeFileSync(input, `{"id":"v","e":[${nums.join(',')}],"t":${JSON.stringify(`[${nums.join(', ')}]`)}}\n`)
    const p = `num${++run}:`
    await load({ url: srv.url, input, command: [`SET ${p}f32 {e:f32}`, `SET ${p}f64 {e:f64}`, `RPUSH ${p}list {e[]}`, `RPUSH ${p}text {t[]}`], sameKey: true })
    const f32 = Buffer.alloc(16)
    const f64 = Buffer.alloc(32)
    nums.forEach((t, i) => { f32.writeFloatLE(Number(t), 4 * i); f64.writeDoubleLE(Number(t), 8 * i) })
    expect(await redis.getBuffer(`${p}f32`)).toEqual(f32)
    expect(await redis.getBuffer(`${p}f64`)).toEqual(f64)
    expect(await redis.lrange(`${p}list`, 0, -1)).toEqual(nums) // a spread writes each as written
    expect(await redis.lrange(`${p}text`, 0, -1)).toEqual(nums) // and so from a text holding an array
  })
})

describe('finding the numbers a double would change', () => {
  // The oracle: String(Number(t)) === t, JS's own printing, on 40k random number texts.
  it('a text the quick check passes holds only numbers that print as written', () => {
    const r = prng(7)
    let checked = 0
    const wrong = []
    for (let i = 0; i < 40000; i++) {
      const neg = r.chance(0.3) ? '-' : ''
      const int = r.chance(0.3) ? '0' : nonZero(r) + digits(r, r.int(22))
      const frac = r.chance(0.5) ? '.' + digits(r, 1 + r.int(20)) : ''
      const exp = r.chance(0.1) ? r.pick(['e', 'E']) + r.pick(['', '-', '+']) + (1 + r.int(40)) : ''
      const t = neg + int + frac + exp
      for (const text of [t, `[${t}]`, `{"a": ${t}}`, `[1,\n ${t}]`]) {
        if (!mayHoldInexact(text)) {
          checked++
          if (String(Number(t)) !== t) wrong.push(`passed as exact: ${text}`)
        }
        if (exactJson(parseJson(text)) !== text.replace('\n ', '').replace(': ', ':')) wrong.push(`written otherwise: ${text}`)
      }
    }
    expect(wrong.slice(0, 10)).toEqual([])
    expect(checked).toBeGreaterThan(10000) // the check passes most plain numbers
  })
})
