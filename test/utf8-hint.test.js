'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Invalid UTF-8 is refused (Redis would store U+FFFD silently); the message says how to load
// such a file: a command line that converts it on the way in. The suggested line is run here as
// printed, and loads what a Latin-1 decoder (Node's, not our reader) reads from the bytes.

const fs = require('node:fs')
const path = require('node:path')
const zlib = require('node:zlib')
const { execFileSync } = require('node:child_process')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { invalidUtf8Hint } = require('../lib/read/utf8')

let server
let redis
let write

useServer('pipeload-utf8-', s => { server = s.srv; redis = s.redis; write = s.write })

const BIN = path.join(__dirname, '..', 'bin', 'pipeload.js')
const has = cmd => { try { execFileSync(cmd, ['--version'], { stdio: 'ignore' }); return true } catch { return false } }
const hasTools = has('iconv') && has('gunzip')

/** A Latin-1 CSV (café, Müller, ½, …) of `rows` rows, as bytes. */
function latin1Csv (rows) {
  const names = ['café', 'Müller', 'Ñandú', '½ price', 'plain']
  let s = 'id,name\n'
  for (let i = 1; i <= rows; i++) s += `${i},${names[i % names.length]} ${i}\n`
  return Buffer.from(s, 'latin1')
}

/** Run a suggested line as printed, "…" standing for the rest of the user's flags. */
function runSuggested (stderr, flags) {
  const line = /e\.g\. (.*) \(-f cp1252/.exec(stderr)[1]
  const cmd = line.replace('| pipeload import', `| '${process.execPath}' '${BIN}' import`).replace(/…$/, flags.map(f => `'${f}'`).join(' '))
  execFileSync('sh', ['-c', cmd])
  return line
}

describe('invalid UTF-8 suggests converting the input', () => {
  it.runIf(hasTools)('the CLI refuses a Latin-1 CSV (plain and gzip) with a command line, and that line loads it as Latin-1 reads', async () => {
    const bytes = latin1Csv(20_000) // ~300 KB: more than one 256 KiB read
    const oracle = new TextDecoder('latin1').decode(bytes).trimEnd().split('\n').slice(1).map(l => l.split(','))
    const plain = write('latin1.csv', bytes)
    const gz = write('latin1.csv.gz', zlib.gzipSync(bytes))
    for (const [file, expected] of [[plain, `iconv -f latin1 -t utf-8 ${plain} | pipeload import - --format csv …`], [gz, `gunzip -c ${gz} | iconv -f latin1 -t utf-8 | pipeload import - --format csv …`]]) {
      const prefix = `u8:${path.basename(file)}:`
      const flags = ['-c', `SET ${prefix}{id} {name}`, '-u', server.url, '-q']
      const r = await runCli(['import', file, ...flags])
      expect(r.code).toBe(3)
      expect(r.stderr).toContain(`${file}:2: invalid UTF-8 at byte 11 (column 4 of the record); the input is not UTF-8: convert it first, e.g. `)
      expect(runSuggested(r.stderr, flags)).toBe(expected)
      const got = await redis.mget(oracle.map(([id]) => prefix + id))
      expect(got).toEqual(oracle.map(([, name]) => name))
      expect(got.filter(v => /[éüñ½]/.test(v)).length).toBeGreaterThan(10_000)
    }
  })

  it('NDJSON and JSON messages carry it too, with their format; a rejects file keeps it in `reason`', async () => {
    const nd = write('l.ndjson', Buffer.concat([Buffer.from('{"id":1,"v":"a"}\n{"id":2,"v":"caf'), Buffer.from([0xe9]), Buffer.from('"}\n')]))
    const rejects = path.join(path.dirname(nd), 'l.rejects')
    const r = await runCli(['import', nd, '-c', 'SET u8j:{id} {v}', '-u', server.url, '-q', '--on-error', 'skip', '--rejects', rejects])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`iconv -f latin1 -t utf-8 ${nd} | pipeload import - --format ndjson …`)
    expect(JSON.parse(fs.readFileSync(rejects, 'utf8')).reason).toContain('| pipeload import - --format ndjson …')
    const js = write('l.json', Buffer.concat([Buffer.from('[{"id":1,"v":"caf'), Buffer.from([0xe9]), Buffer.from('"}]')]))
    const j = await runCli(['import', js, '-c', 'SET u8j:{id} {v}', '-u', server.url, '-q'])
    expect(j.code).toBe(3)
    expect(j.stderr).toContain(`iconv -f latin1 -t utf-8 ${js} | pipeload import - --format json …`)
  })

  it('names the input as it can be fed to iconv: a path (quoted when needed), gzip, a URL, stdin', () => {
    expect(invalidUtf8Hint('data/a.csv', 'csv')).toContain('e.g. iconv -f latin1 -t utf-8 data/a.csv | pipeload import - --format csv …')
    expect(invalidUtf8Hint("my file's.tsv", 'tsv')).toContain("e.g. iconv -f latin1 -t utf-8 'my file'\\''s.tsv' | pipeload import - --format tsv …")
    expect(invalidUtf8Hint('big.csv.gz', 'csv')).toContain('e.g. gunzip -c big.csv.gz | iconv -f latin1 -t utf-8 | pipeload import - --format csv …')
    expect(invalidUtf8Hint('https://example.com/x.ndjson', 'ndjson')).toContain('e.g. curl -sL https://example.com/x.ndjson | iconv -f latin1 -t utf-8 | pipeload import - --format ndjson …')
    expect(invalidUtf8Hint('<stdin>', 'json')).toContain('e.g. … | iconv -f latin1 -t utf-8 | pipeload import - --format json …')
  })
})
