'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 33 item 6: comments and docs must not name files that no longer exist. Every file
// name lib/, bench/, bin/, docs/*.md, README.md and index.d.ts mention (in code, comments or
// prose) names a file of the repository: a path (`lib/read/row.js`, `docs/errors.md`,
// `./pool.js`, `read/csv/row.js`) is looked up from the repository root, from lib/, from the
// mentioning file's folder, or in a dependency's package; a bare name (`chain.js`) must be
// some file's name. test/ is left out: its bare names are mostly temporary files a test
// writes (throws.mjs, bad.mjs), which exist only while it runs.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')

// Names that look like files and are not ours, each with why.
const ALLOWED = new Set([
  'Node.js', // the runtime
  './big-cities.cjs', // lib/cli/index.js: a user's map module in --help's examples
  'coverage/coverage-summary.json', // docs/testing.md: written by the coverage run, not kept
  'module.js' // lib/read/parquet/codecs.js: the zstd package's own wasm loader, next to its main
])

// Dependencies whose files may be named by path (`hyparquet/src/column.js`).
const PACKAGES = Object.keys(require('../package.json').dependencies || {})

/** Every file of the repository, as a path from its root (node_modules and .git left out). */
function repoFiles (dir = ROOT) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    if (e.name === 'node_modules' || e.name === '.git') return []
    const p = path.join(dir, e.name)
    return e.isDirectory() ? repoFiles(p) : [path.relative(ROOT, p).split(path.sep).join('/')]
  })
}

/** The files whose mentions are checked: lib/, bench/, bin/, docs/*.md, README.md, index.d.ts. */
function scanned (files) {
  return files.filter(f => /^(lib|bench|bin)\/.*\.(js|mjs|cjs)$/.test(f) || /^docs\/[^/]+\.md$/.test(f) || f === 'README.md' || f === 'index.d.ts')
}

const EXT = '(?:js|mjs|cjs|ts|md|json)'
// A path: segments with a slash, ending in a file name (not part of a URL or a longer word).
const PATH = new RegExp(String.raw`(?<![\w.:/@<>-])((?:\.{1,2}/)+(?:[\w@-][\w.-]*/)*[\w.-]*\w\.${EXT}|(?:[\w@-][\w.-]*/)+[\w.-]*\w\.${EXT})(?![\w/-])`, 'g')
// A bare name: `name.js` not after a slash or a dot.
const BARE = /(?<![\w./@-])([\w-]+\.(?:js|mjs|cjs))(?![\w/-])/g

/**
 * The names in `text` that name no file: [{ line, name }]. `file`: the mentioning file;
 * `exists(p)`: whether p (from the root) is a file; `names`: every file's base name.
 */
function staleNames (text, file, exists, names) {
  const stale = []
  const dir = path.posix.dirname(file)
  text.split('\n').forEach((l, i) => {
    for (const m of l.matchAll(PATH)) {
      const p = m[1]
      const bases = [path.posix.normalize(p), path.posix.join('lib', p), path.posix.join(dir, p)]
      const ok = bases.some(b => !b.startsWith('..') && exists(b)) ||
        PACKAGES.some(pkg => p.startsWith(pkg + '/') && fs.existsSync(path.join(ROOT, 'node_modules', p)))
      if (!ok && !ALLOWED.has(p)) stale.push({ line: i + 1, name: p })
    }
    for (const m of l.matchAll(BARE)) {
      if (!names.has(m[1]) && !ALLOWED.has(m[1])) stale.push({ line: i + 1, name: m[1] })
    }
  })
  return stale
}

describe('file names in lib/, bench/, bin/, docs/, README.md and index.d.ts', () => {
  const files = repoFiles()
  const all = new Set(files)
  const names = new Set(files.map(f => path.posix.basename(f)))
  const exists = p => all.has(p)

  it('each names a file that exists', () => {
    const stale = []
    for (const f of scanned(files)) {
      for (const s of staleNames(fs.readFileSync(path.join(ROOT, f), 'utf8'), f, exists, names)) stale.push(`${f}:${s.line} ${s.name}`)
    }
    expect(stale).toEqual([])
  })

  it('finds a stale name in any of its forms, and lets a good one be', () => {
    const f = 'lib/encode/resp.js'
    const found = t => staleNames(t, f, exists, names).map(s => s.name)
    expect(found('// see lib/writer.js and lib/encode/writer.js')).toEqual(['lib/writer.js'])
    expect(found("require('./gone.js') // ./writer.js")).toEqual(['./gone.js'])
    expect(found('read/rows.js, not read/row.js; ../read/row.js too')).toEqual(['read/rows.js'])
    expect(found('// parallel.js is gone; chain.js is here')).toEqual(['parallel.js'])
    expect(found('see [how](docs/how-it-worked.md), hyparquet/src/column.js')).toEqual(['docs/how-it-worked.md'])
    expect(found('https://example.com/x/gone.js and Node.js')).toEqual([])
  })
})
