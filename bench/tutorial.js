'use strict'

// The loader most blog posts show: csv-parse with `columns: true`, an ioredis pipeline
// of 1000 HSETs, awaiting each batch before starting the next.
// Usage: node bench/tutorial.js <file.csv> <redis-url>

const fs = require('node:fs')
const { parse } = require('csv-parse')
const Redis = require('ioredis')

const BATCH = 1000

async function main () {
  const [file, url] = process.argv.slice(2)
  const redis = new Redis(url)
  let pipeline = redis.pipeline()
  let queued = 0
  let rows = 0
  const parser = fs.createReadStream(file).pipe(parse({ columns: true }))
  for await (const r of parser) {
    pipeline.hset(`user:${r.id}`, r)
    rows++
    if (++queued === BATCH) {
      await pipeline.exec()
      pipeline = redis.pipeline()
      queued = 0
    }
  }
  if (queued > 0) await pipeline.exec()
  await redis.quit()
  console.log(JSON.stringify({ rows }))
}

main().catch(err => { console.error(err); process.exit(1) })
