// ESM use: `import { load } from 'pipeload'`, loading a JSON file whose records sit at a
// path inside the document (a GeoJSON FeatureCollection: --json-path features in the CLI).
// Run: REDIS_URL=redis://127.0.0.1:6379 node examples/esm.mjs

import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import Redis from 'ioredis'
import { load } from 'pipeload'

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const FILE = fileURLToPath(new URL('./data/countries.json', import.meta.url))

const { features } = JSON.parse(await readFile(FILE, 'utf8'))
const keys = features.map(f => `example:geo:${f.id}`)
let redis
try {
  redis = await connect(REDIS_URL)
  await redis.del(keys)
  // One HSET per feature with every top-level field; `geometry` is stored as JSON text.
  const summary = await load({ url: REDIS_URL, input: FILE, jsonPath: 'features', key: 'example:geo:{id}' })

  const problems = []
  if (summary.records !== features.length || summary.errors !== 0) {
    problems.push(`summary: ${summary.records} records, ${summary.errors} errors`)
  }
  for (const f of features) {
    const got = await redis.hgetall(`example:geo:${f.id}`)
    const want = Object.fromEntries(Object.entries(f).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]))
    if (!sameHash(got, want)) problems.push(`example:geo:${f.id}: ${JSON.stringify(got)}`)
  }
  const [lon, lat] = JSON.parse(await redis.hget('example:geo:IS', 'geometry')).coordinates

  if (problems.length) {
    console.error(`esm.mjs: MISMATCH\n  ${problems.join('\n  ')}`)
    process.exitCode = 1
  } else {
    console.log(`esm.mjs: ok, ${summary.records} features loaded; Reykjavík is at ${lat}, ${lon}`)
  }
} catch (err) {
  console.error(`esm.mjs: ${err.message}`)
  process.exitCode = 1
} finally {
  if (redis?.status === 'ready') await redis.del(keys)
  redis?.disconnect()
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
