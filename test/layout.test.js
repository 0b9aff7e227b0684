'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// lib/ is laid out by pipeline stage (docs/how-it-works.md): each folder may use only the
// folders below it, so a record can be followed from argv to the socket reading downwards.
const fs = require('node:fs')
const path = require('node:path')

const LIB = path.join(__dirname, '..', 'lib')
// Top to bottom; errors.js and index.js are outside the order (everything may use errors.js).
const FLOORS = ['cli', 'bench', 'export', 'run', 'threads', 'send', 'encode', 'read']

function jsFiles (dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? jsFiles(p) : e.name.endsWith('.js') ? [p] : []
  })
}

/** The lib/ folder a path is in ('' for lib/ itself), or null outside lib/. */
function floorOf (file) {
  const rel = path.relative(LIB, file)
  if (rel.startsWith('..')) return null
  const parts = rel.split(path.sep)
  return parts.length > 1 ? parts[0] : ''
}

function localRequires (file) {
  const src = fs.readFileSync(file, 'utf8')
  const out = []
  for (const m of src.matchAll(/require\('(\.{1,2}\/[^']*)'\)/g)) out.push(path.resolve(path.dirname(file), m[1]))
  return out
}

describe('lib/ layout', () => {
  it('every file of lib/ is in a stage folder, but errors.js and index.js', () => {
    const loose = jsFiles(LIB).filter(f => floorOf(f) === '').map(f => path.basename(f)).sort()
    expect(loose).toEqual(['errors.js', 'index.js'])
    for (const f of jsFiles(LIB)) {
      const floor = floorOf(f)
      if (floor !== '') expect(FLOORS, f).toContain(floor)
    }
  })

  it('each folder uses only itself and the folders below it', () => {
    const wrong = []
    for (const f of jsFiles(LIB)) {
      const from = floorOf(f)
      if (from === '') continue
      for (const target of localRequires(f)) {
        const to = floorOf(target)
        if (to === null || to === '') continue // package.json, errors.js
        if (FLOORS.indexOf(to) < FLOORS.indexOf(from)) wrong.push(`${path.relative(LIB, f)} -> ${path.relative(LIB, target)}`)
      }
    }
    expect(wrong).toEqual([])
  })

  // Format knowledge lives in read/, one folder per format (read/csv/, read/json/,
  // read/parquet/, any folder under read/): a module outside read/ may require, of read/,
  // only the modules directly in it (the input layer, the row interface read/row.js, the
  // format registry read/formats.js), so that it reaches a format's code through the registry
  // alone. And a format's folder uses no other format's folder.
  it("nothing outside read/ requires a format's module, but through read/formats.js", () => {
    expect(formatRequires(jsFiles(LIB))).toEqual([])
  })

  it('the format rule sees a planted require of a format module', () => {
    const planted = path.join(LIB, 'encode', 'planted-format-require.js')
    fs.writeFileSync(planted, "'use strict'\nconst { CsvRow } = require('../read/csv/row')\nmodule.exports = { CsvRow }\n")
    try {
      expect(formatRequires([planted])).toEqual(['encode/planted-format-require.js -> read/csv/row.js'])
    } finally {
      fs.unlinkSync(planted)
    }
  })
})

/** The folder under read/ a path is in ('csv', 'json', 'parquet', …), or null. */
function formatOf (file) {
  const rel = path.relative(path.join(LIB, 'read'), file)
  if (rel.startsWith('..')) return null
  const parts = rel.split(path.sep)
  return parts.length > 1 ? parts[0] : null
}

/** `from -> to` for each require of a format's module from outside its folder and the registry. */
function formatRequires (files) {
  const wrong = []
  for (const f of files) {
    const inRead = floorOf(f) === 'read'
    const own = formatOf(f)
    for (const target of localRequires(f)) {
      const format = formatOf(target.endsWith('.js') ? target : target + '.js')
      if (format === null || format === own) continue
      // Inside read/, the input layer opens the format it is given; outside, nothing does.
      if (inRead && own === null) continue
      wrong.push(`${path.relative(LIB, f)} -> ${path.relative(LIB, target.endsWith('.js') ? target : target + '.js')}`)
    }
  }
  return wrong
}
