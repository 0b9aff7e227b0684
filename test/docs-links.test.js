'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// The README is the front page and docs/ the manual (issue 25): every relative link between
// them, and every #anchor, must lead somewhere. Anchors are computed as GitHub computes them
// (github-slugger: lowercase, punctuation removed, spaces to hyphens, a repeated heading
// -1, -2, …). docs/*.md is listed at run time, so a new manual page is checked (and must be
// in the README's table of contents) without touching this file.

const fs = require('node:fs')
const path = require('node:path')
const GithubSlugger = require('github-slugger').default

const ROOT = path.join(__dirname, '..')
const DOCS = path.join(ROOT, 'docs')

/** README.md and every docs/*.md, as paths relative to the repository root. */
function markdownFiles () {
  const docs = fs.readdirSync(DOCS).filter(f => f.endsWith('.md')).sort().map(f => `docs/${f}`)
  return ['README.md', ...docs]
}

/** The text with fenced code blocks blanked (line numbers kept): links there are examples. */
function withoutFences (text) {
  let fence = null
  return text.split('\n').map(line => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line)
    if (fence) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length) fence = null
      return ''
    }
    if (m) { fence = m[1]; return '' }
    return line
  })
}

/** A heading's text as GitHub renders it before making the slug: links as their text, no code marks. */
function headingText (raw) {
  return raw.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '').replace(/\s+#+\s*$/, '').trim()
}

/** Every anchor a Markdown file offers: its headings' slugs, and explicit id/name attributes. */
function anchorsOf (text) {
  const slugger = new GithubSlugger()
  const anchors = new Set()
  for (const line of withoutFences(text)) {
    const h = /^ {0,3}#{1,6}\s+(.*)$/.exec(line)
    if (h) anchors.add(slugger.slug(headingText(h[1])))
    for (const a of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(a[1])
  }
  return anchors
}

/** Relative links of a Markdown text: { line, target } for [text](target) and [ref]: target, outside code. */
function linksOf (text) {
  const links = []
  withoutFences(text).forEach((raw, i) => {
    const line = raw.replace(/(`+)[^`]*?\1/g, '') // inline code spans
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: m[1] })
    const ref = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line)
    if (ref) links.push({ line: i + 1, target: ref[1] })
  })
  return links.filter(l => !/^[a-z][a-z0-9+.-]*:/i.test(l.target)) // http:, https:, mailto:
}

/** Each broken relative link of the files, as "file:line: target: why". */
function brokenLinks (root, files) {
  const anchorCache = new Map()
  const anchors = file => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(fs.readFileSync(file, 'utf8')))
    return anchorCache.get(file)
  }
  const broken = []
  for (const rel of files) {
    const file = path.join(root, rel)
    for (const { line, target } of linksOf(fs.readFileSync(file, 'utf8'))) {
      const hash = target.indexOf('#')
      const linkPath = decodeURIComponent(hash === -1 ? target : target.slice(0, hash))
      const fragment = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1))
      const dest = linkPath === '' ? file : path.resolve(path.dirname(file), linkPath)
      const where = `${rel}:${line}: ${target}`
      if (!fs.existsSync(dest)) broken.push(`${where}: no such file`)
      else if (fragment !== null && dest.endsWith('.md') && !anchors(dest).has(fragment)) {
        broken.push(`${where}: no heading #${fragment} in ${path.relative(root, dest)}`)
      }
    }
  }
  return broken
}

describe('anchors as GitHub makes them', () => {
  it('lowercase, punctuation removed, spaces to hyphens, repeats numbered', () => {
    const text = [
      '# pipeload', '## Quick start', '### Transforming records with --map',
      '## Security: TLS, ACL users, passwords', '**Choosing** no heading',
      '## Choosing `--batch-size` and `--window`', '## Options', '### Options', '#### Options',
      '## See [Units](#units)', '```', '## in a fence', '```', '<a id="kept"></a>'
    ].join('\n')
    expect([...anchorsOf(text)]).toEqual([
      'pipeload', 'quick-start', 'transforming-records-with---map', 'security-tls-acl-users-passwords',
      'choosing---batch-size-and---window', 'options', 'options-1', 'options-2', 'see-units', 'kept'
    ])
  })

  it('links in code are not links; http(s) and mailto are not checked', () => {
    const text = 'a [b](#c) `[d](#e)` [f](https://x.org/#g)\n[h]: other.md#i\n```\n[j](#k)\n```\n[l](mailto:x@y.org)'
    expect(linksOf(text).map(l => l.target)).toEqual(['#c', 'other.md#i'])
  })
})

describe('README.md and docs/', () => {
  const files = markdownFiles()

  it('are the front page and a manual of several files', () => {
    expect(files[0]).toBe('README.md')
    expect(files.length).toBeGreaterThan(10)
  })

  it('have no broken relative link or anchor', () => {
    expect(brokenLinks(ROOT, files)).toEqual([])
  })

  it('a broken anchor or file is found, with its file and line', () => {
    const tmp = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'pipeload-links-'))
    try {
      fs.mkdirSync(path.join(tmp, 'docs'))
      fs.writeFileSync(path.join(tmp, 'README.md'), '# Top\n\nSee [a](docs/a.md#two-words) and [b](docs/a.md#two-words-1).\n')
      fs.writeFileSync(path.join(tmp, 'docs', 'a.md'), '# A\n\n## Two words\n\n[up](../README.md#top) [gone](../nothing.md) [self](#a) [typo](#two-word)\n')
      expect(brokenLinks(tmp, ['README.md', 'docs/a.md'])).toEqual([
        'README.md:3: docs/a.md#two-words-1: no heading #two-words-1 in docs/a.md',
        'docs/a.md:5: ../nothing.md: no such file',
        'docs/a.md:5: #two-word: no heading #two-word in docs/a.md'
      ])
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })

  it('the README is a front page of at most 300 lines, whose table of contents names every docs/ file', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')
    expect(readme.split('\n').length).toBeLessThanOrEqual(300)
    const linked = new Set(linksOf(readme).map(l => l.target.split('#')[0]))
    for (const doc of files.slice(1)) expect(linked.has(doc), `README links ${doc}`).toBe(true)
  })
})
