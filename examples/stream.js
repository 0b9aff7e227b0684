'use strict'

// Library use with a Node Readable: an NDJSON stream (a file here; an HTTP request body
// works the same), several command templates per record and an expiry.
// Run: REDIS_URL=redis://127.0.0.1:6379 node examples/stream.js

const fs = require('node:fs')
const path = require('node:path')
const Redis = require('ioredis')
const { load } = require('pipeload')

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const FILE = path.join(__dirname, 'data', 'users.ndjson')
const TTL = 3600

async function main () {
  // What we expect, read without pipeload.
  const users = fs.readFileSync(FILE, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line))
  const keys = [...users.map(u => `example:user:${u.id}`), 'example:users', 'example:users:by-country']

  const redis = await connect(REDIS_URL)
  try {
    await redis.del(keys)
    const summary = await load({
      url: REDIS_URL,
      input: fs.createReadStream(FILE),
      format: 'ndjson',
      name: 'users.ndjson', // used in error messages: users.ndjson:12: …
      commands: [
        // {a.b} reaches into nested objects; arrays and objects are written as JSON text.
        'HSET example:user:{id} name {name} email {email} city {address.city} tags {tags}',
        'SADD example:users {id}',
        'HINCRBY example:users:by-country {address.country} 1'
      ],
      ttl: TTL // EXPIRE on the key of the first command: each user hash
    })

    const problems = []
    if (summary.records !== users.length || summary.errors !== 0 || summary.commands !== 4 * users.length) {
      problems.push(`summary: ${summary.records} records, ${summary.commands} commands, ${summary.errors} errors`)
    }
    const byCountry = {}
    for (const u of users) {
      const key = `example:user:${u.id}`
      const got = await redis.hgetall(key)
      const want = { name: u.name, email: u.email, city: u.address.city, tags: JSON.stringify(u.tags) }
      if (!sameHash(got, want)) problems.push(`${key}: ${JSON.stringify(got)}`)
      const ttl = await redis.ttl(key)
      if (!(ttl > 0 && ttl <= TTL)) problems.push(`${key}: TTL ${ttl}`)
      byCountry[u.address.country] = String(Number(byCountry[u.address.country] || 0) + 1)
    }
    const members = (await redis.smembers('example:users')).sort()
    if (members.join() !== users.map(u => u.id).sort().join()) problems.push(`example:users: ${members}`)
    const counts = await redis.hgetall('example:users:by-country')
    if (!sameHash(counts, byCountry)) {
      problems.push(`example:users:by-country: ${JSON.stringify(counts)}`)
    }

    if (problems.length) {
      console.error(`stream.js: MISMATCH\n  ${problems.join('\n  ')}`)
      process.exitCode = 1
    } else {
      console.log(`stream.js: ok, ${summary.records} users streamed (${summary.commands} commands), hashes expire in ${TTL} s`)
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
  console.error(`stream.js: ${err.message}`)
  process.exitCode = 1
})
