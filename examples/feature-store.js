'use strict'

// A feature store's online side from its offline table: materialise a Parquet features table
// into one hash per entity, keyed by the entity's id, with a TTL (features not refreshed within
// a day expire rather than go stale), plus an index set per country. The table here is
// examples/data/cities.parquet (examples/data/cities.csv written by DuckDB, `location` a list of
// two floats); only the columns the templates name are read (`note` is never fetched).
// The result is checked against cities.csv, read here with csv-parse.
// Run: REDIS_URL=redis://127.0.0.1:6379 node examples/feature-store.js

const fs = require('node:fs')
const path = require('node:path')
const Redis = require('ioredis')
const { parse } = require('csv-parse/sync')
const { load } = require('pipeload')

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const DATA = path.join(__dirname, 'data')
const PREFIX = 'example:features:city:'
const INDEX = 'example:features:country:'
const TTL_S = 86400

async function main () {
  const redis = await connect(REDIS_URL)
  const rows = parse(fs.readFileSync(path.join(DATA, 'cities.csv')), { columns: true })
  const keys = [...rows.map(r => PREFIX + r.id), ...new Set(rows.map(r => INDEX + r.country))]
  try {
    await redis.del(keys)
    const summary = await load({
      redis,
      input: path.join(DATA, 'cities.parquet'),
      commands: [
        // {location:f32}: the list of floats as little-endian float32 bytes, a VECTOR field's layout.
        `HSET ${PREFIX}{id} name {name} country {country} population {population} location {location:f32}`,
        `SADD ${INDEX}{country} {id}`
      ],
      ttl: TTL_S // the first command's key: each entity's hash
    })

    const problems = []
    if (summary.records !== rows.length || summary.errors !== 0) problems.push(`summary: ${summary.records} rows, ${summary.errors} errors`)
    for (const r of rows) {
      const key = PREFIX + r.id
      const got = await redis.hgetallBuffer(key)
      const location = Buffer.from(new Float32Array([Number(r.lat), Number(r.lon)]).buffer)
      const same = Object.keys(got).length === 4 && String(got.name) === r.name && String(got.country) === r.country &&
        String(got.population) === r.population && location.equals(got.location)
      if (!same) problems.push(`${key}: ${JSON.stringify(Object.fromEntries(Object.entries(got).map(([k, v]) => [k, k === 'location' ? v.toString('hex') : String(v)])))}`)
      const ttl = await redis.ttl(key)
      if (!(ttl > 0 && ttl <= TTL_S)) problems.push(`${key}: TTL ${ttl}`)
      if (!(await redis.sismember(INDEX + r.country, r.id))) problems.push(`${INDEX + r.country} lacks ${r.id}`)
    }

    if (problems.length) {
      console.error(`feature-store.js: MISMATCH\n  ${problems.slice(0, 5).join('\n  ')}`)
      process.exitCode = 1
    } else {
      console.log(`feature-store.js: ok, ${summary.records} cities' features in hashes expiring in ${TTL_S} s, ${new Set(rows.map(r => r.country)).size} country indexes`)
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

main().catch(err => {
  console.error(`feature-store.js: ${err.message}`)
  process.exitCode = 1
})
