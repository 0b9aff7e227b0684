'use strict'

const { Command, CommanderError } = require('commander')
const { load } = require('../run/load')
const { PipeloadError, EXIT, where } = require('../errors')
const { parseShard } = require('../run/options')
const { formatSummary, formatFailure, int, count } = require('../run/reporter')
const { progressMode, progressOutput } = require('./progress')
const { version } = require('../../package.json')
const { outputError } = require('../send/dry-run')
const { refuseOutputsOverInputs } = require('../run/same-file')
const { registerMapModule } = require('../run/resume-into')
const { addConnectionOptions, connectionOptions, PASSWORD_WARNING } = require('./connection-flags')
const { addFlags, refuseRemoved, plainOptions, IMPORT_FLAGS } = require('./table-flags')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

// argv -> options -> load() -> exit code. Everything a user can get wrong ends as one line
// on stderr and a documented exit code; only bugs print a stack.

const MAX_PRINTED_FAILURES = 20

// Errors whose JSON already went to stdout (a run stopped early: its summary with `error`).
const jsonReported = new WeakSet()

// The sections `--help` prints after the options (docs/options.md and docs/templates.md say
// the same at length).
const TEMPLATE_HELP = `
Templates (-c, --key): a Redis command whose arguments may name the record's fields
  {field}       the field "field": a CSV column, a JSON property
  {Hourly Wage ($)}  everything up to "}" is the name, spaces and punctuation too
  {a.b}         a nested JSON field
  {0}, {1}      a column by position (--no-header, JSON arrays)
  {$key}        the member's key, for a JSON object keyed by id: {"AD": {…}, "AE": {…}}
  *             every field/value pair of the record: HSET user:{id} *
  {$n}          the record's number (1-based over the run, the same after --resume)
  {$line} {$file}  the record's input line and input name: --key 'city:{$n}'
  {$}           the whole record as compact JSON: -c 'JSON.SET user:{id} $ {$}'
  {tags[]}      an array as arguments: SADD tags:{id} {tags[]} (empty: command skipped)
  {borders[,]}  a text split on "," into arguments ({x[|]} splits on "|")
  {emb:f32}     a JSON array of numbers as float32 bytes (f64 too); {emb:f32:768} checks the length
  {=$n} {a\:f32}  a field named like these wins where it exists; = forces the special
                reading, a backslash the field
  "two words"   quotes make one argument of text with spaces
  {{ and }}     literal braces, e.g. a cluster hash tag: SET {{user}}:{id} {name}
  --key 'user:{id}' is -c 'HSET user:{id} *', with the same quotes and braces.
  A missing or null field fails its record.
`
const ENV_HELP = `
Environment:
  REDIS_URL       the server when -u is not given; -h, -p, -n override its parts
  REDISCLI_AUTH   the password, as for redis-cli (-a or a password in -u wins)
  REDIS_PASSWORD  the password when REDISCLI_AUTH is not set
  PIPELOAD_SHARD  import's --shard i/n when it is not given, e.g. in a Kubernetes Indexed
                  Job: the pod's completion index / completions (docs: workers-and-shards.md)
`
const EXIT_HELP = `
Exit codes:
  0        every record loaded
  1        some records failed (an error reply, a missing field; --on-error skip: a bad row)
  2        bad usage: an unknown option, an invalid value or template
  3        bad input that stopped the run: unreadable file, malformed row, oversized record;
           a URL that answers 4xx/5xx, cannot be reached or is cut short
  4        no connection: unreachable, timed out, authentication failed, connection lost;
           the ACL user lacks a right bench or --replace needs (checked before writing)
  74       an output could not be written: stdout, --rejects, --checkpoint
  70       an internal error (a bug: please report it with the printed stack)
  130/143  interrupted by Ctrl-C / SIGTERM
`

// The manual: docs/ of this package, wherever it is installed (node_modules/pipeload/docs).
const DOCS = path.resolve(__dirname, '..', '..', 'docs')
const README = path.resolve(__dirname, '..', '..', 'README.md')

/** The last lines of a help: where the manual is, and the page for this command. */
function manualHelp (page) {
  return `
Manual: ${DOCS}${path.sep}, one file per topic${page ? `; ${page}` : ''}
  (the overview is ${README})
`
}

/** load() option names as the user typed them: batchSize -> --batch-size. */
function flagName (option) {
  return '--' + option.replace(/[A-Z]/g, c => '-' + c.toLowerCase())
}

function importCommand (io) {
  const cmd = new Command('import')
    .description('stream CSV, TSV, JSON, NDJSON or Parquet files or URLs (or - for stdin) into Redis as pipelined commands')
    .argument('<input...>', 'files to load, one after another: paths, patterns (\'parts/*.csv\', expanded by pipeload too), - for stdin, http(s):// URLs (streamed; gzip is detected)')
    .helpOption('--help', 'display help for import (so does -h without a host)')
  addFlags(cmd, IMPORT_FLAGS)
  addConnectionOptions(cmd)
  cmd.addHelpText('after', `
Examples:
  pipeload import users.csv --key 'user:{id}'
  pipeload import users.ndjson -c 'HSET user:{id} *' -c 'SADD users {id}' --ttl 3600
  pipeload import cities.csv --delimiter ';' -c 'SET city:{id}:name {name}'
  pipeload import wages.csv -c 'HSET w:{$n} age {Age} wage {Hourly Wage ($)}'
  pipeload import countries.ndjson -c 'SADD borders:{cca3} {borders[]}' -c 'SET country:{cca3} {$}'
  pipeload import docs.ndjson --key 'doc:{id}' --vector embedding:f32:384
  zcat big.csv.gz | pipeload import - --format csv --no-header -c 'SET row:{0} {1}'
  pipeload import points.csv --no-header --columns id,lat,lon --key 'point:{id}'
  pipeload import api.json --json-path '$.data.items[*]' --key 'item:{id}'
  pipeload import countries.json -c 'HSET country:{$key} *'   (a document {"AD": {…}, "AE": {…}})
  pipeload import users.csv --key 'user:{id}' --dry-run resp | redis-cli --pipe
  pipeload import jan.csv feb.csv.gz 'events/*.ndjson' --key 'event:{id}'   (one after another)
  pipeload import users.csv --key 'user:{id}' --checkpoint users.ckpt   (then --resume)
  pipeload import https://example.com/data/cities.csv.gz --key 'city:{id}'
  pipeload import cities.csv --map ./big-cities.cjs      (module.exports = (row, ctx) => commands or null)
  pipeload import cities.csv -c 'HSET city:{id} name {name}' -c 'SADD cities:{country} {id}' --replace --ttl 1d --ttl-keys all
  pipeload import big.csv --key 'row:{id}' -b 10k --max-record-size 1MiB --timeout 90s
  parallel -j4 pipeload import big.csv --key 'row:{id}' --shard {}/4 ::: 0 1 2 3
  pipeload import big.csv.gz --key 'row:{id}' --workers 4 -u redis://cluster-node:7000
${TEMPLATE_HELP}${ENV_HELP}${EXIT_HELP}${manualHelp('every option: options.md, templates: templates.md')}`)
  cmd.action(async (inputs, flags) => {
    io.exitCode = await runImport(inputs.length === 1 ? inputs[0] : inputs, flags, io)
  })
  return cmd
}

async function runImport (input, flags, io) {
  refuseRemoved(flags)
  if (flags.json && flags.dryRun) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--json and --dry-run both want stdout: use one of them', { option: '--json' })
  }
  // Before --map is loaded or a --tls-* file read: an output there would destroy it.
  refuseOutputsOverInputs([['--checkpoint', flags.checkpoint], ['--rejects', flags.rejects]].filter(([, f]) => f).map(([option, file]) => ({ option, file })),
    [['--map', 'module', flags.map], ['--tls-ca', 'file', flags.tlsCa], ['--tls-cert', 'file', flags.tlsCert], ['--tls-key', 'file', flags.tlsKey]]
      .filter(([, , f]) => f).map(([flag, noun, file]) => ({ what: `the ${flag} ${noun}`, file })))
  const warn = line => io.stderr.write(line + '\n')
  const progressShown = progressMode(flags, io.stderr.isTTY) // a bad --progress: exit 2 before connecting
  const redraws = progressShown !== null && !progressShown.lines
  const options = {
    ...connectionOptions(flags, io.env, warn),
    input,
    ...plainOptions(flags, ['input', 'command', 'map', 'ttlKeys', 'vector', 'resume', 'shard']),
    commands: flags.command.length ? flags.command : undefined,
    map: flags.map === undefined ? undefined : await mapModule(flags.map),
    vector: flags.vector.length ? flags.vector : undefined,
    ttlKeys: flags.ttl === undefined ? undefined : flags.ttlKeys,
    shard: shardFlag(flags, io.env),
    resume: resumeFlag(flags),
    onResume: flags.quiet ? undefined : e => {
      if (e.range || e.reason) warn(resumeNotice(e))
      if (e.unchecked.length) warn(uncheckedNote(flags.checkpoint, e.unchecked))
    },
    onReconnect: flags.quiet || flags.json ? undefined : e => io.stderr.write(`${redraws ? '\r\x1b[K' : ''}pipeload: ${e.cause.message}; reconnected, re-sent ${count(e.resentBatches, 'unacknowledged batch', 'unacknowledged batches')} (${count(e.resentCommands, 'command')})${e.lostBatches ? ` and ${count(e.lostBatches, 'batch', 'batches')} the old master had acknowledged but the new one lacks` : ''}\n`),
    output: io.stdout,
    signal: io.signal
  }
  if (options.restore) refuseWithRestore(flags, options)
  else if (options.key === undefined && options.commands === undefined && options.map === undefined) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', 'say what to write for each record: --key <template>, -c <command template> or --map <module>', { option: '--key' })
  }
  const progress = progressOutput(progressShown, io.stderr)
  let summary
  try {
    summary = await load({ ...options, ...progress.options })
  } catch (err) {
    // A run stopped early still has a summary: machines get it on stdout as usual.
    if (flags.json && err && err.summary && err.output !== 'stdout') {
      await writeOut(io, JSON.stringify({ ...err.summary, error: { code: err.code, message: err.message, exitCode: err.exitCode } }) + '\n')
      jsonReported.add(err)
    }
    throw err
  } finally {
    progress.end()
  }
  await report(summary, flags, io)
  return summary.errors > 0 ? EXIT.RECORD_ERRORS : EXIT.OK
}

/** --restore writes what each dump line says: the flags that say what to write are refused, by name. */
function refuseWithRestore (flags, options) {
  const given = [['--key', options.key], ['-c', options.commands], ['--map', flags.map], ['--ttl', options.ttl], ['--replace', options.replace],
    ['--vector', options.vector], ['--same-key', options.sameKey], ['--json-path', options.jsonPath], ['--shard', options.shard]]
    .filter(([, v]) => v !== undefined && v !== null && v !== false).map(([flag]) => flag)
  if (given.length === 0) return
  throw new PipeloadError('PIPELOAD_OPTION_INVALID', `--restore writes each key as its dump line says (key, type, value, ttl): it takes no ${given.join(', ')}`, { option: '--restore' })
}

/** How a resumed http(s) input is read, in one line. */
function resumeNotice (e) {
  if (e.range) return `pipeload: resuming ${e.input} at byte ${int(e.range.offset)} (line ${int(e.range.line)}) with a Range request; ${count(e.records, 'record')} already loaded`
  return `pipeload: resuming ${e.input} by reading it again from its start and skipping the ${count(e.records, 'record')} already loaded: ${e.reason}`
}

/** A checkpoint of an older pipeload: what it does not record, so this resume does not check (docs/resume.md). */
function uncheckedNote (file, unchecked) {
  return `pipeload: note: checkpoint ${file} was written by an older pipeload: it does not record the ${unchecked.join(' or the ')} of its run, so this resume cannot check ${unchecked.length > 1 ? 'them' : 'it'}`
}

/** --resume (true) or --resume-if-present ('if-present'); both is a contradiction. */
function resumeFlag (flags) {
  if (flags.resume && flags.resumeIfPresent) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--resume and --resume-if-present: use one of them (--resume fails when there is no checkpoint, --resume-if-present then starts over)', { option: '--resume' })
  }
  return flags.resumeIfPresent ? 'if-present' : flags.resume
}

/** --shard, else PIPELOAD_SHARD (unset or empty: none); a bad value is named as it was given. */
function shardFlag (flags, env) {
  if (flags.shard !== undefined) return parseShard(flags.shard, '--shard')
  const v = env.PIPELOAD_SHARD
  return v === undefined || v === '' ? undefined : parseShard(v, 'PIPELOAD_SHARD')
}

/**
 * --map <module>: its default export (ESM `export default`, CommonJS `module.exports = fn`)
 * or a function exported as `map`. A module that cannot be loaded or exports no function
 * is a usage error (exit 2), named with the path given.
 */
async function mapModule (file) {
  const refuse = why => new PipeloadError('PIPELOAD_OPTION_INVALID', `--map ${file}: ${why}`, { option: '--map' })
  let mod
  try {
    mod = await import(pathToFileURL(path.resolve(file)).href)
  } catch (err) {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(path.resolve(file))) throw refuse('no such file')
    throw refuse(`the module failed to load: ${err && err.message}`)
  }
  const fn = typeof mod.default === 'function' ? mod.default : typeof mod.map === 'function' ? mod.map : null
  if (!fn) throw refuse('the module exports no function: write `export default (record, ctx) => [...]` or `module.exports = (record, ctx) => [...]`')
  registerMapModule(fn, file) // a checkpoint records its path and content hash
  return fn
}

/** Write to stdout and wait for the write: a full disk is PIPELOAD_OUTPUT_FAILED (exit 74). */
function writeOut (io, text) {
  return new Promise((resolve, reject) => io.stdout.write(text, err => err ? reject(outputError(err, 'stdout')) : resolve()))
}

async function report (summary, flags, io) {
  const failures = summary.failures.slice(0, MAX_PRINTED_FAILURES)
  for (const f of failures) io.stderr.write(formatFailure(f) + '\n')
  if (summary.errors > failures.length) io.stderr.write(`… and ${count(summary.errors - failures.length, 'more failed record', 'more failed records')}\n`)
  if (summary.rejects && summary.rejects.records > 0) io.stderr.write(`${count(summary.rejects.records, 'failed record')} written to ${summary.rejects.file}\n`)
  if (flags.json) await writeOut(io, JSON.stringify(summary) + '\n')
  else if (!flags.quiet) io.stderr.write(formatSummary(summary) + '\n')
}

/**
 * Option help as a person reads it: defaults as they are typed (5000, 30s, not "5000"),
 * sizes with units (given as the default's description), no default for a repeatable
 * option that starts empty, choices without JSON quotes.
 */
function optionDescription (option) {
  const extra = []
  if (option.argChoices) extra.push(`choices: ${option.argChoices.join(', ')}`)
  const d = option.defaultValue
  const takesValue = option.required || option.optional
  if (option.defaultValueDescription) extra.push(`default: ${option.defaultValueDescription}`)
  else if (takesValue && (typeof d === 'string' || typeof d === 'number')) extra.push(`default: ${d}`)
  if (!extra.length) return option.description
  return `${option.description} (${extra.join('; ')})`
}

const HELP_SETTINGS = { optionDescription }

/**
 * A fresh program; `io` = { stdout, stderr, env, signal } so tests can run it in-process.
 * `argv`, when given, is the command line it will parse: an import leaves the timing mode's
 * command out (its code, lib/cli/bench.js and lib/bench/, is then never loaded).
 */
function createProgram (io, argv = null) {
  const program = new Command('pipeload')
    .description('Stream CSV, TSV, JSON, NDJSON and Parquet datasets into Redis or Valkey as pipelined commands')
    .usage('<command> [options]')
    .version(version, '-V, --version')
    .helpOption('-h, --help', 'display help')
    .configureHelp(HELP_SETTINGS)
    .configureOutput({
      writeOut: s => io.stdout.write(s),
      writeErr: s => io.stderr.write(s),
      outputError: (s, write) => write(`pipeload: ${usageMessage(s)}\n`)
    })
    .exitOverride()
  program.addHelpText('after', `
Examples:
  pipeload import users.csv --key 'user:{id}'        each row as the hash user:<id>
  pipeload import users.ndjson -c 'SET user:{id}:name {name}' --ttl 3600
  zcat big.csv.gz | pipeload import - --format csv --key 'row:{id}'
  pipeload import users.csv --key 'user:{id}' -h redis.example.com -p 6380 -n 2
  pipeload export dump.ndjson.gz --match 'user:*'    the keys user:* out to gzipped NDJSON
  pipeload bench --rtt 50ms                          what pipelining gains on a 50 ms link
  pipeload import --help                             every import option and the templates

Connection flags are redis-cli's: -u URL, -h host, -p port, -a password, -n db, --tls.
${ENV_HELP}${EXIT_HELP}${manualHelp()}`)
  const settings = program.configureOutput()
  program.addCommand(importCommand(io).exitOverride().configureOutput(settings).configureHelp(HELP_SETTINGS))
  if (argv !== null && argv[0] === 'import') return program
  const { exportCommand } = require('./export')
  program.addCommand(exportCommand(io).addHelpText('after', ENV_HELP + manualHelp('export: export.md')).exitOverride().configureOutput(settings).configureHelp(HELP_SETTINGS))
  // bench's own text (lib/cli/bench.js) says what it writes; the environment is the import's.
  const { benchCommand } = require('./bench')
  program.addCommand(benchCommand(io).addHelpText('after', ENV_HELP + manualHelp('the timing mode: timing.md')).exitOverride().configureOutput(settings).configureHelp(HELP_SETTINGS))
  return program
}

/**
 * redis-cli's -h is the host; a bare -h, with no host after it (last, or followed by
 * another flag: no host starts with "-"), asks for help as it does in most tools. Returns
 * argv with such a -h replaced by --help. Tokens that are the value of another option
 * (`-c -h`) and everything after `--` are left alone.
 */
function bareHelp (argv, program) {
  const out = argv.slice()
  let cmd = null
  for (let i = 0; i < out.length; i++) {
    const a = out[i]
    if (a === '--') break
    if (cmd === null) { // before the command name: the program's own -h, --help handles -h
      cmd = program.commands.find(c => c.name() === a || c.aliases().includes(a)) || null
      if (cmd === null && !a.startsWith('-')) break
      continue
    }
    if (a === '-h') {
      const next = out[i + 1]
      if (next === undefined || next.startsWith('-')) out[i] = '--help'
      else i++ // the host
    } else if (takesValue(cmd, a)) {
      i++
    }
  }
  return out
}

/** Whether `arg` is an option of `cmd` whose value is the next token. */
function takesValue (cmd, arg) {
  if (!arg.startsWith('-') || arg.includes('=')) return false
  const o = cmd.options.find(o => o.long === arg || o.short === arg)
  return Boolean(o && (o.required || o.optional))
}

/** Run the CLI; resolves with the exit code. */
async function run (argv, io) {
  const program = createProgram(io, argv)
  try {
    await program.parseAsync(bareHelp(argv, program), { from: 'user' })
    return io.exitCode ?? EXIT.OK
  } catch (err) {
    const code = failure(err, io)
    if (code !== EXIT.OK && wantsJson(argv, program) && !jsonReported.has(err) && !(err && err.output === 'stdout')) {
      io.stdout.write(JSON.stringify({ error: jsonError(err, code) }) + '\n')
    }
    return code
  }
}

/**
 * Whether the command line asks for --json (a token of its own, not another option's value,
 * before `--`) and not --dry-run: then a failure before any summary (a bad option, no server, no input) is
 * also a JSON object on stdout, { error: { code, message, exitCode } }.
 */
function wantsJson (argv, program) {
  let cmd = null
  let json = false
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') break
    if (cmd === null) {
      cmd = program.commands.find(c => c.name() === a || c.aliases().includes(a)) || null
      continue
    }
    // stdout is --dry-run's (refused with --json): no JSON in the middle of its commands.
    if (a === '--dry-run' || a.startsWith('--dry-run=')) return false
    if (a === '--json') json = true
    if (takesValue(cmd, a)) i++
  }
  return json
}

/** The error as --json prints it: a PipeloadError's code; commander's usage errors are PIPELOAD_OPTION_INVALID. */
function jsonError (err, exitCode) {
  if (err instanceof PipeloadError) return { code: err.code, message: cliMessage(err), exitCode }
  if (err instanceof CommanderError) return { code: 'PIPELOAD_OPTION_INVALID', message: usageMessage(err.message), exitCode }
  return { code: 'PIPELOAD_INTERNAL', message: String(err && err.message ? err.message : err), exitCode }
}

/**
 * A usage error of commander's as pipeload says its own (the caller puts "pipeload: " before
 * it): one line, and an unknown option or command as the library says an unknown option,
 * `unknown option "--bach-size": did you mean "--batch-size"?`, for import, bench and the
 * program alike.
 */
function usageMessage (text) {
  const m = /^error: (unknown (?:option|command)) '([^']*)'\s*(?:\(Did you mean (?:one of )?(.+)\?\))?\s*$/.exec(text)
  if (!m) return text.replace(/^error: /, '').trim().replace(/\s*\n\s*/g, ' ')
  const near = m[3] ? `: did you mean ${m[3].split(', ').map(n => JSON.stringify(n)).join(' or ')}?` : ''
  return `${m[1]} ${JSON.stringify(m[2])}${near}`
}

/**
 * A PipeloadError's message with the option named as it is typed: batchSize -> --batch-size;
 * a template's refusal says it as the command line does (`cliMessage`: --key 'row:{$n}').
 */
function cliMessage (err) {
  if (typeof err.cliMessage === 'string') return err.cliMessage
  return err.code === 'PIPELOAD_OPTION_INVALID' && /^[a-z][a-zA-Z]*$/.test(err.option || '') && err.message.startsWith(err.option + ' ')
    ? flagName(err.option) + err.message.slice(err.option.length)
    : err.message
}

function failure (err, io) {
  if (err instanceof CommanderError) {
    return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE
  }
  if (err instanceof PipeloadError) {
    if (err.code === 'PIPELOAD_OUTPUT_CLOSED') return EXIT.OK
    io.stderr.write(`pipeload: ${cliMessage(err)}\n`)
    // A checkpoint beyond the input: its counts are not this run's, and nothing was sent.
    if (err.code === 'PIPELOAD_CHECKPOINT_INVALID') return err.exitCode
    if (err.summary && err.summary.records > 0) {
      const s = err.summary
      if (err.code === 'PIPELOAD_RECORD_FAILED') {
        // The stopping failure is the message. How many records of the batches already in
        // flight failed as well depends on timing, so they are counted, not listed: the
        // same lines whatever arrived first (each is in --json's failures and --rejects).
        const n = err.alsoFailed || 0
        if (n > 0) io.stderr.write(`pipeload: and ${count(n, 'more record', 'more records')} in the batches already sent failed too\n`)
      } else {
        const others = (s.failures || []).filter(f => formatFailure(f) !== formatFailure(err.failure || err)).slice(0, MAX_PRINTED_FAILURES)
        for (const f of others) io.stderr.write(formatFailure(f) + '\n')
      }
      io.stderr.write(formatSummary(s) + '\n')
      // A dry run acknowledges nothing: its records were written to stdout.
      io.stderr.write(`pipeload: stopped after ${count(s.records, 'record')}: ${int(s.loaded)} ${s.dryRun ? 'written' : 'loaded and acknowledged'}, ${int(s.errors)} failed\n`)
      if (s.checkpoint && err.output !== 'checkpoint') io.stderr.write(`pipeload: the checkpoint ${s.checkpoint} is up to date: run the same command with --resume to continue\n`)
    }
    if (err.summary && err.summary.stoppedAt) {
      const at = err.summary.stoppedAt
      io.stderr.write(`pipeload: nothing from ${where(at.file, at.line)}${at.offset != null ? ` (byte ${at.offset})` : ''} on was ${err.summary.dryRun ? 'written' : 'sent'}\n`)
    }
    if (err.summary && err.summary.rejects) io.stderr.write(`pipeload: ${count(err.summary.rejects.records, 'failed record')} written to ${err.summary.rejects.file}\n`)
    return err.exitCode
  }
  io.stderr.write(`pipeload: internal error, please report it:\n${err && err.stack ? err.stack : err}\n`)
  return EXIT.INTERNAL
}

module.exports = { createProgram, run, connectionOptions, addConnectionOptions, PASSWORD_WARNING }
