'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Help as a person meets it: -h as redis-cli's host and as "help", the defaults as they are
// typed, and the sections after the options (examples, templates, environment, exit
// codes). These tests check content, not layout: commander wraps lines to the terminal.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { useServer } = require('./helpers/redis-server')
const { runCli: pipeload } = require('./helpers/run-cli')
const { EXIT } = require('../lib/errors')

let srv
let redis
let tmp
useServer('pipeload-help-', s => { ({ srv, redis, tmp } = s) })

/** The text after `heading` up to the next blank line. */
function section (text, heading) {
  const start = text.indexOf('\n' + heading)
  expect(start, `a "${heading}" section`).toBeGreaterThan(-1)
  const rest = text.slice(start + 1)
  const end = rest.indexOf('\n\n')
  return end === -1 ? rest : rest.slice(0, end)
}

/** Help text with commander's line wrapping undone, for phrases that may be wrapped. */
function unwrapped (text) {
  return text.replace(/\s+/g, ' ')
}

async function help (args) {
  const res = await pipeload(args)
  expect(res.code, res.stderr).toBe(0)
  expect(res.stderr).toBe('')
  return res.stdout
}

describe('-h', () => {
  it('pipeload -h shows the help, as --help does', async () => {
    const out = await help(['-h'])
    expect(out).toMatch(/^Usage: pipeload /)
    expect(out).toMatch(/-h, --help/)
    expect(out).toBe(await help(['--help']))
  })

  it('a bare -h after import or bench shows that command\'s help: last, or followed by another flag', async () => {
    const importHelp = await help(['import', '--help'])
    expect(importHelp).toMatch(/^Usage: pipeload import /)
    for (const args of [['import', '-h'], ['import', 'users.csv', '-k', 'u:{id}', '-h'], ['import', 'users.csv', '-h', '-p', '6380'], ['import', '-h', '--', 'x.csv']]) {
      expect(await help(args), args.join(' ')).toBe(importHelp)
    }
    const benchHelp = await help(['bench', '--help'])
    expect(benchHelp).toMatch(/^Usage: pipeload bench /)
    expect(await help(['bench', '-h'])).toBe(benchHelp)
  })

  it('-h with a value is still the host (redis-cli): the run loads into that server', async () => {
    const file = path.join(tmp, 'h.csv')
    fs.writeFileSync(file, 'id,v\n1,x\n2,y\n')
    const res = await pipeload(['import', file, '-k', 'help:h:{id}', '-h', '127.0.0.1', '-p', String(srv.port), '-q'])
    expect(res.code, res.stderr).toBe(0)
    expect(await redis.hgetall('help:h:2')).toEqual({ id: '2', v: 'y' })
    // Attached (-h127.0.0.1) and as the value of another option (-c -h … is a template).
    const attached = await pipeload(['import', file, '-k', 'help:a:{id}', '-h127.0.0.1', '-p', String(srv.port), '-q'])
    expect(attached.code, attached.stderr).toBe(0)
    expect(await redis.hget('help:a:1', 'v')).toBe('x')
  })

  it('a -h that is the value of another option is not help', async () => {
    // (--same-key: the key "-h" names no field, which is refused before the input is opened)
    const res = await pipeload(['import', path.join(os.tmpdir(), 'no-such-dir-pipeload', 'x.csv'), '--key', '-h', '--same-key', '--dry-run', 'text'])
    expect(res.stdout).not.toMatch(/Usage:/)
    expect(res.code).toBe(EXIT.INPUT) // the missing file, not help and not a usage error
  })
})

// Issue 34 item 11: Parquet is read as the other formats are; the headers and the package say so.
describe('the formats named', () => {
  it('pipeload --help, pipeload import --help and the package description name Parquet with the others', async () => {
    expect(unwrapped(await help(['--help']))).toContain('Usage: pipeload <command> [options] Stream CSV, TSV, JSON, NDJSON and Parquet datasets into Redis or Valkey as pipelined commands')
    expect(unwrapped(await help(['import', '--help']))).toContain('stream CSV, TSV, JSON, NDJSON or Parquet files or URLs')
    expect(require('../package.json').description).toMatch(/^Stream CSV, TSV, JSON, NDJSON and Parquet datasets into Redis or Valkey /)
  })
})

describe('defaults as they are typed', () => {
  it('import: numbers unquoted, the record size with its unit, durations bare, no empty lists', async () => {
    const text = unwrapped(await help(['import', '--help']))
    expect(text).toMatch(/--batch-size <n> commands per pipelined batch .*\(default: 5000\)/)
    expect(text).toMatch(/--window <n> batches awaiting replies at most \(default: 4\)/)
    expect(text).toMatch(/--max-record-size <size> .*\(default: 64 MiB\)/)
    expect(text).toMatch(/--timeout <duration> .*\(default: 30s\)/)
    expect(text).toMatch(/--retry-timeout <duration> .*\(default: 60s\)/)
    expect(text).toMatch(/--connect-timeout <duration> .*\(default: 10s\)/)
    expect(text).toMatch(/choices: abort, skip; default: abort/)
    expect(text).not.toMatch(/default: "/)
    expect(text).not.toMatch(/default: \[/)
    expect(text).not.toMatch(/67108864/)
  })

  it('bench: the same rules', async () => {
    const text = unwrapped(await help(['bench', '--help']))
    expect(text).toMatch(/--count <n> .*\(default: \d+\)/)
    expect(text).not.toMatch(/default: "/)
    expect(text).not.toMatch(/default: \[/)
  })

  // Issue 33 item 4: bench's flags for a file are the import's (one option table), help
  // lines, choices and defaults included, marked "file:"; its -w is the import's too.
  it("bench's file flags and -w read as import's do", async () => {
    /** Each option line of a help, joined with its wrapped continuation: flags → description. */
    const options = text => {
      const out = {}
      let last = null
      for (const line of section(text, 'Options:').split('\n').slice(1)) {
        const m = /^ {2}(-\S.*?)(?: {2,}(.*))?$/.exec(line)
        if (m) { last = m[1].trim(); out[last] = m[2] || '' } else if (last) out[last] += ' ' + line.trim()
      }
      return out
    }
    const imp = options(await help(['import', '--help']))
    const ben = options(await help(['bench', '--help']))
    const shared = ['-k, --key <template>', '-c, --command <template>', '--ttl <duration>', '-f, --format <format>', '--no-header', '-d, --delimiter <char>', '--json-path <path>', '--max-record-size <size>']
    for (const flags of shared) expect(ben[flags], flags).toBe('file: ' + imp[flags])
    expect(ben['-w, --window <n>']).toBe(imp['-w, --window <n>'])
  })

  it('--max-record-size takes the unit the help shows', async () => {
    const file = path.join(tmp, 'big.csv')
    fs.writeFileSync(file, 'id,v\n1,' + 'x'.repeat(2000) + '\n')
    const small = await pipeload(['import', file, '-k', 'b:{id}', '--dry-run', 'text', '--max-record-size', '1KiB'])
    expect(small.code).toBe(EXIT.INPUT)
    expect(small.stderr).toMatch(/big\.csv:2: .*\b1024\b/) // 1 KiB
    const enough = await pipeload(['import', file, '-k', 'b:{id}', '--dry-run', 'text', '--max-record-size', '4 KiB'])
    expect(enough.code, enough.stderr).toBe(0)
    const ambiguous = await pipeload(['import', file, '-k', 'b:{id}', '--dry-run', 'text', '--max-record-size', '10m'])
    expect(ambiguous.code).toBe(EXIT.USAGE)
    expect(ambiguous.stderr).toMatch(/^pipeload: --max-record-size must be a size in bytes/)
  })
})

describe('the sections after the options', () => {
  const ENV = ['REDIS_URL', 'REDISCLI_AUTH', 'REDIS_PASSWORD']

  /** Every exit code of lib/errors.js EXIT is listed, each at the start of a line. */
  function expectExitCodes (text) {
    const codes = section(text, 'Exit codes:')
    for (const [name, code] of Object.entries(EXIT)) {
      expect(codes, name).toMatch(new RegExp(`^\\s+(\\d+/)?${code}(/\\d+)?\\s+\\S`, 'm'))
    }
    expect(codes).toMatch(/Ctrl-C/)
  }

  it('pipeload --help: examples, the connection flags, the environment, the exit codes', async () => {
    const text = await help(['--help'])
    const examples = section(text, 'Examples:')
    expect(examples).toContain("pipeload import users.csv --key 'user:{id}'")
    expect(examples).toMatch(/pipeload bench/)
    expect(examples).toMatch(/pipeload import --help/)
    expect(text).toMatch(/-h host/)
    const env = section(text, 'Environment:')
    for (const name of ENV) expect(env).toMatch(new RegExp(`^\\s+${name}\\s+\\S`, 'm'))
    expectExitCodes(text)
  })

  it('import --help: examples, the template syntax, the environment, the exit codes', async () => {
    const text = await help(['import', '--help'])
    const examples = section(text, 'Examples:')
    expect(examples).toContain("pipeload import users.csv --key 'user:{id}'")
    expect(examples).toContain("--delimiter ';'")
    expect(examples).toMatch(/zcat .* \| pipeload import - /)
    const templates = section(text, 'Templates')
    for (const piece of ['{field}', '{a.b}', '{0}', '*', '"two words"', '{{', "--key 'user:{id}' is -c 'HSET user:{id} *'"]) {
      expect(templates, piece).toContain(piece)
    }
    const env = section(text, 'Environment:')
    for (const name of ENV) expect(env).toMatch(new RegExp(`^\\s+${name}\\s+\\S`, 'm'))
    expectExitCodes(text)
  })

  it('every help ends with where the manual is: docs/ of the package, holding the pages it names', async () => {
    const root = path.resolve(__dirname, '..')
    for (const args of [['--help'], ['import', '--help'], ['bench', '--help']]) {
      const lines = (await help(args)).trimEnd().split('\n')
      const [manual, overview] = lines.slice(-2)
      const m = /^Manual: (\S+), one file per topic(?:; (.*))?$/.exec(manual)
      expect(m, `${args.join(' ')}: ${manual}`).not.toBe(null)
      expect(m[1]).toBe(path.join(root, 'docs') + path.sep)
      for (const page of (m[2] || '').match(/[\w-]+\.md/g) || []) expect(fs.existsSync(path.join(m[1], page)), page).toBe(true)
      expect(overview.trim()).toBe(`(the overview is ${path.join(root, 'README.md')})`)
    }
  })

  it('bench --help keeps its safety section and gains the environment', async () => {
    const text = await help(['bench', '--help'])
    expect(text).toMatch(/never runs\s+FLUSHDB or FLUSHALL/)
    const env = section(text, 'Environment:')
    for (const name of ENV) expect(env).toContain(name)
  })
})
