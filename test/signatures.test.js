'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// No function in lib/ takes more than four positional parameters (issue 33, item 5): a call
// with five arguments is read by counting, and a sixth one added later shifts the rest. Past
// four, the function takes an options object. The signatures are parsed (TypeScript's parser,
// which reads JavaScript), so methods, arrow functions, constructors and defaults all count.
const fs = require('node:fs')
const path = require('node:path')
const ts = require('typescript')

const LIB = path.join(__dirname, '..', 'lib')
const MAX = 4

function jsFiles (dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? jsFiles(p) : e.name.endsWith('.js') ? [p] : []
  })
}

/**
 * A function node's name as a reader would look it up: its own, its variable's, its
 * property's; a method or constructor with its class's (`Encoder.add`, `Pool.constructor`).
 */
function nameOf (node) {
  const cls = node.parent && (ts.isClassDeclaration(node.parent) || ts.isClassExpression(node.parent)) ? `${node.parent.name ? node.parent.name.getText() : '<class>'}.` : ''
  if (ts.isConstructorDeclaration(node)) return cls + 'constructor'
  if (node.name) return cls + node.name.getText()
  const p = node.parent
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))) return p.name.getText()
  if (p && ts.isBinaryExpression(p)) return p.left.getText()
  return '<anonymous>'
}

/** The functions of one source text with more than MAX parameters: [{ name, line, params }]. */
function offenders (text, file = 'x.js') {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS)
  const found = []
  const visit = node => {
    if (ts.isFunctionLike(node) && node.parameters && node.parameters.length > MAX) {
      found.push({ name: nameOf(node), line: src.getLineAndCharacterOfPosition(node.getStart()).line + 1, params: node.parameters.length })
    }
    ts.forEachChild(node, visit)
  }
  visit(src)
  return found
}

describe('function signatures in lib/', () => {
  it('finds a function of five parameters, in every form a signature takes', () => {
    const planted = [
      'function f (a, b, c, d, e) {}',
      'const g = (a, b, c, d, e = 1) => a',
      'const h = async function (a, b, c, d, ...e) {}',
      'class K { constructor (a, b, c, d, { e }) {} m (a, b, c, d, e) {} static async * s (a, b, c, d, e) {} }',
      'module.exports.x = function (a, b, c, d, [e]) {}',
      'const o = { p (a, b, c, d, e) {} }'
    ].join('\n')
    expect(offenders(planted).map(f => `${f.name}@${f.line}`)).toEqual(['f@1', 'g@2', 'h@3', 'K.constructor@4', 'K.m@4', 'K.s@4', 'module.exports.x@5', 'p@6'])
    // Four, an options object, or a rest parameter within four are fine.
    expect(offenders('function f (a, b, c, d) {}\nconst g = ({ a, b, c, d, e }) => a\nfunction h (a, b, c, ...d) {}')).toEqual([])
  })

  it('no function in lib/ takes more than four positional parameters', () => {
    const found = []
    for (const file of jsFiles(LIB)) {
      const rel = path.relative(LIB, file).split(path.sep).join('/')
      for (const f of offenders(fs.readFileSync(file, 'utf8'), file)) {
        found.push(`${rel}:${f.line} ${f.name} (${f.params} parameters)`)
      }
    }
    expect(found).toEqual([])
  })

})
