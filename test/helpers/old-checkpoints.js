'use strict'

// Checkpoints written by an earlier pipeload (test/fixtures/checkpoints-v1, made by its
// make.js) and what they were written for: the same datasets are written again here, the
// fixtures' paths and mtimes are set to where the files lie now, and a resume must go on
// from where the old code stopped (the checkpoint file format is part of the interface).

const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'checkpoints-v1')
const PREFIX = 'old-cp:'

/** Rows whose TTL is not a number: SET … EX x fails with an error reply. */
const bad = i => i % 1000 === 0 && i > 0

function csv (from, to) {
  const rows = ['id,v,ttl']
  for (let i = from; i < to; i++) rows.push(`${i},v${i},${bad(i) ? 'x' : '1000'}`)
  return rows.join('\n') + '\n'
}

function ndjson (from, to) {
  const rows = []
  for (let i = from; i < to; i++) rows.push(JSON.stringify({ id: i, v: `v${i}`, ttl: bad(i) ? 'x' : '1000' }))
  return rows.join('\n') + '\n'
}

// Each case: its files (name → text), the load() options (paths relative to the case's
// folder), and the ids of its records in load order.
const CASES = {
  csv: { files: { 'a.csv': csv(0, 6000) }, input: 'a.csv', ids: [0, 6000] },
  ndjson: { files: { 'a.ndjson': ndjson(0, 6000) }, input: 'a.ndjson', ids: [0, 6000] },
  list: { files: { 'a.csv': csv(0, 3000), 'b.csv': csv(3000, 7000) }, input: ['a.csv', 'b.csv'], ids: [0, 7000] }
}

/**
 * The load() options of a case, its paths relative to the folder it runs in (so that the
 * rejects file, which names the inputs, is the same bytes wherever that is); `maxErrors`
 * stops the first run part-way.
 */
function optionsOf (name, extra = {}) {
  return {
    input: CASES[name].input,
    command: `SET ${PREFIX}{id} {v} EX {ttl}`,
    checkpoint: `${name}.checkpoint`,
    rejects: `${name}.rejects`,
    onError: 'skip',
    batchSize: 200,
    ...extra
  }
}

/**
 * load() of the pipeload in `lib` (a package folder) run in a process of its own whose working
 * directory is `dir`: resolves with { summary } or { error: { code, message } }.
 */
function loadIn (lib, dir, options) {
  // notices: what onResume was called with.
  const script = `const notices = []
  require(${JSON.stringify(path.resolve(lib))}).load({ ...JSON.parse(process.argv[1]), onResume: e => notices.push(e) }).then(
    summary => console.log(JSON.stringify({ summary, notices })),
    e => console.log(JSON.stringify({ error: { code: e.code, message: e.message, summary: e.summary }, notices })))`
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script, JSON.stringify(options)], { cwd: dir }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
}

function writeFiles (name, dir) {
  for (const [f, text] of Object.entries(CASES[name].files)) fs.writeFileSync(path.join(dir, f), text)
}

/** Replace `from` by `to` in every string of a JSON value, and set each file's mtimeMs with `mtime`. */
function rewrite (value, from, to, mtime) {
  if (typeof value === 'string') return value.split(from).join(to)
  if (Array.isArray(value)) return value.map(v => rewrite(v, from, to, mtime))
  if (value === null || typeof value !== 'object') return value
  const out = {}
  for (const [k, v] of Object.entries(value)) out[k] = rewrite(v, from, to, mtime)
  if (typeof out.path === 'string' && 'mtimeMs' in out) out.mtimeMs = mtime(out.path)
  return out
}

module.exports = { FIXTURES, PREFIX, CASES, bad, optionsOf, loadIn, writeFiles, rewrite }
