'use strict'
/* global describe, it, expect */

// index.d.ts is hand-written; compiling a user's-eye program against it (through the
// package's own "exports" map) keeps it honest.
const { execFileSync } = require('node:child_process')
const path = require('node:path')

describe('index.d.ts', () => {
  it('type-checks a program that uses the public API', () => {
    const tsc = require.resolve('typescript/bin/tsc')
    const project = path.join(__dirname, 'types', 'tsconfig.json')
    let output = ''
    try {
      execFileSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' })
    } catch (err) {
      output = String(err.stdout) + String(err.stderr)
    }
    expect(output).toBe('')
  })

  it('names every runtime export', async () => {
    const cjs = require('..')
    const esm = await import('../index.mjs')
    expect(Object.keys(cjs).sort()).toEqual(['CODES', 'DEFAULTS', 'EXIT', 'JsonNumber', 'PipeloadError', 'bench', 'load'])
    expect(esm.JsonNumber).toBe(cjs.JsonNumber)
    expect(esm.load).toBe(cjs.load)
    expect(esm.default.load).toBe(cjs.load)
    expect(esm.bench).toBe(cjs.bench)
  })
})
