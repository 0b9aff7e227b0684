'use strict'

// The flights dataset of `npm run bench:parquet` (bench/parquet.js): N rows of
// `id BIGINT, carrier VARCHAR, origin VARCHAR, dest VARCHAR, delay DOUBLE`, the shape of a
// flights table in a data lake, as Parquet (zstd, about 11 row groups), and the same rows as
// CSV and NDJSON, with the RESP of `HSET flight:<id> id … carrier … origin … dest … delay …`
// for `redis-cli --pipe` and a few rows kept for read-back checks. Independent of lib/: the
// rows come from bench/datasets.js's seeded PRNG, CSV, NDJSON and RESP are written here, and
// DuckDB (an independent Parquet writer) turns the CSV into Parquet with explicit column types.
// Cached under bench/.data/, made again only when missing.

const fs = require('node:fs')
const path = require('node:path')
const { prng, resp, writer, csvLine, sampleIndices, DATA_DIR } = require('./datasets')

const CARRIERS = ['AA', 'DL', 'UA', 'WN', 'B6', 'AS', 'NK', 'F9', 'HA', 'G4', 'SY', 'MQ']
const AIRPORTS = ['ATL', 'DFW', 'DEN', 'ORD', 'LAX', 'JFK', 'LAS', 'MCO', 'MIA', 'CLT', 'SEA', 'PHX', 'EWR', 'SFO',
  'IAH', 'BOS', 'FLL', 'MSP', 'LGA', 'DTW', 'PHL', 'SLC', 'DCA', 'SAN', 'BWI', 'TPA', 'AUS', 'BNA', 'MDW', 'HNL']
// Row groups the Parquet file has, about: DuckDB rounds a row group's size up to a multiple of 2,048 rows.
const ROW_GROUPS = 11
const COLUMNS = ['id', 'carrier', 'origin', 'dest', 'delay']

const pick = (rnd, list) => list[Math.floor(rnd() * list.length)]

/**
 * Row i (1-based). `delay` in minutes with one decimal, mostly small, a long tail of late
 * flights and some early ones; its String() is the shortest text that reads back as the
 * same double, which is how the Parquet reader writes a DOUBLE, so the three files give
 * the same commands byte for byte.
 */
function flightRow (rnd, i) {
  const origin = pick(rnd, AIRPORTS)
  let dest = pick(rnd, AIRPORTS)
  if (dest === origin) dest = AIRPORTS[(AIRPORTS.indexOf(origin) + 1) % AIRPORTS.length]
  const late = rnd()
  const delay = Math.round((late * late * late * 330 - 15) * 10) / 10 + 0 // + 0: never -0
  return { id: i, carrier: pick(rnd, CARRIERS), origin, dest, delay }
}

function paths (rows) {
  const p = path.join(DATA_DIR, `flights-${rows}`)
  return { csv: p + '.csv', ndjson: p + '.ndjson', parquet: p + '.parquet', resp: p + '.resp', samples: p + '.samples.json' }
}

function generateText (rows, f) {
  const rnd = prng(20260315)
  const keep = sampleIndices(rows)
  const samples = []
  const csv = writer(f.csv)
  const ndjson = writer(f.ndjson)
  const out = writer(f.resp)
  csv.write(COLUMNS.join(',') + '\n')
  for (let i = 1; i <= rows; i++) {
    const r = flightRow(rnd, i)
    csv.write(csvLine(COLUMNS.map(c => r[c])))
    ndjson.write(JSON.stringify(r) + '\n')
    out.write(resp(['HSET', `flight:${r.id}`, ...COLUMNS.flatMap(c => [c, r[c]])]))
    if (keep.has(i)) samples.push({ key: `flight:${r.id}`, hash: Object.fromEntries(COLUMNS.map(c => [c, String(r[c])])) })
  }
  csv.close(); ndjson.close(); out.close()
  fs.writeFileSync(f.samples, JSON.stringify(samples))
}

/** The CSV as Parquet, written by DuckDB: zstd, ~ROW_GROUPS row groups, rows in file order. */
async function writeParquet (rows, f) {
  const { DuckDBInstance } = require('@duckdb/node-api')
  const db = await DuckDBInstance.create(':memory:')
  const conn = await db.connect()
  const tmp = f.parquet + '.tmp'
  const sql = s => `'${s.replace(/'/g, "''")}'`
  try {
    await conn.run('SET preserve_insertion_order = true')
    await conn.run(`COPY (SELECT * FROM read_csv(${sql(f.csv)}, header = true, columns = {'id': 'BIGINT', 'carrier': 'VARCHAR', 'origin': 'VARCHAR', 'dest': 'VARCHAR', 'delay': 'DOUBLE'}))
      TO ${sql(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${Math.ceil(rows / ROW_GROUPS)})`)
    const groups = await conn.runAndReadAll(`SELECT count(DISTINCT row_group_id) FROM parquet_metadata(${sql(tmp)})`)
    fs.renameSync(tmp, f.parquet)
    return Number(groups.getRows()[0][0])
  } finally {
    conn.closeSync()
  }
}

/** Make sure the flights files for `rows` exist; returns their paths. `log` gets progress lines. */
async function ensureFlights (rows, log = () => {}) {
  fs.mkdirSync(DATA_DIR, { recursive: true })
  const f = paths(rows)
  if ([f.csv, f.ndjson, f.resp, f.samples].some(file => !fs.existsSync(file))) {
    log(`generating ${rows} flight rows (CSV, NDJSON, RESP) …`)
    generateText(rows, f)
  }
  if (!fs.existsSync(f.parquet)) {
    log(`writing ${path.basename(f.parquet)} with DuckDB …`)
    const groups = await writeParquet(rows, f)
    log(`  ${groups} row groups`)
  }
  return f
}

module.exports = { ensureFlights, flightRow, COLUMNS }
