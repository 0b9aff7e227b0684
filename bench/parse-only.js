'use strict'

// CPU yardstick: stream a CSV through csv-parse (records as arrays) and count rows.
// Usage: node bench/parse-only.js <file.csv>

const fs = require('node:fs')
const { parse } = require('csv-parse')

let rows = 0
fs.createReadStream(process.argv[2])
  .pipe(parse({ from_line: 2 }))
  .on('data', () => { rows++ })
  .on('end', () => console.log(JSON.stringify({ rows })))
  .on('error', err => { console.error(err); process.exit(1) })
