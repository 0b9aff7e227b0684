'use strict'

// Library use: load() an async iterable of records with a `map` function that returns the
// commands for each record, reusing an ioredis client you already have.
// Run: REDIS_URL=redis://127.0.0.1:6379 node examples/library.js

const fs = require('node:fs')
const path = require('node:path')
const Redis = require('ioredis')
const { load } = require('pipeload')

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const PREFIX = 'example:country:'
const RANKING = 'example:countries:by-population'

// Records can come from anywhere: an API, a database cursor, a generator. Here, a file.
async function * countries () {
  const doc = JSON.parse(fs.readFileSync(path.join(__dirname, 'data', 'countries.json'), 'utf8'))
  for (const feature of doc.features) yield feature
}

function toCommands (c) {
  return [
    ['HSET', PREFIX + c.id, 'name', c.name, 'capital', c.capital, 'region', c.region, 'population', String(c.population)],
    ['ZADD', RANKING, String(c.population), c.id]
  ]
}

async function main () {
  const redis = await connect(REDIS_URL)
  const expected = []
  for await (const c of countries()) expected.push(c)
  const keys = [...expected.map(c => PREFIX + c.id), RANKING]
  try {
    await redis.del(keys)
    // pipeload opens its own data connection with this client's settings, and leaves the
    // client open: it is yours.
    const summary = await load({ redis, input: countries(), map: toCommands })

    const problems = []
    if (summary.records !== expected.length || summary.errors !== 0 || summary.commands !== 2 * expected.length) {
      problems.push(`summary: ${summary.records} records, ${summary.commands} commands, ${summary.errors} errors`)
    }
    for (const c of expected) {
      const got = await redis.hgetall(PREFIX + c.id)
      const want = { name: c.name, capital: c.capital, region: c.region, population: String(c.population) }
      if (!sameHash(got, want)) problems.push(`${PREFIX + c.id}: ${JSON.stringify(got)}`)
    }
    const top3 = await redis.zrevrange(RANKING, 0, 2)
    const wantTop3 = [...expected].sort((a, b) => b.population - a.population).slice(0, 3).map(c => c.id)
    if (top3.join() !== wantTop3.join()) problems.push(`top 3 by population: ${top3} (expected ${wantTop3})`)

    if (problems.length) {
      console.error(`library.js: MISMATCH\n  ${problems.join('\n  ')}`)
      process.exitCode = 1
    } else {
      console.log(`library.js: ok, ${summary.records} countries loaded (${summary.commands} commands), most populous: ${top3.join(', ')}`)
    }
  } finally {
    if (redis.status === 'ready') await redis.del(keys)
    redis.disconnect()
  }
}

/** An ioredis client for checking the result; one clear line if the server is not there. */
async function connect (url) {
  const redis = new Redis(url, { lazyConnect: true, retryStrategy: () => null })
  let cause = null
  redis.on('error', err => { cause = cause || err })
  try {
    await redis.connect()
  } catch (err) {
    throw new Error(`cannot connect to Redis: ${(cause || err).message}`)
  }
  return redis
}

/** Same fields and values, in any order. */
function sameHash (a, b) {
  const sorted = h => JSON.stringify(Object.entries(h).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
  return sorted(a) === sorted(b)
}

main().catch(err => {
  console.error(`library.js: ${err.message}`)
  process.exitCode = 1
})
