'use strict'
/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)

// The package as a user gets it: `npm pack`, then `npm install <tarball>` in an empty
// folder, then the bin, require() and import. Also what the tarball must not carry.

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { promisify } = require('node:util')

const run = promisify(execFile)
const ROOT = path.resolve(__dirname, '..')
const PKG = require('../package.json')
const { scaledMs } = require('./helpers/wait')
const TIMEOUT_MS = scaledMs(120_000) // on a quiet machine, scaled to this one

// A run under `npm test` exports npm_config_local_prefix=<repo> and friends; a child npm
// would install into the repo instead of the empty folder. Config files still apply.
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))
delete ENV.REDIS_URL
delete ENV.REDISCLI_AUTH

let tmp
let tarball
let packed // paths inside the tarball, without the leading "package/"
let app

function sh (cmd, args, cwd) {
  return run(cmd, args, { cwd, env: ENV, timeout: TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 })
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-pack-'))
  const { stdout } = await sh('npm', ['pack', '--json', '--pack-destination', tmp], ROOT)
  const [info] = JSON.parse(stdout)
  tarball = path.join(tmp, info.filename)
  // The listing from the archive itself, not npm's report of what it meant to put there.
  const list = await sh('tar', ['-tzf', tarball], tmp)
  packed = list.stdout.split('\n').filter(Boolean).map((p) => p.replace(/^package\//, '')).sort()

  app = path.join(tmp, 'app')
  fs.mkdirSync(app)
  await sh('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock'], app)
}, TIMEOUT_MS)

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
})

describe('npm pack', () => {
  it('holds only the allow-listed files', () => {
    const allowed = (p) => /^(bin|lib|examples|docs)\//.test(p) ||
      ['index.d.ts', 'index.mjs', 'README.md', 'package.json', 'LICENSE'].includes(p)
    expect(packed.filter((p) => !allowed(p))).toEqual([])
    expect(packed.filter((p) => /^(test|bench|\.ci)\//.test(p))).toEqual([])
  })

  it('holds the MIT LICENSE package.json names, and says where the project lives', () => {
    expect(PKG.license).toBe('MIT')
    expect(packed).toContain('LICENSE')
    const text = fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8')
    expect(text).toMatch(/^MIT License/)
    expect(text).toMatch(/Copyright \(c\) 2026 pipeload contributors/)
    expect(PKG.repository.url).toMatch(/^git\+https:\/\/github\.com\/[\w-]+\/[\w-]+\.git$/)
    const home = PKG.repository.url.replace(/^git\+/, '').replace(/\.git$/, '')
    expect(PKG.homepage).toBe(home + '#readme')
    expect(PKG.bugs.url).toBe(home + '/issues')
  })

  it('holds the manual, docs/: every page of it', () => {
    const pages = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)
    expect(pages.length).toBeGreaterThan(10)
    expect(packed).toEqual(expect.arrayContaining(pages))
  })

  it('holds every examples/ file the README and docs/ name, so their commands run from an install', () => {
    const pages = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
    const text = pages.map((p) => fs.readFileSync(path.join(ROOT, p), 'utf8')).join('\n')
    const named = [...new Set(text.match(/\bexamples\/[\w./-]*\w/g))]
    expect(named).toEqual(expect.arrayContaining(['examples/data/cities.csv', 'examples/data/cities-semicolon.csv']))
    expect(packed).toEqual(expect.arrayContaining(named))
  })

  it('holds everything a user needs: the bin, every lib file, the entries, the types', () => {
    const libFiles = []
    const walk = (dir) => {
      for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = `${dir}/${e.name}`
        if (e.isDirectory()) walk(rel)
        else if (e.name.endsWith('.js')) libFiles.push(rel)
      }
    }
    walk('lib')
    const required = ['package.json', 'index.d.ts', 'index.mjs', PKG.bin.pipeload.replace(/^\.\//, ''), ...libFiles]
    // README lands with the docs work; check it once it exists in the repo.
    if (fs.existsSync(path.join(ROOT, 'README.md'))) required.push('README.md')
    expect(packed).toEqual(expect.arrayContaining(required))
    // Every path package.json points at is in the tarball.
    const exported = [PKG.main, PKG.types, ...Object.values(PKG.exports['.'])].map((p) => p.replace(/^\.\//, ''))
    expect(packed).toEqual(expect.arrayContaining(exported))
  })
})

describe('installed from the tarball into an empty folder', () => {
  it('npx pipeload --help', async () => {
    const { stdout } = await sh('npx', ['--no-install', 'pipeload', '--help'], app)
    expect(stdout).toMatch(/Usage: pipeload/)
    expect(stdout).toMatch(/import \[options\] <input\.\.\.>/)
    // It ends with the manual: the installed package's docs/, there to read.
    const manual = /^Manual: (\S+), /m.exec(stdout)[1]
    expect(manual).toBe(path.join(fs.realpathSync(app), 'node_modules', 'pipeload', 'docs') + path.sep)
    expect(fs.existsSync(path.join(manual, 'options.md'))).toBe(true)
  }, TIMEOUT_MS)

  it('npx pipeload --version', async () => {
    const { stdout } = await sh('npx', ['--no-install', 'pipeload', '--version'], app)
    expect(stdout.trim()).toBe(PKG.version)
  }, TIMEOUT_MS)

  it('npx --package <tarball> pipeload --help, without an install', async () => {
    const empty = fs.mkdtempSync(path.join(tmp, 'empty-'))
    const { stdout } = await sh('npx', ['--yes', '--prefer-offline', '--package', tarball, '--', 'pipeload', 'import', '--help'], empty)
    expect(stdout).toMatch(/Usage: pipeload import/)
  }, TIMEOUT_MS)

  it('require(\'pipeload\') from CommonJS', async () => {
    const code = "const p = require('pipeload'); const { load, PipeloadError, EXIT } = p; " +
      'console.log(JSON.stringify([typeof load, typeof PipeloadError, EXIT.USAGE, require.resolve("pipeload")]))'
    const { stdout } = await sh(process.execPath, ['-e', code], app)
    const [load, errorClass, usage, resolved] = JSON.parse(stdout)
    expect([load, errorClass, usage]).toEqual(['function', 'function', 2])
    // Resolved from the installed copy, not the repo.
    expect(resolved.startsWith(path.join(fs.realpathSync(app), 'node_modules', 'pipeload') + path.sep)).toBe(true)
  })

  it('import { load } from \'pipeload\' in ESM, the same function as require()', async () => {
    const code = "import { load } from 'pipeload'; import def from 'pipeload'; import { createRequire } from 'node:module'; " +
      "const cjs = createRequire(import.meta.url)('pipeload'); " +
      'console.log(JSON.stringify([typeof load, load === cjs.load, def.load === cjs.load]))'
    const { stdout } = await sh(process.execPath, ['--input-type=module', '-e', code], app)
    expect(JSON.parse(stdout)).toEqual(['function', true, true])
  })

  it('brings its runtime dependencies', () => {
    for (const dep of Object.keys(PKG.dependencies)) {
      expect(fs.existsSync(path.join(app, 'node_modules', dep, 'package.json')), dep).toBe(true)
    }
    for (const dev of Object.keys(PKG.devDependencies || {})) {
      expect(fs.existsSync(path.join(app, 'node_modules', dev)), `devDependency ${dev} installed`).toBe(false)
    }
  })
})
