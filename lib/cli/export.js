'use strict'

const { Command, Option } = require('commander')
const { PipeloadError, EXIT } = require('../errors')
const { OPTIONS } = require('../run/option-table')
const { EXPORT_DEFAULTS, typesOf, formatTypes, fieldsOf } = require('../export/options')
const { parseSize } = require('../run/option-values')
const { FORMAT_NAMES } = require('../export/formats')
const { addConnectionOptions, connectionOptions, intFlag } = require('./connection-flags')
const { addFlags } = require('./table-flags')
const { durationFlag } = require('./duration-flag')
const { progressMode, progressOutput } = require('./progress')

// `pipeload export`: argv -> exportKeys() options -> the summary and an exit code.

/** import's --json, -q/--quiet and --progress/--no-progress, from the option table. */
const REPORT_FLAGS = OPTIONS.filter(e => ['--json', '-q, --quiet'].includes(e.flag) || (e.flag && e.flag.startsWith('--progress ')))
/** import's --retry-timeout (how long a lost connection is tried again) and --timeout, said as export reads. */
const RETRY_FLAGS = OPTIONS.filter(e => e.name === 'retryTimeout' || e.name === 'timeout')
  .map(e => e.name === 'timeout' ? { ...e, help: 'no reply for this long while replies are due (a frozen server): connect again and read on: 90s, 500ms, 2m, 1h (a unit is required)' } : e)

/** The `export` subcommand; `io` = { stdout, stderr, env, signal } as for import. */
function exportCommand (io) {
  const cmd = new Command('export')
    .description('write the keys of a server (every master of a cluster) to a file: NDJSON (every type, every byte, with TTLs), CSV (hashes) or Parquet (hashes and strings)')
    .argument('<output>', 'the file to write (.gz: gzipped), or - for stdout')
    .helpOption('--help', 'display help for export (so does -h without a host)')
    .option('--match <glob>', "export the keys that match this pattern only (SCAN's MATCH), e.g. 'user:*'")
    .option('--type <types>', 'export the keys of these types only, comma-separated: string,hash,list,set,zset,stream (default: every type; csv: hash; parquet: hash,string)')
    .addOption(new Option('--format <format>', 'output format').choices(FORMAT_NAMES).default(EXPORT_DEFAULTS.format))
    .option('--fields <names>', 'csv, parquet: the hash fields to write, comma-separated, as columns in this order (default: the fields of the first --sample keys)')
    .option('--sample <n>', 'csv, parquet without --fields: the columns are the fields of the first n keys (default: 100)')
    .option('--max-record-size <size>', 'csv, parquet: bytes one hash may hold, a big one joined into one row in memory: bytes, or with a unit (KiB, MiB, GiB) (default: 64 MiB)')
    .option('--row-group-size <rows>', 'parquet: rows per row group at most (default: 10000; a row group also ends at 8 MiB)')
    .option('--batch-size <n>', 'keys read per round trip', String(EXPORT_DEFAULTS.batchSize))
    .option('-w, --window <n>', 'batches awaiting replies at most, per master', String(EXPORT_DEFAULTS.window))
    .option('--page-size <n>', 'elements per page of a big key (a line of its own, "part": n)', String(EXPORT_DEFAULTS.pageSize))
    .option('--scan-count <n>', "SCAN's COUNT: keys asked for per SCAN", String(EXPORT_DEFAULTS.scanCount))
    .option('--checkpoint <file>', "keep each master's SCAN cursor and the output's length written in <file> (an .ndjson or .ndjson.gz output)")
    .option('--resume', 'go on from the --checkpoint: cut the output back to its length and SCAN on from its cursors')
  addFlags(cmd, REPORT_FLAGS)
  addFlags(cmd, RETRY_FLAGS)
  addConnectionOptions(cmd)
  cmd.addHelpText('after', `
Examples:
  pipeload export dump.ndjson                        every key of 127.0.0.1:6379, db 0
  pipeload export users.ndjson.gz --match 'user:*' -u redis://cache:6379/2
  pipeload export - --type hash,string | gzip > dump.ndjson.gz
  pipeload export dump.ndjson -u redis://node-1:7000  every master of the cluster, side by side
  pipeload export users.csv --format csv --match 'user:*' --fields name,email,age
  pipeload export dump.parquet --format parquet       every hash and string, one row per key
  pipeload export dump.ndjson --checkpoint dump.ckpt  and after a crash or Ctrl-C, the same with --resume

Keys are found with SCAN: a key there for the whole export is written at least once; a key
written or deleted meanwhile may or may not be. A key bigger than --page-size elements is
written as several lines ("part": 2, 3, …); in CSV and Parquet, one row. Formats: docs/export.md.

Exit codes:
  0        every key exported (keys deleted meanwhile are skipped and counted)
  2        bad usage: an unknown option, an invalid value, a --type the format cannot hold,
           a --resume from a checkpoint that is not this export's
  3        a key the format cannot hold (csv, parquet): a hash with a field not among the
           columns, bytes that are not UTF-8, a hash over --max-record-size
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
  if (flags.resume && flags.checkpoint === undefined) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--resume needs --checkpoint <file>: the checkpoint to resume from', { option: '--resume' })
  }
  const warn = line => io.stderr.write(line + '\n')
  const progressShown = progressMode(flags, io.stderr.isTTY)
  const options = {
    ...connectionOptions(flags, io.env, warn),
    output: output === '-' ? io.stdout : output,
    format: flags.format,
    match: flags.match,
    types: formatTypes(flags.format, typesOf(flags.type, '--type'), '--type'),
    ...tableOptions(flags),
    batchSize: intFlag('--batch-size', flags.batchSize),
    window: intFlag('--window', flags.window),
    pageSize: intFlag('--page-size', flags.pageSize),
    scanCount: intFlag('--scan-count', flags.scanCount),
    ...(flags.checkpoint !== undefined ? { checkpoint: flags.checkpoint } : {}),
    ...(flags.resume ? { resume: true } : {}),
    ...(flags.retryTimeout === undefined ? {} : { retryTimeout: durationFlag(flags.retryTimeout, '--retry-timeout') }),
    ...(flags.timeout === undefined ? {} : { timeout: durationFlag(flags.timeout, '--timeout') }),
    signal: io.signal
  }
  if (flags.format !== 'ndjson') require('./heap-growth').limitHeapGrowth()
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

/** --fields, --sample, --max-record-size, --row-group-size as exportKeys() takes them (the flags given only). */
function tableOptions (flags) {
  const o = {}
  if (flags.fields !== undefined) o.fields = fieldsOf(flags.fields, '--fields')
  if (flags.sample !== undefined) o.sample = intFlag('--sample', flags.sample)
  if (flags.maxRecordSize !== undefined) o.maxRecordSize = parseSize(flags.maxRecordSize, '--max-record-size')
  if (flags.rowGroupSize !== undefined) o.rowGroupSize = intFlag('--row-group-size', flags.rowGroupSize)
  return o
}

module.exports = { exportCommand }
