#!/usr/bin/env node
'use strict'

// node bench/export-writers.js [--format csv|parquet] [--keys N] [--out FILE] [--row-group-size N]
// The CSV and Parquet writers of `pipeload export` alone (no server): N synthetic hashes of
// 5 fields (user:<i>, name/email/age/city/score) written to FILE (default /dev/null) through
// lib/export/<format>.js, awaiting each write as the engine does. Prints keys/s and the peak
// RSS as the process saw it; for the bound (≤ 150 MB for a 1M-key export) run it
// under GNU time: /usr/bin/time -v node bench/export-writers.js --format parquet --keys 1000000

const fs = require('node:fs')
const { parseArgs } = require('node:util')

const { values: a } = parseArgs({
  options: {
    format: { type: 'string', default: 'parquet' },
    keys: { type: 'string', default: '1000000' },
    out: { type: 'string', default: '/dev/null' },
    'row-group-size': { type: 'string' }
  }
})

function record (i) {
  const B = s => Buffer.from(s)
  return {
    key: B(`user:${i}`),
    type: 'hash',
    ttl: i % 3 === 0 ? 86400000 - i : null,
    part: 1,
    value: [B('name'), B(`name ${i}`), B('email'), B(`user${i}@example.com`), B('age'), B(String(18 + i % 70)),
      B('city'), B(['Paris', 'Rome', 'Berlin', 'Lisbon'][i % 4]), B('score'), B(String((i * 7919) % 100000 / 100))]
  }
}

async function main () {
  const keys = Number(a.keys)
  const { createWriter } = require(`../lib/export/${a.format}`)
  const out = fs.createWriteStream(a.out)
  const w = createWriter(out, a['row-group-size'] ? { rowGroupSize: Number(a['row-group-size']) } : {})
  const t0 = process.hrtime.bigint()
  let peak = 0
  for (let i = 1; i <= keys; i++) {
    const p = w.write(record(i))
    if (p) await p
    if (i % 50000 === 0) peak = Math.max(peak, process.memoryUsage.rss())
  }
  await w.end()
  await new Promise((resolve, reject) => out.end(err => err ? reject(err) : resolve()))
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  peak = Math.max(peak, process.memoryUsage.rss())
  console.log(`${a.format}: ${keys} keys in ${s.toFixed(2)} s (${Math.round(keys / s)} keys/s), RSS seen ≤ ${(peak / 1048576).toFixed(0)} MB, ${a.out === '/dev/null' ? '' : fs.statSync(a.out).size + ' bytes'}`)
}

main().catch(err => { console.error(err); process.exitCode = 1 })
