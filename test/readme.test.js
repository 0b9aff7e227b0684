'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// Every shell example of the README and of the manual (docs/*.md, listed at run time, so a
// new page's examples run without touching this file) runs here, against a server of our
// own: `npx pipeload` runs this checkout's bin, `redis-cli` talks to the test server,
// REDIS_URL points there. A ```sh block is a command block: its lines run; other blocks
// (```console, ```text, ```bash with hosts and files of the reader's) are illustrations.
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { startRedis } = require('./helpers/redis-server')

const ROOT = path.join(__dirname, '..')
const BIN = path.join(ROOT, 'bin', 'pipeload.js')
const run = promisify(execFile)
const DATA = path.join(ROOT, 'examples', 'data')
const DOCS = path.join(ROOT, 'docs')

/**
 * The example files read by the test itself (not by lib/read): a small RFC 4180 CSV
 * reader (quotes, "" inside them, newlines in quoted fields) and JSON.parse. Records as
 * objects of column -> text.
 */
function csvRecords (file, d) {
  const text = fs.readFileSync(path.join(DATA, file), 'utf8')
  const rows = []
  let row = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++ } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === d) { row.push(field); field = '' } else if (c === '\n') { row.push(field); rows.push(row); row = []; field = '' } else field += c
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row) }
  const [head, ...body] = rows
  return body.map(r => Object.fromEntries(head.map((h, i) => [h, r[i]])))
}
const cities = csvRecords('cities.csv', ',')
const users = fs.readFileSync(path.join(DATA, 'users.ndjson'), 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l))
const countries = JSON.parse(fs.readFileSync(path.join(DATA, 'countries.json'), 'utf8')).features
// README: strings as they are, numbers and booleans as JSON prints them, nested values as JSON text.
const asHash = rec => Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))
const cityHashes = records => records.map(c => [`city:${c.id}`, c])
const hsetCalls = async redis => Number((await redis.info('commandstats')).match(/^cmdstat_hset:calls=(\d+),/m)?.[1] ?? 0)

const hashes = pairs => ({
  keys: pairs.map(([k]) => k),
  async check (redis) {
    for (const [k, v] of pairs) expect(await redis.hgetall(k), k).toEqual(v)
  }
})

/**
 * What each documented command must leave on the server, worked out from the example
 * files: [pattern, expectation], the first pattern a command matches gives its expectation.
 * `keys` are deleted before it runs (so the check sees this command's writes, not an
 * earlier one's), then `check` reads them back. Bench commands must leave the keyspace as
 * they found it. Every pattern must match a documented command: an example dropped from
 * the docs is noticed here, not lost.
 */
const EXPECTATIONS = [
  // The front page's slow link: a count that ranks both batch sizes (10 round trips or more
  // each), so the pick is made between them (issue 34, item 8: with --count 500 only 10 was
  // ranked and crowned while 100 ran 5x faster).
  [/^npx pipeload bench --rtt/, () => ({ bench: true, ranksEvery: true })],
  [/^npx pipeload bench/, () => ({ bench: true })],
  [/--checkpoint \S+ --resume$/, () => {
    // The checkpoint of the run before counts every record: resuming sends nothing again.
    return {
      keys: [],
      before: hsetCalls,
      async check (redis, stdout, callsBefore) {
        expect(await hsetCalls(redis), 'HSETs sent by --resume after a finished run').toBe(callsBefore)
        await hashes(cityHashes(cities)).check(redis)
      }
    }
  }],
  [/^npx pipeload export \.tmp-cities\.ndjson --match 'city:\*' --type hash$/, () => ({
    keys: [],
    async check () {
      // The file, read with JSON.parse: one line per city hash, as the CSV has it.
      const lines = fs.readFileSync(path.join(ROOT, '.tmp-cities.ndjson'), 'utf8').trim().split('\n').map(l => JSON.parse(l))
      expect(lines.map(l => l.key).sort()).toEqual(cities.map(c => `city:${c.id}`).sort())
      for (const l of lines) {
        expect(l).toMatchObject({ type: 'hash', ttl: null })
        expect(l.value).toEqual(cities.find(c => `city:${c.id}` === l.key))
      }
    }
  })],
  [/--dry-run text/, () => {
    const keys = cities.map(c => `city:${c.id}`)
    return {
      keys,
      async check (redis, stdout) {
        expect(await redis.exists(...keys), 'a dry run writes nothing').toBe(0)
        expect(stdout.split('\n').filter(l => l.startsWith('HSET city:'))).toHaveLength(cities.length)
      }
    }
  }],
  [/cities\.csv -c 'SET city:\{id\}:name \{name\}' -c 'SADD cities:\{country\} \{id\}' --ttl 3600$/, () => {
    const countries = [...new Set(cities.map(c => c.country))]
    return {
      keys: [...cities.map(c => `city:${c.id}:name`), ...countries.map(c => `cities:${c}`)],
      async check (redis) {
        for (const c of cities) {
          expect(await redis.get(`city:${c.id}:name`)).toBe(c.name)
          const ttl = await redis.ttl(`city:${c.id}:name`)
          expect(ttl > 3500 && ttl <= 3600, `ttl ${ttl}`).toBe(true)
        }
        for (const k of countries) {
          expect((await redis.smembers(`cities:${k}`)).sort()).toEqual(cities.filter(c => c.country === k).map(c => c.id).sort())
          expect(await redis.ttl(`cities:${k}`), 'only the first command\'s key expires').toBe(-1)
        }
      }
    }
  }],
  [/-c 'SET city:\{0\}:pop \{3\}'$/, () => {
    return {
      keys: cities.map(c => `city:${c.id}:pop`),
      async check (redis) {
        for (const c of cities) expect(await redis.get(`city:${c.id}:pop`)).toBe(c.population)
      }
    }
  }],
  [/--columns id,city,cc,pop,lat,lon,note -c 'SET city:\{id\}:cc \{cc\}'$/, () => {
    return {
      keys: cities.map(c => `city:${c.id}:cc`),
      async check (redis) {
        for (const c of cities) expect(await redis.get(`city:${c.id}:cc`)).toBe(c.country)
      }
    }
  }],
  [/cities\.tsv/, () => hashes(cityHashes(csvRecords('cities.tsv', '\t')))],
  [/cities-semicolon\.csv/, () => hashes(cityHashes(csvRecords('cities-semicolon.csv', ';')))],
  [/cities\.csv.* --key 'city:\{id\}'/, () => hashes(cityHashes(cities))],
  [/users\.ndjson -c 'HSET user:\{id\} \*' -c 'SADD users \{id\}' --ttl 3600$/, () => {
    return {
      keys: [...users.map(u => `user:${u.id}`), 'users'],
      async check (redis) {
        for (const u of users) {
          expect(await redis.hgetall(`user:${u.id}`)).toEqual(asHash(u))
          const ttl = await redis.ttl(`user:${u.id}`)
          expect(ttl > 3500 && ttl <= 3600, `ttl ${ttl}`).toBe(true)
        }
        expect((await redis.smembers('users')).sort()).toEqual(users.map(u => u.id).sort())
      }
    }
  }],
  [/users\.ndjson -c 'SADD user:\{id\}:tags \{tags\[\]\}' -c 'SET user:\{id\}:json \{\$\}'$/, () => {
    return {
      keys: users.flatMap(u => [`user:${u.id}:tags`, `user:${u.id}:json`]),
      async check (redis) {
        for (const u of users) {
          expect((await redis.smembers(`user:${u.id}:tags`)).sort()).toEqual([...u.tags].sort())
          expect(await redis.get(`user:${u.id}:json`)).toBe(JSON.stringify(u))
        }
      }
    }
  }],
  [/cities\.csv -c 'HSET place:\{\$n\} name \{name\} from \{\$file\}'$/, () => {
    return {
      keys: cities.map((c, i) => `place:${i + 1}`),
      async check (redis) {
        for (const [i, c] of cities.entries()) expect(await redis.hgetall(`place:${i + 1}`)).toEqual({ name: c.name, from: 'examples/data/cities.csv' })
      }
    }
  }],
  [/countries\.json --json-path '\$\.features\[\*\]' -c 'SET country:\{id\}:capital \{capital\}'$/, () => {
    return {
      keys: countries.map(c => `country:${c.id}:capital`),
      async check (redis) {
        for (const c of countries) expect(await redis.get(`country:${c.id}:capital`)).toBe(c.capital)
      }
    }
  }],
  [/country-codes\.json -c 'HSET cc:\{\$key\} name \{name\} capital \{capital\}'$/, () => {
    const codes = JSON.parse(fs.readFileSync(path.join(DATA, 'country-codes.json'), 'utf8'))
    return hashes(Object.entries(codes).map(([code, c]) => [`cc:${code}`, { name: c.name, capital: c.capital }]))
  }],
  [/--map examples\/map\/big-cities\.cjs$/, () => {
    const big = cities.filter(c => Number(c.population) >= 10_000_000)
    const countries = [...new Set(cities.map(c => c.country))]
    return {
      keys: [...cities.map(c => `bigcity:${c.id}`), ...countries.map(c => `bigcities:${c}`)],
      async check (redis) {
        expect(big.length).toBeGreaterThan(0)
        expect(big.length).toBeLessThan(cities.length)
        for (const c of cities) {
          const h = await redis.hgetall(`bigcity:${c.id}`)
          if (big.includes(c)) expect(h).toMatchObject({ name: c.name, country: c.country, population: String(Number(c.population)) })
          else expect(h, 'map returned null: skipped').toEqual({})
        }
        for (const k of countries) {
          expect((await redis.smembers(`bigcities:${k}`)).sort()).toEqual(big.filter(c => c.country === k).map(c => c.id).sort())
        }
      }
    }
  }],
  [/-c 'HSET town:\{id\} name \{name\}' -c 'SADD towns:\{country\} \{id\}' --replace --ttl 1d --ttl-keys all$/, () => {
    const countries = [...new Set(cities.map(c => c.country))]
    return {
      keys: [...cities.map(c => `town:${c.id}`), ...countries.map(c => `towns:${c}`)],
      before: redis => redis.hset('town:1', 'stale', 'from an earlier import'),
      async check (redis) {
        expect(await redis.hgetall('town:1'), '--replace left no stale field').toEqual({ name: cities[0].name })
        for (const k of ['town:1', 'town:50', ...countries.map(c => `towns:${c}`)]) {
          const ttl = await redis.ttl(k)
          expect(ttl > 86000 && ttl <= 86400, `${k} ttl ${ttl}`).toBe(true)
        }
      }
    }
  }],
  [/countries\.json --json-path features --key 'country:\{id\}'$/, () => hashes(countries.map(c => [`country:${c.id}`, asHash(c)]))],
  // README: cities.parquet's name and population columns, the CSV's text.
  [/cities\.parquet -c 'HSET city:\{id\} name \{name\} population \{population\}'$/, () => hashes(cities.map(c => [`city:${c.id}`, { name: c.name, population: c.population }]))],
  // docs/parquet.md, the feature store: cities.parquet is cities.csv written by DuckDB
  // (population BIGINT, location [lat, lon] as FLOAT[]): the expected values come from the
  // CSV text; --ttl expires the hashes, not the index sets.
  [/cities\.parquet -c 'HSET features:city:\{id\} name \{name\} country \{country\} population \{population\} location \{location:f32\}' -c 'SADD features:country:\{country\} \{id\}' --ttl 1d$/, () => ({
    keys: [...cities.map(c => `features:city:${c.id}`), ...new Set(cities.map(c => `features:country:${c.country}`))],
    async check (redis) {
      for (const c of cities) {
        const h = await redis.hgetallBuffer(`features:city:${c.id}`)
        expect(Object.keys(h).sort()).toEqual(['country', 'location', 'name', 'population'])
        expect({ name: h.name.toString(), country: h.country.toString(), population: h.population.toString() }).toEqual({ name: c.name, country: c.country, population: c.population })
        expect(h.location, `city ${c.id}`).toEqual(Buffer.from(new Float32Array([Number(c.lat), Number(c.lon)]).buffer))
        const ttl = await redis.ttl(`features:city:${c.id}`)
        expect(ttl > 86000 && ttl <= 86400, `ttl ${ttl}`).toBe(true)
      }
      for (const k of new Set(cities.map(c => c.country))) {
        expect((await redis.smembers(`features:country:${k}`)).sort()).toEqual(cities.filter(c => c.country === k).map(c => c.id).sort())
        expect(await redis.ttl(`features:country:${k}`), 'only the first command\'s key expires').toBe(-1)
      }
    }
  })],
  // examples/data/dump.ndjson, read here as its lines say (docs/export.md).
  [/dump\.ndjson --restore$/, () => ({
    keys: ['dump:user:1', 'dump:session:9', 'dump:queue', 'dump:tags', 'dump:rank', 'dump:events', Buffer.from('dump:\xff', 'latin1')],
    async check (redis) {
      expect(await redis.hgetall('dump:user:1')).toEqual({ name: 'Ada', age: '36' })
      expect(await redis.get('dump:session:9')).toBe('token')
      const pttl = await redis.pttl('dump:session:9')
      expect(pttl > 0 && pttl <= 3600000, `pttl ${pttl}`).toBe(true)
      expect(await redis.lrange('dump:queue', 0, -1)).toEqual(['a', 'b', 'a', 'c'])
      expect((await redis.smembers('dump:tags')).sort()).toEqual(['x', 'y'])
      expect(await redis.zrange('dump:rank', 0, -1, 'WITHSCORES')).toEqual(['ada', '1.5', 'bob', 'inf'])
      expect(await redis.xrange('dump:events', '-', '+')).toEqual([['1700000000000-0', ['kind', 'login']]])
      expect(await redis.getBuffer(Buffer.from('dump:\xff', 'latin1'))).toEqual(Buffer.from([0x00, 0xff]))
    }
  })]
]

/** The expectation of a documented command, or null when none knows it. */
function expectationsFor (command) {
  const found = EXPECTATIONS.find(([pattern]) => pattern.test(command))
  return found ? found[1]() : null
}

/** README.md, then every docs/*.md in name order: the files whose examples run. */
function documentFiles () {
  const docs = fs.readdirSync(DOCS).filter(f => f.endsWith('.md')).sort().map(f => `docs/${f}`)
  return ['README.md', ...docs]
}

/**
 * The commands of every ```sh block of the documents, { file, command }, without comments
 * and the commands tests cannot nest.
 */
function documentedCommands () {
  return documentFiles().flatMap(file => {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
    const blocks = [...text.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map(m => m[1])
    return blocks.flatMap(b => b.split('\n'))
      .map(l => l.trim())
      .filter(l => l && !l.startsWith('#') && l !== 'npm test')
      .map(l => ({ file, command: l.replace(/^npm install && /, '') }))
  })
}

let server

beforeAll(async () => { server = await startRedis() })
afterAll(async () => { await server?.stop() })

describe('README and docs/ examples', () => {
  const documented = documentedCommands()
  const commands = documented.map(d => d.command)

  it('has examples to run, the Quick start first, in the README and in docs/', () => {
    expect(commands.length).toBeGreaterThan(8)
    expect(documented[0]).toEqual({ file: 'README.md', command: "npx pipeload import examples/data/cities.csv --key 'city:{id}'" })
    expect(documented.some(d => d.file.startsWith('docs/'))).toBe(true)
  })

  it('knows what every example must write', () => {
    for (const c of commands) expect(expectationsFor(c), c).not.toBe(null)
    expect(cities).toHaveLength(50)
    expect(cities.find(c => c.id === '4').note).toBe('Name has a "tilde"')
  })

  it('has no expectation left without its example (an example dropped from the docs)', () => {
    for (const [pattern] of EXPECTATIONS) expect(commands.some(c => pattern.test(c)), String(pattern)).toBe(true)
  })

  it.each(documented)('$file: $command', async ({ command }) => {
    const redis = server.client()
    const want = expectationsFor(command)
    if (want.keys?.length) await redis.del(...want.keys)
    await redis.set('readme:bystander', 'keep')
    const before = await redis.dbsize()
    const measured = want.before && await want.before(redis)
    const shell = command
      .replaceAll('npx pipeload', `"${process.execPath}" "${BIN}"`)
      .replaceAll('redis-cli', `redis-cli -p ${server.port}`)
    const { stdout, stderr } = await run('bash', ['-o', 'pipefail', '-c', shell], {
      cwd: ROOT, env: { ...process.env, REDIS_URL: server.url }, maxBuffer: 64 << 20
    })
    expect(stderr).not.toMatch(/\n\s+at /)
    if (/--dry-run resp \| redis-cli/.test(command)) expect(stdout).toMatch(/errors: 0, replies: 50/)
    if (/--json$/.test(command)) expect(JSON.parse(stdout)).toMatchObject({ errors: 0, records: cities.length, loaded: cities.length })
    if (want.ranksEvery) {
      expect(stdout).not.toMatch(/[†‡§]|no batch size to recommend/)
      expect(stdout).toMatch(/^fastest(, and no smaller batch within 10% of it)?: batch size (10|100) at /m)
    }
    if (want.bench) expect(await redis.dbsize(), 'bench leaves the keyspace as it found it').toBe(before)
    else await want.check(redis, stdout, measured)
    expect(await redis.get('readme:bystander')).toBe('keep')
  })

  it('left the data the examples describe', async () => {
    const redis = server.client()
    expect(await redis.hgetall('city:11')).toEqual({
      id: '11', name: 'New York', country: 'US', population: '18819000', lat: '40.7128', lon: '-74.0060',
      note: 'Five boroughs:\nManhattan, Brooklyn, Queens, The Bronx, Staten Island'
    })
    expect(await redis.get('city:4:name')).toBe('São Paulo')
    expect(await redis.ttl('city:4:name')).toBeGreaterThan(3000)
    expect(await redis.get('city:1:pop')).toBe('37400068')
    expect(await redis.scard('cities:CN')).toBe(12)
  })
})
