'use strict'
/* global describe, it, expect */

// index.d.ts is hand-written; compiling a user's-eye program against it (through the
// package's own "exports" map) keeps it honest. The compiler runs in this process, and what it
// checks is ours: the options, index.d.ts and the program. @types/node's own declarations are
// not (tsc -p checks all 190 files of it too: 8.4 s a run, against 5.7 s for ours).
const ts = require('typescript')
const path = require('node:path')

function diagnostics (project) {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: d => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')) } }
  const config = ts.getParsedCommandLineOfConfigFile(project, {}, host)
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })
  const root = path.join(__dirname, '..')
  const ours = program.getSourceFiles().filter(f => !path.relative(root, f.fileName).split(path.sep).includes('node_modules'))
  const found = [...config.errors, ...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]
  for (const f of ours) found.push(...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f))
  return { files: ours.map(f => path.relative(root, f.fileName)).sort(), text: ts.formatDiagnostics(found, { getCanonicalFileName: f => f, getCurrentDirectory: () => root, getNewLine: () => '\n' }) }
}

describe('index.d.ts', () => {
  it('type-checks a program that uses the public API', () => {
    const { files, text } = diagnostics(path.join(__dirname, 'types', 'tsconfig.json'))
    expect(files).toEqual(['index.d.ts', path.join('test', 'types', 'usage.ts')])
    expect(text).toBe('')
  })

  it('names every runtime export', async () => {
    const cjs = require('..')
    const esm = await import('../index.mjs')
    expect(Object.keys(cjs).sort()).toEqual(['CODES', 'DEFAULTS', 'EXIT', 'JsonNumber', 'PipeloadError', 'bench', 'exportKeys', 'load'])
    expect(esm.JsonNumber).toBe(cjs.JsonNumber)
    expect(esm.load).toBe(cjs.load)
    expect(esm.default.load).toBe(cjs.load)
    expect(esm.bench).toBe(cjs.bench)
    expect(esm.exportKeys).toBe(cjs.exportKeys)
  })

  it('names the error codes lib/errors.js declares, and docs/errors.md gives each its exit code', () => {
    const fs = require('node:fs')
    const { CODES } = require('..')
    const dts = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8')
    const union = /export type ErrorCode =([^]*?)\n\n/.exec(dts)[1]
    expect([...union.matchAll(/'(PIPELOAD_[A-Z_]+)'/g)].map(m => m[1]).sort()).toEqual(Object.keys(CODES).sort())
    const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'errors.md'), 'utf8')
    const rows = Object.fromEntries([...doc.matchAll(/^\| `(PIPELOAD_[A-Z_]+)` \| (\d+) \|/gm)].map(m => [m[1], Number(m[2])]))
    expect(rows).toEqual({ ...CODES })
  })
})
