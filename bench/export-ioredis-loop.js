'use strict'

// node bench/export-ioredis-loop.js <redis-url> <out.ndjson> [--match <glob>]
// The baseline of bench/export.js: what a user writes by hand to dump a keyspace of hashes
// with ioredis. SCAN (scanStream, COUNT 1000) gives the keys; each batch of keys is one
// pipeline of PTTL + HGETALL per key, awaited before the next batch; each key one NDJSON line
// ({"key","type","ttl","value"}, the line pipeload export writes for a hash), written with
// backpressure. It knows every key is a hash, so it sends no TYPE: the best case for it.

const fs = require('node:fs')
const { once } = require('node:events')
const Redis = require('ioredis')

async function main () {
  const [url, out, flag, match] = process.argv.slice(2)
  const redis = new Redis(url, { protocol: 2 })
  const file = fs.createWriteStream(out)
  const stream = redis.scanStream({ count: 1000, ...(flag === '--match' ? { match } : {}) })
  let keys = 0
  for await (const batch of stream) {
    if (batch.length === 0) continue
    const pipe = redis.pipeline()
    for (const key of batch) pipe.pttl(key).hgetall(key)
    const replies = await pipe.exec()
    let text = ''
    for (let i = 0; i < batch.length; i++) {
      const ttl = replies[2 * i][1]
      const value = replies[2 * i + 1][1]
      text += JSON.stringify({ key: batch[i], type: 'hash', ttl: ttl >= 0 ? ttl : null, value }) + '\n'
    }
    keys += batch.length
    if (!file.write(text)) await once(file, 'drain')
  }
  file.end()
  await once(file, 'finish')
  redis.disconnect()
  process.stdout.write(JSON.stringify({ keys }) + '\n')
}

main().catch(err => { console.error(err); process.exitCode = 1 })
