'use strict'
/* global describe, it, expect */

// Patterns as inputs (issue 22 item 5): `**` does not enter symlinked directories (a link to a
// sibling listed its files twice, which refused the run; a link to a parent looped), symlinked
// files are kept; and the matches of a pattern spanning several directories are loaded in
// the order the README promises, by their bytes. The expected order is the created paths
// sorted by Array#sort (UTF-16 code units: byte order for these ASCII names), not by the code.
const fs = require('node:fs')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('..')

let server
let redis
let dir
useServer('pipeload-globs-', s => { server = s.srv; redis = s.redis; dir = s.tmp })

/** Write `files` (relative path -> CSV rows) under a fresh folder; returns it. */
function tree (name, files) {
  const root = path.join(dir, name)
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  return root
}

describe('patterns and symlinks', () => {
  it('** does not follow a symlinked directory: every file once; a symlinked file is kept', async () => {
    const root = tree('links', { 'data/a/x.csv': 'id\n1\n', 'data/b/y.csv': 'id\n2\n', 'outside.csv': 'id\n3\n' })
    fs.symlinkSync('a', path.join(root, 'data', 'link')) // a sibling: its files would come twice
    fs.symlinkSync('..', path.join(root, 'data', 'b', 'up')) // a parent: a loop
    fs.symlinkSync('../outside.csv', path.join(root, 'data', 'f.csv'))
    const pattern = path.join(root, 'data', '**', '*.csv')
    const res = await runCli(['import', pattern, '-u', server.url, '-c', 'INCR g1:{id}', '--json'])
    expect(res.code, res.stderr).toBe(0)
    const at = rel => path.join(root, 'data', rel)
    expect(JSON.parse(res.stdout).files.map(f => f.input)).toEqual([at('a/x.csv'), at('b/y.csv'), at('f.csv')])
    expect(await redis.mget('g1:1', 'g1:2', 'g1:3')).toEqual(['1', '1', '1'])
  })

  it('a symlinked directory named in the pattern\'s fixed part is read', async () => {
    const root = tree('fixed', { 'real/x.csv': 'id\n1\n' })
    fs.symlinkSync('real', path.join(root, 'link'))
    const summary = await load({ input: path.join(root, 'link', '*.csv'), url: server.url, command: 'SET g2:{id} 1' })
    expect(summary.loaded).toBe(1)
  })
})

describe('the order of a pattern\'s matches across directories', () => {
  // Names whose byte order differs from a locale's (upper case first, "_" between, "-" and
  // "." before letters, "10" before "9") and from a walk's (a directory's files before
  // its subdirectories', or the other way round).
  const created = ['B/z.csv', '_/a.csv', 'a/10.csv', 'a/9.csv', 'a/b/a.csv', 'a-b/a.csv', 'a.b/a.csv', 'a/B.csv', 'ab/a.csv', 'a/b/c/a.csv', 'Z.csv', 'b.csv']

  it('is the paths\' byte order, from the CLI and the library', async () => {
    const files = Object.fromEntries(created.map((rel, i) => [rel, `id\n${i}\n`]))
    const root = tree('order', files)
    const expected = [...created].sort().map(rel => path.join(root, rel))
    const res = await runCli(['import', path.join(root, '**', '*.csv'), '-u', server.url, '-c', 'SET g3:{id} {$n}', '--json'])
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).files.map(f => f.input)).toEqual(expected)
    // {$n} numbers the records in load order: the file sorted k-th holds record k + 1.
    const n = await redis.mget(created.map((rel, i) => `g3:${i}`))
    expect(n.map(Number)).toEqual(created.map(rel => [...created].sort().indexOf(rel) + 1))
    const summary = await load({ input: [path.join(root, '**', '*.csv')], url: server.url, command: 'SET g4:{id} 1' })
    expect(summary.files.map(f => f.input)).toEqual(expected)
  })
})
