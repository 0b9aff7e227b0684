'use strict'

const { Command, Option } = require('commander')
const { PipeloadError, EXIT } = require('../errors')
const { OPTIONS } = require('../run/option-table')
const { EXPORT_DEFAULTS, typesOf } = require('../export/options')
const { FORMAT_NAMES } = require('../export/formats')
const { addConnectionOptions, connectionOptions, intFlag } = require('./connection-flags')
const { addFlags } = require('./table-flags')
const { durationFlag } = require('./duration-flag')
const { progressMode, progressOutput } = require('./progress')

// `pipeload export`: argv -> exportKeys() options -> the summary and an exit code.

/** import's --json, -q/--quiet and --progress/--no-progress, from the option table. */
const REPORT_FLAGS = OPTIONS.filter(e => ['--json', '-q, --quiet'].includes(e.flag) || (e.flag && e.flag.startsWith('--progress ')))
/** import's --retry-timeout: how long a lost connection is tried again. */
const RETRY_FLAGS = OPTIONS.filter(e => e.name === 'retryTimeout')

/** The `export` subcommand; `io` = { stdout, stderr, env, signal } as for import. */
function exportCommand (io) {
  const cmd = new Command('export')
    .description('write the keys of a server (every master of a cluster) to a file: NDJSON, every type, every byte, with TTLs')
    .argument('<output>', 'the file to write (.gz: gzipped), or - for stdout')
    .helpOption('--help', 'display help for export (so does -h without a host)')
    .option('--match <glob>', "export the keys that match this pattern only (SCAN's MATCH), e.g. 'user:*'")
    .option('--type <types>', 'export the keys of these types only, comma-separated: string,hash,list,set,zset,stream')
    .addOption(new Option('--format <format>', 'output format').choices(FORMAT_NAMES).default(EXPORT_DEFAULTS.format))
    .option('--batch-size <n>', 'keys read per round trip', String(EXPORT_DEFAULTS.batchSize))
    .option('-w, --window <n>', 'batches awaiting replies at most, per master', String(EXPORT_DEFAULTS.window))
    .option('--page-size <n>', 'elements per page of a big key (a line of its own, "part": n)', String(EXPORT_DEFAULTS.pageSize))
    .option('--scan-count <n>', "SCAN's COUNT: keys asked for per SCAN", String(EXPORT_DEFAULTS.scanCount))
  addFlags(cmd, REPORT_FLAGS)
  addFlags(cmd, RETRY_FLAGS)
  addConnectionOptions(cmd)
  cmd.addHelpText('after', `
Examples:
  pipeload export dump.ndjson                        every key of 127.0.0.1:6379, db 0
  pipeload export users.ndjson.gz --match 'user:*' -u redis://cache:6379/2
  pipeload export - --type hash,string | gzip > dump.ndjson.gz
  pipeload export dump.ndjson -u redis://node-1:7000  every master of the cluster, side by side

Keys are found with SCAN: a key there for the whole export is written at least once; a key
written or deleted meanwhile may or may not be. A key bigger than --page-size elements is
written as several lines ("part": 2, 3, …). Format: docs/export.md.

Exit codes:
  0        every key exported (keys deleted meanwhile are skipped and counted)
  2        bad usage: an unknown option, an invalid value
  4        no connection: unreachable, timed out, authentication failed, connection lost
           past --retry-timeout; a right missing (ACL DRYRUN, NOPERM); a read answered
           with another error
  74       the output could not be written
  70       an internal error (a bug: please report it with the printed stack)
  130/143  interrupted by Ctrl-C / SIGTERM`)
  cmd.action(async (output, flags) => {
    io.exitCode = await runExport(output, flags, io)
  })
  return cmd
}

async function runExport (output, flags, io) {
  if (flags.json && output === '-') {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--json and the output - both want stdout: write the export to a file, or drop --json', { option: '--json' })
  }
  const warn = line => io.stderr.write(line + '\n')
  const progressShown = progressMode(flags, io.stderr.isTTY)
  const options = {
    ...connectionOptions(flags, io.env, warn),
    output: output === '-' ? io.stdout : output,
    format: flags.format,
    match: flags.match,
    types: typesOf(flags.type, '--type'),
    batchSize: intFlag('--batch-size', flags.batchSize),
    window: intFlag('--window', flags.window),
    pageSize: intFlag('--page-size', flags.pageSize),
    scanCount: intFlag('--scan-count', flags.scanCount),
    ...(flags.retryTimeout === undefined ? {} : { retryTimeout: durationFlag(flags.retryTimeout, '--retry-timeout') }),
    signal: io.signal
  }
  const { exportKeys } = require('../export/export')
  const { formatExportProgress, formatExportSummary } = require('../export/report')
  const progress = progressOutput(progressShown, io.stderr, formatExportProgress)
  let summary
  try {
    summary = await exportKeys({ ...options, ...progress.options })
  } finally {
    progress.end()
  }
  if (output === '-') summary.output = 'stdout'
  if (flags.json) io.stdout.write(JSON.stringify(summary) + '\n')
  else if (!flags.quiet) io.stderr.write(formatExportSummary(summary) + '\n')
  return EXIT.OK
}

module.exports = { exportCommand }
