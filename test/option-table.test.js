'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Issue 33 item 4: what index.d.ts, docs/options.md, docs/library.md and docs/errors.md name
// (options, flags, defaults, exit codes, error codes) is what the option table
// (lib/run/option-table.js) and lib/errors.js declare, and the other way round. The texts
// are read as a reader reads them (a table's cells, a comment's "Default 5000."), not
// through the code under test; the units they are written in are converted here.

const fs = require('node:fs')
const path = require('node:path')
const { OPTIONS, DEFAULTS, LOAD_OPTIONS } = require('../lib/run/option-table')
const { EXIT, CODES } = require('../lib/errors')

const root = path.join(__dirname, '..')
const read = file => fs.readFileSync(path.join(root, file), 'utf8')
const DTS = read('index.d.ts')
const MiB = 1024 * 1024

/** `a | b` table rows of a markdown section (header and rule left out), as cells. */
function tableRows (text) {
  return text.split('\n').filter(l => l.startsWith('| ') && !/^\| -/.test(l)).slice(1).map(l => l.slice(2, -2).split(/ (?<!\\)\| /))
}

function section (text, title, next) {
  const start = text.indexOf(`\n## ${title}\n`)
  expect(start, title).toBeGreaterThan(-1)
  const end = next ? text.indexOf(`\n## ${next}\n`, start) : text.length
  return text.slice(start, end)
}

/** A default as the docs write it (5000, 8 MiB, 10 s, 30s, true, 'auto') → its value. */
function documented (text) {
  const t = text.replace(/`/g, '').trim()
  if (/^'.*'$/.test(t)) return t.slice(1, -1)
  if (t === 'true' || t === 'false') return t === 'true'
  const m = /^(\d+(?:\.\d+)?)\s*(MiB|KiB|s|ms)?$/.exec(t)
  if (!m) return t
  return Number(m[1]) * ({ MiB, KiB: 1024, s: 1000, ms: 1 }[m[2]] ?? 1)
}

/** The long flags of the table's entries that commander shows (hidden ones left out). */
function tableFlags () {
  const flags = []
  for (const e of OPTIONS) {
    if (e.flag) flags.push(e.flag)
    for (const m of e.more || []) if (!m.hidden) flags.push(m.flag)
  }
  return flags.map(f => /--[a-z-]+/.exec(f)[0])
}

describe('index.d.ts', () => {
  /** `name: value` pairs of `export const NAME: Readonly<{ … }>`. */
  function constType (name) {
    const m = new RegExp(`export const ${name}: Readonly<\\{([\\s\\S]*?)\\}>`).exec(DTS)
    expect(m, name).not.toBe(null)
    return Object.fromEntries([...m[1].matchAll(/(\w+): ([^,\n]+)/g)].map(p => [p[1], p[2].trim()]))
  }

  it('EXIT: every exit code, with its number, and no other', () => {
    const declared = constType('EXIT')
    expect(Object.fromEntries(Object.entries(declared).map(([k, v]) => [k, Number(v)]))).toEqual({ ...EXIT })
  })

  it('DEFAULTS: every key of the table\'s defaults, and no other; literal types hold the value', () => {
    const declared = constType('DEFAULTS')
    expect(Object.keys(declared).sort()).toEqual(Object.keys(DEFAULTS).sort())
    for (const [k, type] of Object.entries(declared)) {
      if (/^'.*'$/.test(type)) expect(DEFAULTS[k], k).toBe(type.slice(1, -1))
      else expect(typeof DEFAULTS[k], k).toBe(type)
    }
  })

  it('ErrorCode: exactly the codes of lib/errors.js', () => {
    const m = /export type ErrorCode =([\s\S]*?)\n\n/.exec(DTS)
    const declared = [...m[1].matchAll(/\| '(\w+)'/g)].map(p => p[1])
    expect(declared.sort()).toEqual(Object.keys(CODES).sort())
  })

  it("each default the options' comments give is the table's, and each default of the table is given", () => {
    const body = /export interface ConnectionOptions \{([\s\S]*?)\n\}/.exec(DTS)[1] + /export interface LoadOptions extends ConnectionOptions \{([\s\S]*?)\n\}/.exec(DTS)[1]
    const said = {}
    for (const [, comment, name] of body.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*\n\s*(\w+)\??:/g)) {
      const text = comment.replace(/\n\s*\*/g, ' ')
      const m = /Default ([^.;]+?)[.;]/.exec(text) || /('\w+') \(default\)/.exec(text)
      if (m) said[name] = documented(m[1])
    }
    for (const name of Object.keys(DEFAULTS)) expect(said[name], name).toEqual(DEFAULTS[name])
  })
})

describe('docs/options.md', () => {
  const doc = section(read('docs/options.md'), 'Options', 'Units')
  const rows = tableRows(doc)

  it('the options table names every flag of import and the connection, and no other', () => {
    const named = rows.flatMap(([cell]) => [...cell.matchAll(/--[a-z-]+/g)].map(m => m[0]))
    const flags = tableFlags()
    expect([...new Set(named)].sort()).toEqual([...new Set(flags)].sort())
  })

  it('a flag\'s default there is the one its help shows', () => {
    let checked = 0
    for (const e of OPTIONS) {
      if (!e.flag || e.flagDefault === undefined) continue
      const long = /--[a-z-]+/.exec(e.flag)[0]
      const row = rows.find(([cell]) => new RegExp(`${long}(?![a-z-])`).test(cell))
      const want = e.defaultText ?? (e.duration ? `${e.default / 1000}s` : String(e.flagDefault === true ? e.default : e.flagDefault))
      expect(row[1].replace(/`/g, ''), long).toBe(want)
      checked++
    }
    expect(checked).toBeGreaterThanOrEqual(9)
  })
})

describe('docs/library.md', () => {
  const doc = section(read('docs/library.md'), 'Options', 'The summary')

  it('a default it gives is the table\'s', () => {
    let checked = 0
    for (const [first, meaning] of tableRows(doc)) {
      const text = `${first} | ${meaning}`
      // "`name` … (default X)": the last option of DEFAULTS named before it; "`'x'` (default)": the row's option.
      for (const m of text.matchAll(/\((?:the )?default ([^)]+)\)/g)) {
        const before = [...text.slice(0, m.index).matchAll(/`(\w+)/g)].map(n => n[1]).filter(n => n in DEFAULTS)
        if (before.length === 0) continue // a default that is no value (`output`: process.stdout)
        expect(documented(m[1]), text).toEqual(DEFAULTS[before[before.length - 1]])
        checked++
      }
      for (const m of text.matchAll(/`'(\w+)'` \((?:the )?default\)/g)) {
        const name = /`(\w+)/.exec(first)[1]
        expect(DEFAULTS[name], text).toBe(m[1])
        checked++
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5)
  })
})

describe('docs/errors.md and lib/', () => {
  const doc = read('docs/errors.md')

  it('the exit codes table: every code of EXIT, and no other', () => {
    const listed = tableRows(section(doc, 'Exit codes', 'Error codes')).flatMap(([code]) => code.split('/').map(Number))
    expect([...new Set(listed)].sort((a, b) => a - b)).toEqual(Object.values(EXIT).sort((a, b) => a - b))
  })

  it('the error codes table: every code of CODES with its exit code, and no other', () => {
    const rows = tableRows(section(doc, 'Error codes')).filter(([code]) => /^`PIPELOAD_/.test(code))
    const listed = Object.fromEntries(rows.map(([code, exit]) => [code.replace(/`/g, ''), Number(exit)]))
    expect(listed).toEqual({ ...CODES })
  })

  it('every error code lib/ writes is declared in CODES (an environment variable aside)', () => {
    const files = []
    const walk = dir => {
      for (const f of fs.readdirSync(dir, { withFileTypes: true })) {
        if (f.isDirectory()) walk(path.join(dir, f.name))
        else if (f.name.endsWith('.js')) files.push(path.join(dir, f.name))
      }
    }
    walk(path.join(root, 'lib'))
    const text = files.map(f => fs.readFileSync(f, 'utf8')).join('\n')
    const env = new Set([...text.matchAll(/env\.(PIPELOAD_\w+)/g)].map(m => m[1]))
    const used = new Set([...text.matchAll(/'(PIPELOAD_[A-Z][A-Z_]*)'/g)].map(m => m[1]).filter(c => !env.has(c)))
    expect(used.size).toBeGreaterThan(20)
    for (const code of used) expect(Object.keys(CODES), code).toContain(code)
  })
})

// Moved from test/options.test.js (the option names load() and bench() take, the error codes).
describe('the option names and error codes', () => {
  const { BENCH_OPTIONS } = require('../lib/bench/options')

  /** Property names of `interface name` in index.d.ts (one level: nested objects are one line). */
  function dtsProperties (name) {
    const text = DTS
    const m = new RegExp(`export interface ${name}(?: extends (\\w+))? \\{\\n([\\s\\S]*?)\\n\\}`).exec(text)
    const own = [...m[2].matchAll(/^ {2}(\w+)\??:/gm)].map(p => p[1])
    return m[1] ? [...dtsProperties(m[1]), ...own] : own
  }

  it('index.d.ts declares exactly the known options of load() and bench()', () => {
    expect(dtsProperties('LoadOptions').sort()).toEqual([...LOAD_OPTIONS].sort())
    expect(dtsProperties('BenchOptions').sort()).toEqual([...BENCH_OPTIONS].sort())
  })

  it("the manual's library options (docs/library.md) name every known option, and no other", () => {
    const lib = fs.readFileSync(path.join(root, 'docs', 'library.md'), 'utf8')
    const section = lib.slice(lib.indexOf('\n## Options\n'), lib.indexOf('\n## The summary\n'))
    expect(section.length).toBeGreaterThan(1000)
    const named = new Set([...section.matchAll(/`(\w+)(?:\([^)]*\))?`/g)].map(m => m[1]))
    for (const name of LOAD_OPTIONS) expect(named.has(name), name).toBe(true)
    // The table's first column: option names only.
    const rows = [...section.matchAll(/^\| ([^|]+) \|/gm)].map(m => m[1]).filter(c => c !== 'option' && !/^-+$/.test(c))
    for (const cell of rows) for (const [, name] of cell.matchAll(/`(\w+)/g)) expect(LOAD_OPTIONS, cell).toContain(name)
  })
})

describe('error codes', () => {
  it("every code is in the manual's errors table (docs/errors.md) with its exit code, and in index.d.ts", () => {
    const fs = require('node:fs')
    const path = require('node:path')
    const { CODES } = require('../lib/errors')
    const root = path.join(__dirname, '..')
    const errors = fs.readFileSync(path.join(root, 'docs', 'errors.md'), 'utf8')
    const dts = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8')
    for (const [code, exit] of Object.entries(CODES)) {
      expect(errors, code).toContain(`| \`${code}\` | ${exit} |`)
      expect(dts, code).toContain(`| '${code}'`)
    }
  })
})
