'use strict'

// Deterministic benchmark datasets and their pre-encoded RESP twins for
// `redis-cli --pipe`. Independent of lib/: its own PRNG, CSV writer and RESP encoder.
// Files are cached under bench/.data/ and regenerated only when missing.

const fs = require('node:fs')
const path = require('node:path')

const DATA_DIR = path.join(__dirname, '.data')
const SAMPLE_COUNT = 8 // rows kept per dataset for read-back spot checks

const FIRST = ['Ada', 'Alan', 'Grace', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Frances', 'Edsger',
  'Radia', 'Guido', 'Katherine', 'John', 'Sophie', 'Tim', 'Hedy', 'Donald', 'Anita', 'Niklaus', 'Yukihiro', 'Chloé']
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Torvalds', 'Hamilton', 'Thompson', 'Liskov', 'Ritchie', 'Allen',
  'Dijkstra', 'Perlman', 'van Rossum', 'Johnson', 'McCarthy', 'Wilson', 'Berners-Lee', 'Lamarr', 'Knuth', 'Borg',
  'Wirth', 'Matsumoto', "O'Neil"]
const DOMAINS = ['example.com', 'mail.test', 'corp.example', 'uni.example.org']
const CITIES = ['Berlin', 'Paris', 'Lisbon', 'São Paulo', 'Tokyo', 'Nairobi', 'Toronto', 'Austin', 'Oslo',
  'Washington, D.C.', 'Zürich', 'Melbourne', 'Kraków', 'Seoul', 'Bogotá', 'Cape Town']
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/** mulberry32: tiny seeded PRNG, returns floats in [0, 1). */
function prng (seed) {
  let a = seed >>> 0
  return function next () {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const pick = (rnd, list) => list[Math.floor(rnd() * list.length)]

/** Row i (1-based) of the 5-column dataset; score is a number whose String() is its text. */
function userRow (rnd, i) {
  const first = pick(rnd, FIRST)
  const last = pick(rnd, LAST)
  const local = `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, '')
  return {
    id: i,
    name: `${first} ${last}`,
    email: `${local}${Math.floor(rnd() * 1000)}@${pick(rnd, DOMAINS)}`,
    city: pick(rnd, CITIES),
    score: Math.floor(rnd() * 100000) / 100
  }
}

function kvRow (rnd, i) {
  const len = 8 + Math.floor(rnd() * 25)
  let value = ''
  for (let j = 0; j < len; j++) value += ALNUM[Math.floor(rnd() * ALNUM.length)]
  return { key: `key:${i}`, value }
}

function csvField (v) {
  const s = String(v)
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s
}
const csvLine = values => values.map(csvField).join(',') + '\n'

/** RESP array of bulk strings, lengths in bytes. */
function resp (args) {
  let s = `*${args.length}\r\n`
  for (const a of args) {
    const v = String(a)
    s += `$${Buffer.byteLength(v)}\r\n${v}\r\n`
  }
  return s
}

/** Buffered sync writer to `file.tmp`, renamed into place on close (no half files in the cache). */
function writer (file) {
  const tmp = file + '.tmp'
  const fd = fs.openSync(tmp, 'w')
  let buf = ''
  return {
    write (s) {
      buf += s
      if (buf.length > 1 << 20) { fs.writeSync(fd, buf); buf = '' }
    },
    close () {
      fs.writeSync(fd, buf)
      fs.closeSync(fd)
      fs.renameSync(tmp, file)
    }
  }
}

/** Indices of the rows kept for spot checks: first, last and a few spread in between. */
function sampleIndices (rows) {
  const set = new Set([1, rows])
  for (let k = 1; set.size < Math.min(SAMPLE_COUNT, rows); k++) set.add(1 + Math.floor((rows - 1) * k / SAMPLE_COUNT))
  return set
}

/** Paths of every cached file for `rows` rows. */
function paths (rows) {
  const p = name => path.join(DATA_DIR, `${name}-${rows}`)
  return {
    usersCsv: p('users') + '.csv',
    usersNdjson: p('users') + '.ndjson',
    usersResp: p('users') + '.resp',
    usersSamples: p('users') + '.samples.json',
    kvCsv: p('kv') + '.csv',
    kvResp: p('kv') + '.resp',
    kvSamples: p('kv') + '.samples.json'
  }
}

function generateUsers (rows, f) {
  const rnd = prng(20240601)
  const keep = sampleIndices(rows)
  const samples = []
  const csv = writer(f.usersCsv)
  const ndjson = writer(f.usersNdjson)
  const out = writer(f.usersResp)
  csv.write('id,name,email,city,score\n')
  for (let i = 1; i <= rows; i++) {
    const r = userRow(rnd, i)
    csv.write(csvLine([r.id, r.name, r.email, r.city, r.score]))
    ndjson.write(JSON.stringify(r) + '\n')
    out.write(resp(['HSET', `user:${r.id}`, 'id', r.id, 'name', r.name, 'email', r.email, 'city', r.city, 'score', r.score]))
    if (keep.has(i)) samples.push({ key: `user:${r.id}`, hash: Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)])) })
  }
  csv.close(); ndjson.close(); out.close()
  fs.writeFileSync(f.usersSamples, JSON.stringify(samples))
}

function generateKv (rows, f) {
  const rnd = prng(7)
  const keep = sampleIndices(rows)
  const samples = []
  const csv = writer(f.kvCsv)
  const out = writer(f.kvResp)
  csv.write('key,value\n')
  for (let i = 1; i <= rows; i++) {
    const r = kvRow(rnd, i)
    csv.write(csvLine([r.key, r.value]))
    out.write(resp(['SET', r.key, r.value]))
    if (keep.has(i)) samples.push({ key: r.key, string: r.value })
  }
  csv.close(); out.close()
  fs.writeFileSync(f.kvSamples, JSON.stringify(samples))
}

/** Make sure all datasets for `rows` exist; returns their paths. `log` gets progress lines. */
function ensureDatasets (rows, log = () => {}) {
  fs.mkdirSync(DATA_DIR, { recursive: true })
  const f = paths(rows)
  const missing = files => files.some(file => !fs.existsSync(file))
  if (missing([f.usersCsv, f.usersNdjson, f.usersResp, f.usersSamples])) {
    log(`generating ${rows} user rows (CSV, NDJSON, RESP) …`)
    generateUsers(rows, f)
  }
  if (missing([f.kvCsv, f.kvResp, f.kvSamples])) {
    log(`generating ${rows} key/value rows (CSV, RESP) …`)
    generateKv(rows, f)
  }
  return f
}

module.exports = { ensureDatasets, resp, prng, writer, csvLine, sampleIndices, DATA_DIR }
