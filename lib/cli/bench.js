'use strict'

const { Command, Option } = require('commander')
const { PipeloadError, EXIT } = require('../errors')
const { BENCH_DEFAULTS, WORKLOADS } = require('../bench/options')
const { addConnectionOptions, connectionOptions } = require('./connection-flags')
const { addFlags } = require('./table-flags')
const { durationFlag } = require('./duration-flag')

// `pipeload bench`: argv -> bench() options -> a table (or JSON / CSV / Markdown).

/** The `bench` subcommand; `io` = { stdout, stderr, env, signal } as for import. */
function benchCommand (io) {
  const cmd = new Command('bench')
    .description('time the same work sent one command at a time and at several batch sizes, on your server and link')
    .argument('[file]', 'time the real import of this file instead of a synthetic workload (with --key or -c)')
    .helpOption('--help', 'display help for bench')
    .addOption(new Option('--workload <name>', 'synthetic workload').choices(WORKLOADS).default(BENCH_DEFAULTS.workload))
    .option('--count <n>', `commands per row (synthetic workloads; default ${BENCH_DEFAULTS.count}, grown to 10 x window x the largest batch size, at most 1000000)`)
    .option('--batch-sizes <list>', 'comma-separated batch sizes', BENCH_DEFAULTS.batchSizes.join(','))
    .option('--connections <list>', 'connections per server (per master), comma-separated counts or auto, e.g. 1,2,4: the batch sizes run over the first; with two or more, a second table times each at the picked batch size')
  addFlags(cmd, ['window'])
  cmd
    .option('--repeat <n>', 'run every row n times; report the median and the spread', String(BENCH_DEFAULTS.repeat))
    .option('--no-baseline', 'skip the "in a row" row (one command per round trip; up to --max-row-time long)')
    .option('--rtt <duration>', 'simulate a link with this round-trip time through a delay proxy on loopback, e.g. 50ms')
    .option('--jitter <duration>', 'with --rtt: vary each round trip by up to ± this much')
    .option('--max-row-time <duration>', 'stop sending in a row after this long (0: never); ops/s is over what was sent', `${BENCH_DEFAULTS.maxRowTimeMs / 1000}s`)
  // The import's flags a file is timed with, help lines and all (marked "file:").
  addFlags(cmd, ['key', 'command', 'sameKey', 'ttl', 'format', 'header', 'delimiter', 'jsonPath', 'maxRecordSize'], 'file: ')
  cmd
    .addOption(new Option('--json', 'print the result as JSON on stdout').conflicts(['csv', 'markdown']))
    .addOption(new Option('--csv', 'print one CSV line per row on stdout').conflicts(['markdown']))
    .option('--markdown', 'print a Markdown table on stdout')
    .option('-q, --quiet', 'no progress on stderr')
  addConnectionOptions(cmd)
  cmd.addHelpText('after', `
Safety: bench writes only keys under its own prefix pipeload:bench:<random>: (in the
database of --db / the URL) and deletes each row's keys once the row is checked, also
after an error or Ctrl-C: by name (UNLINK), a file's row by SCAN MATCH of its prefix. It
never runs FLUSHDB or FLUSHALL. With a file, each template's key (its first argument) gets
the prefix; commands with other keys (MSET, RENAME, …) are refused.

Rows: "in a row" sends one command and awaits its reply before the next (--no-baseline
skips it); then one row per batch size with --window batches in flight. Batch sizes above
--count are skipped but the smallest of them (they all send the same single batch). A row
whose batches all fit in the window at once (count <= window x batch size) times one round
trip, not a rate: it is marked †; one of fewer than 10 round trips is marked ‡; neither is
ranked ("fastest", the pick); use a larger --count. A row that cannot finish under
--max-row-time even at the PING round trip is run last, and skipped (§) once a row has
finished: it would be slower. A batch size is recommended only when two or more were
ranked. --connections 1,2,4: the batch-size rows run over the fewest, then one row per
count at the recommended batch size (else the fastest) recommends a --connections. "how sure" gives each row's 95% margin; one run names no winner: --repeat 3 to
know. Rows under 100 ms are noisy: --repeat 5 shows the spread. A file row shows records
(rows/s, as import counts them) next to commands (ops/s). Server reply memory comes from
CLIENT LIST (on a cluster, of every master; n/a when the user may not run it). On a
terminal, stderr shows each row's progress.

Examples:
  pipeload bench
  pipeload bench --workload set --count 1000000 --batch-sizes 100,1000,10000
  pipeload bench users.csv --key 'user:{id}'
  pipeload bench --rtt 250ms --count 2000
  pipeload bench --workload hset --connections 1,2,4
  pipeload bench --rtt 50ms --count 1000000 --no-baseline --repeat 3
  pipeload bench --json > timing.json`)
  cmd.action(async (file, flags) => {
    const fromCli = name => cmd.getOptionValueSource(name) === 'cli'
    io.exitCode = await runBench(file, flags, io, fromCli)
  })
  return cmd
}

/** Time the workload or `file` as the flags ask; the exit code. `fromCli(name)`: whether a flag was given. */
async function runBench (file, flags, io, fromCli) {
  // The timing mode's modules are loaded when it runs, not by every command's start-up.
  const { bench } = require('../bench')
  const { formatTable, formatChart, formatCsv, formatMarkdown, formatProgress } = require('../bench/format')
  const warn = line => io.stderr.write(line + '\n')
  const options = {
    ...connectionOptions(flags, io.env, warn),
    batchSizes: flags.batchSizes,
    connections: flags.connections,
    window: flags.window,
    repeat: flags.repeat,
    baseline: flags.baseline,
    rtt: durationFlag(flags.rtt, '--rtt'),
    jitter: durationFlag(flags.jitter, '--jitter'),
    maxRowTime: durationFlag(flags.maxRowTime, '--max-row-time'),
    signal: io.signal
  }
  if (file !== undefined) {
    if (fromCli('workload') || fromCli('count')) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--workload and --count are for synthetic workloads: a file is timed whole', { option: '--workload' })
    }
    Object.assign(options, {
      input: file,
      key: flags.key,
      commands: flags.command.length ? flags.command : undefined,
      sameKey: flags.sameKey,
      ttl: flags.ttl,
      format: flags.format,
      header: flags.header,
      delimiter: flags.delimiter,
      jsonPath: flags.jsonPath,
      maxRecordSize: flags.maxRecordSize
    })
  } else {
    if (flags.key !== undefined || flags.command.length) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', '--key and -c need a file to read records from: pipeload bench <file> --key …', { option: '--key' })
    }
    Object.assign(options, { workload: flags.workload, count: fromCli('count') ? flags.count : undefined })
  }
  const machine = flags.json || flags.csv || flags.markdown
  const showProgress = !flags.quiet && io.stderr.isTTY
  if (showProgress) {
    // Redrawn in place, as the import's progress line is.
    options.onProgress = p => io.stderr.write('\r\x1b[K' + formatProgress(p))
  }
  let res
  try {
    res = await bench(options)
  } finally {
    if (showProgress) io.stderr.write('\r\x1b[K')
  }
  if (flags.json) io.stdout.write(JSON.stringify(res) + '\n')
  else if (flags.csv) io.stdout.write(formatCsv(res))
  else if (flags.markdown) io.stdout.write(formatMarkdown(res))
  if (!machine) io.stdout.write(formatTable(res) + '\n' + formatChart(res))
  return res.rows.every(r => r.correct) ? EXIT.OK : EXIT.RECORD_ERRORS
}

module.exports = { benchCommand }
