import type { Readable } from 'node:stream'
import type { Redis, Cluster } from 'ioredis'

/**
 * One Redis command as its arguments, e.g. `['SET', 'k:1', 'v']`. Binary values (a Buffer, any typed array or DataView, an
 * ArrayBuffer or SharedArrayBuffer) go out as their bytes, unchanged; strings as UTF-8 (a
 * string with a lone surrogate fails its record rather than become U+FFFD).
 */
export type CommandArgs = Array<string | number | bigint | boolean | JsonNumber | Buffer | ArrayBufferView | ArrayBufferLike>

export type Format = 'csv' | 'tsv' | 'json' | 'ndjson' | 'parquet'

/** The units a duration string takes. */
export type DurationUnit = 'us' | 'µs' | 'μs' | 'ms' | 's' | 'm' | 'h' | 'd'
/**
 * A duration: a number of milliseconds, or a string with its unit ("250ms", "1.5s", "2m").
 * A string without a unit ("30", as an environment variable gives it) is refused with
 * PIPELOAD_OPTION_INVALID, but "0".
 */
export type Duration = number | '0' | `${number}${DurationUnit}`

/** TLS settings (the usual subset of Node's `tls.connect` options). */
export interface TlsOptions {
  ca?: string | Buffer | Array<string | Buffer>
  cert?: string | Buffer | Array<string | Buffer>
  key?: string | Buffer | Array<string | Buffer>
  /** The name the server certificate must carry, also sent as SNI. Default: the host. */
  servername?: string
  /** false: do not verify the server certificate. Default true. */
  rejectUnauthorized?: boolean
  [option: string]: unknown
}

export interface ConnectionOptions {
  /**
   * `redis://[user:password@]host:port[/db]`, `rediss://…` for TLS, or
   * `redis-sentinel://[[user]:password@]host:port[,host:port…]/master-name[/db]`.
   */
  url?: string
  host?: string
  port?: number
  username?: string
  password?: string
  db?: number
  /**
   * TLS for both connections: `true`, or options for `tls.connect` (as ioredis takes them):
   * `ca`, `cert`, `key` are PEM contents; `rejectUnauthorized: false` skips verification.
   */
  tls?: true | TlsOptions
  /** Redis Sentinel: the sentinels to ask where the master `masterName` is. */
  sentinels?: Array<{ host: string, port?: number } | string>
  /** The master's name in the sentinels' configuration (with `sentinels`). */
  masterName?: string
  /** Credentials of the sentinels themselves, when they want any. */
  sentinelUsername?: string
  sentinelPassword?: string
  /** An ioredis client (or `Cluster`) to take the connection settings from; pipeload does not close it. */
  redis?: Redis | Cluster
  /**
   * Each step of setting up a connection (TCP, TLS, AUTH, SELECT, CLIENT SETNAME, INFO
   * cluster, CLUSTER SLOTS, the Sentinel lookup) must finish within this, or the run
   * rejects with PIPELOAD_TIMEOUT naming the server and the step. A number is milliseconds;
   * or a string with a unit, "5s" (a string without one is refused, but "0"). At most 2^31-1 ms. Default 10 s.
   */
  connectTimeout?: Duration
  /**
   * No reply for this long while replies are due: the connection counts as lost (it is
   * re-established and unacknowledged batches re-sent). A number is milliseconds; or "30s".
   * 0: never. At most 2^31-1 ms. Default 30 s.
   */
  timeout?: Duration
  /**
   * How long to keep reconnecting after the last reply; a refused password is not retried.
   * A number is milliseconds; or "60s". At most 2^31-1 ms. Default 60 s.
   */
  retryTimeout?: Duration
  /** Called each time a lost connection has been re-established and batches re-sent. */
  /** `lostBatches` (with Sentinel): batches the old master had acknowledged that the new master lacks whole, sent again; not in `resentBatches`/`resentCommands`, as they cannot run twice (docs/sentinel.md). */
  onReconnect?: (event: { cause: Error, resentBatches: number, resentCommands: number, target: string, lostBatches?: number }) => void
}

export interface Progress {
  records: number
  commands: number
  errors: number
  bytesRead: number
  /** Size of the input file, null for streams and iterables; of several inputs, the sizes added up (null while one is not known). */
  totalBytes: number | null
  elapsedMs: number
  /** The time left: the bytes still to read at the pace read so far (of a resumed run, since its first batch); null when `totalBytes` is, or before anything was measured. */
  etaMs: number | null
  recordsPerSec: number
}

/** A record that failed: an input problem or an error reply from the server. */
export interface Failure {
  file: string
  /** Line where the record starts (record number for iterables). */
  line: number
  /** Byte offset where the record starts in the (decompressed) input; absent for iterables. */
  offset?: number
  /** The record's element number (from 0) in a JSON document whose records share a line. */
  element?: number
  /** A Parquet row's row group (from 0); `line` is then the row's number in its file (from 1). */
  rowGroup?: number
  /** `PIPELOAD_FIELD_MISSING`, `PIPELOAD_INPUT_INVALID`, … or the error reply's prefix such as `WRONGTYPE`. */
  code: string
  message: string
  source: 'input' | 'reply'
}

/** Where the first record not sent starts, when a run stopped early. */
export interface Position {
  file: string
  line: number | null
  offset: number | null
}

/** map()'s second argument: where the record came from. */
export interface MapContext {
  /** The record's number, 1-based over the whole run (a resumed run goes on from the checkpoint). With `shard`, reading it throws: a shard does not know it. */
  n: number
  /** Its input line (an iterable's record: its number). */
  line: number | null
  /** The input's name. */
  file: string
}

export interface LoadOptions extends ConnectionOptions {
  /**
   * A file path, a pattern (`'parts/*.csv'`), an `http://`/`https://` URL (streamed; a Parquet one
   * read by Range requests), `'-'` for stdin,
   * a list of these (loaded one after another), a byte stream, or an (async) iterable of records.
   * An array whose every element is a string is a list of inputs; any other array is records
   * (pass string records as an iterable that is no array: `lines.values()`).
   */
  input: string | string[] | Readable | Iterable<unknown> | AsyncIterable<unknown>
  /** Required for streams (not Parquet, which cannot be read from one); taken from the file extension otherwise. */
  format?: Format
  /** Name used in messages for streams and iterables (of several inputs, for `'-'` only). */
  name?: string
  /** CSV/TSV has a header row. Default true. */
  header?: boolean
  /**
   * CSV/TSV column names (CLI `--columns a,b,c`): name a headerless input's columns (`header: false`),
   * or rename the header's (as many names as it has columns). Distinct, non-empty.
   */
  columns?: string[] | string
  delimiter?: string
  /**
   * CSV/TSV: a quote inside an unquoted field (`5'10"`) is data, as csv-parse's `relax_quotes`
   * and Python's csv module read it (CLI `--relax-quotes`); text after a closing quote is kept
   * as written. Default false: such a quote fails its record (`PIPELOAD_INPUT_INVALID`).
   */
  relaxQuotes?: boolean
  /**
   * JSON: where the records are, an array or an object keyed by id (its keys are `{$key}`):
   * `'data.items'`, or as JSONPath writes it, `'$.data.items'`, `'data.items[*]'`; `'$'` for the top level.
   * A path not in the document is a `PIPELOAD_INPUT_INVALID` of the whole input.
   */
  jsonPath?: string
  /** Shorthand for the command `HSET <key> *`. */
  key?: string
  /**
   * Command template(s): `{field}`, `{a.b}`, `{0}`, `*` = all field/value pairs in input order.
   * Fields are a record's own properties (array elements for arrays), never inherited ones.
   */
  command?: string | string[]
  commands?: string[]
  /**
   * Instead of templates: the commands to send for one record; `[]` sends none (the record counts as loaded);
   * `null` skips the record (counted in `summary.skipped`, neither loaded nor failed). A throw fails the record.
   * A CSV/TSV row is an object of column → text (an array of texts with `header: false`).
   */
  map?: (record: any, ctx: MapContext) => CommandArgs[] | null
  /**
   * true: templates whose keys name no field are meant (a counter `INCR total`, one list
   * `RPUSH ids {id}`). Without it, templates none of whose keys names a field ({id}, {$n}, …)
   * are refused with `PIPELOAD_TEMPLATE_INVALID`, as every record would write the same key. Default false.
   */
  sameKey?: boolean
  /** Seconds, or a duration such as "90s", "1h", "7d": adds `EXPIRE <key of the first command> <ttl>` per record. */
  ttl?: number | string
  /**
   * Which keys `ttl` expires: 'first' (default) = the first command's key; 'all' = every key each
   * command of the record writes (positions from @ioredis/commands; a module command's first argument).
   */
  ttlKeys?: 'first' | 'all'
  /** DEL each record's first key (the first command's key) before its commands. Default false. */
  replace?: boolean
  /**
   * The input is a dump of `pipeload export` (NDJSON, docs/export.md): each key re-created with
   * its type, value and ttl, replacing what is there; repeatable and resumable (a list or stream
   * of several parts is not written twice). Not with key, command(s), map, ttl, replace, vector,
   * sameKey, jsonPath or shard; an input of bytes must be NDJSON. Default false.
   */
  restore?: boolean
  /** Fields `*` writes as little-endian float bytes: "embedding:f32", "embedding:f64:768" (length checked), or a list. */
  vector?: string | string[]
  /** Commands per pipelined batch (or a count such as "5k"). Default 5000. */
  batchSize?: number | string
  /** Batches awaiting replies at most. Default 4. */
  window?: number | string
  /**
   * Connections per server (per master of a cluster), from 1 to 64, each with its own
   * `window`: connection i owns the hash slots s with s % n = i, so commands on one key keep
   * their order; batches are acknowledged in input order across them. 'auto': 1 where the
   * server has no I/O threads (or CONFIG GET io-threads is refused), else one per I/O thread,
   * at most 4; with Sentinel 1 (a number > 1 is refused there). Default 1.
   */
  connections?: number | string | 'auto'
  /** Close a batch early once it holds this many bytes (or a size such as "8MiB"). Default 8 MiB. */
  maxBatchBytes?: number | string
  /** Refuse records larger than this many bytes (or a size such as "64MiB", "512KiB"). Default 64 MiB. */
  maxRecordSize?: number | string
  /**
   * Load only shard `index` of `count` (0 ≤ index < count) of the input: `count` processes,
   * anywhere, with shards 0 … count - 1 load every record once. A plain file is split by
   * byte ranges at record boundaries, stdin/gzip/URLs by ~1 MiB chunk numbers; a JSON
   * document, an iterable and `{$n}` are refused. `'0/1'` is no shard. The CLI also reads
   * `PIPELOAD_SHARD`; load() does not.
   */
  shard?: `${number}/${number}` | { index: number, count: number }
  /**
   * Threads that parse and encode files and byte streams: 0 = the main thread;
   * 1 = one worker thread; n ≥ 2 = the input is cut into chunks at record boundaries,
   * parsed and encoded by n threads, and sent in input order (the same bytes, failures and
   * checkpoints as with 0). JSON documents use one worker; `map` and iterables the main
   * thread. 'auto' (default): 0 on 2 cores or fewer, for one server and for a cluster of
   * one master; for a cluster of several masters or a dry run, one per core but one, at
   * most 4 (it connects before reading, to know the target). A whole number from 0 to 256,
   * or 'auto'.
   */
  workers?: number | 'auto'
  /** With workers ≥ 2: bytes per chunk, or a size such as "1MiB" (a tuning knob). Default 256 KiB. */
  chunkSize?: number | string
  /**
   * Redis Cluster mode: each command goes to the master owning its hash slot. `true`: the
   * server must be a cluster node; `false`: never; unset: asked with `INFO cluster`. Also on
   * when `redis` is an ioredis `Cluster`.
   */
  cluster?: boolean
  /** Write the commands to `output` instead of sending them. */
  dryRun?: 'resp' | 'text'
  /** Where dry-run output goes. Default process.stdout. */
  output?: NodeJS.WritableStream
  /** Called every `progressInterval` ms, also while the run waits for input or replies, and once more at the end. */
  onProgress?: (progress: Progress) => void
  /** Called for every failed record (the summary keeps the first 100). */
  onFailure?: (failure: Failure) => void
  /** Milliseconds between onProgress calls. Default 250. */
  progressInterval?: number
  /**
   * Stops reading; in-flight replies are awaited (at most 1 s without a reply, no reconnect);
   * load() rejects with PIPELOAD_ABORTED. During connection setup it ends the step at once;
   * an already-aborted signal opens no connection.
   */
  signal?: AbortSignal
  /**
   * 'abort' (default): the first failed record (bad row, missing field, error reply) stops the
   * run and load() rejects (PIPELOAD_RECORD_FAILED, or the input error). 'skip': report it and go on.
   */
  onError?: 'abort' | 'skip'
  /** With onError 'skip': stop (PIPELOAD_TOO_MANY_ERRORS) once more than this many records failed. */
  maxErrors?: number | string
  /**
   * A file to write every failed record to, one JSON line `{ file, line, offset, code, reason, source, raw }` each.
   * With `checkpoint` and `resume`, the file of the run being resumed is cut back to the checkpoint and appended to.
   * A path that is an input is PIPELOAD_OPTION_INVALID, before anything is opened.
   */
  rejects?: string
  /** Failures kept in `summary.failures` (all are counted). Default 100. */
  maxFailures?: number
  /**
   * A file that keeps how far the input is loaded and acknowledged, replaced atomically. Checked
   * before anything is sent: a path that cannot be written, or that is an input or `rejects`, is PIPELOAD_OPTION_INVALID.
   */
  checkpoint?: string
  /**
   * Continue from `checkpoint`: skip the records it counts as loaded. An http(s) input is
   * asked only for the bytes after them (a Range request) when its server accepts that.
   * `true`: no checkpoint at the path is PIPELOAD_CHECKPOINT_NOT_FOUND; `'if-present'`: then
   * start from the first record (`summary.resumed` says which). Without it, a checkpoint of an
   * unfinished run at the path is PIPELOAD_CHECKPOINT_UNFINISHED (a finished run's is replaced).
   * A checkpoint written for another input, target or commands is PIPELOAD_CHECKPOINT_INVALID.
   */
  resume?: boolean | 'if-present'
  /**
   * Called once before a resumed run reads: `range` when an http(s) input is read from that
   * byte and line; else `reason` says why it is read again from its start (null for a file).
   * `unchecked`: what the checkpoint does not record, so the resume could not check it:
   * 'target', 'commands' (a checkpoint of an older pipeload); [] otherwise.
   */
  onResume?: (event: { input: string, records: number, range: { offset: number, line: number } | null, reason: string | null, unchecked: Array<'target' | 'commands'> }) => void
}

/** One input of a run: its counts (every batch belongs to one input). */
export interface FileSummary {
  input: string
  /** Whether this run or one it resumes began reading it: false for an input the run stopped before. */
  started: boolean
  records: number
  loaded: number
  errors: number
  skipped: number
  /**
   * Present only when the input's n parse workers (`workers` ≥ 2) handed over to one thread:
   * `from` the workers it had, `line` and `offset` where this thread read on, `reason` why
   * (the bad record's message, `file:line: …`, or what could not be cut).
   */
  fallback?: { from: number, line: number, offset: number, reason: string }
}

export interface Summary {
  /** The input's name; of several, the inputs as given, joined with ', '. */
  input: string
  /** With `shard`: which one, `"i/n"`; else null. */
  shard: string | null
  /** `host:port` written to; null in dry-run mode. */
  target: string | null
  dryRun: 'resp' | 'text' | null
  /** With `checkpoint`: its path; else null. */
  checkpoint: string | null
  /** With `resume`: the records the checkpoint counted (this run went on after them); else null. */
  resumedFrom: number | null
  /** With `resume`: true when it continued from a checkpoint, false when `'if-present'` found none and started; else null. */
  resumed: boolean | null
  /**
   * With `resume`: true when the checkpoint was not closed cleanly (a kill -9, a crash, or
   * replies not awaited when its run stopped): what was acknowledged after its last write was
   * sent again (see `possibleDuplicates`); false when it was; null when not resumed or the
   * checkpoint, an older pipeload's, does not say.
   */
  uncleanStop: boolean | null
  /** Records read from the input. */
  records: number
  /** Records whose commands were all acknowledged without an error reply (those with no commands included). */
  loaded: number
  /** Records map() returned null for: not sent, neither loaded nor failed. */
  skipped: number
  commands: number
  acknowledged: number
  /** Records that failed (input or reply). */
  errors: number
  errorReplies: number
  failures: Failure[]
  durationMs: number
  recordsPerSec: number
  batches: number
  /** Parse worker threads the run used: 0 = the main thread (of several inputs, the most any used). */
  workers: number
  /** Why the parse stayed on the main thread whatever `workers` said: 'map' (a map function runs there), or null. */
  workersReason: 'map' | null
  /** Times the connection was lost and re-established. */
  reconnects: number
  /** Batches sent again after a reconnect (delivery is at-least-once). */
  resentBatches: number
  /** Commands sent again after a lost or silent connection: each may have run twice. A cluster's MOVED/ASK/TRYAGAIN re-sends are not counted (the server ran nothing). */
  resentCommands: number
  /** Command names of the templates that are not idempotent (RPUSH, INCR, XADD…), [] when all are; null with `map` (not known in advance). */
  notIdempotent: string[] | null
  /** Commands were re-sent (after a reconnect, or by a resume after an unclean stop) and some may not be idempotent: the data may hold some of them twice. */
  possibleDuplicates: boolean
  /** Batch round-trip time, from write to last reply. */
  rttMs: { p50: number | null, p99: number | null, max: number | null }
  /** Cluster mode only: masters written to, redirections followed, slot-map refreshes. */
  cluster?: { masters: number, moved: number, asked: number, retried: number, rerouted: number, refreshes: number }
  /** Only when `connections` was not 1: the connections per server (master), and with 'auto' what decided it ("io-threads 4", or what was assumed). */
  connections?: { count: number, auto: string | null }
  bytesRead: number
  /** Peak resident memory of this process so far (the whole process, in library use). */
  peakRssBytes: number
  onError: 'abort' | 'skip'
  /** Records whose commands were all sent and answered, failed replies included. */
  recordsAcknowledged: number
  /** The first record not sent when the run stopped early; null when everything read was sent. */
  stoppedAt: Position | null
  /** With `rejects`: the file and how many failed records it holds (with `resume`, those of the earlier runs too). */
  rejects: { file: string, records: number } | null
  /** Per input, in load order (one entry for one input). */
  files: FileSummary[]
}

export type ErrorCode =
  | 'PIPELOAD_OPTION_INVALID'
  | 'PIPELOAD_TEMPLATE_INVALID'
  | 'PIPELOAD_FORMAT_UNKNOWN'
  | 'PIPELOAD_INPUT_NOT_FOUND'
  | 'PIPELOAD_INPUT_INVALID'
  | 'PIPELOAD_RECORD_TOO_LARGE'
  | 'PIPELOAD_EXPORT_TYPE_UNSUPPORTED'
  | 'PIPELOAD_EXPORT_FIELD_UNKNOWN'
  | 'PIPELOAD_EXPORT_NOT_TEXT'
  | 'PIPELOAD_FIELD_MISSING'
  | 'PIPELOAD_RECORD_INVALID'
  | 'PIPELOAD_RECORD_FAILED'
  | 'PIPELOAD_TOO_MANY_ERRORS'
  | 'PIPELOAD_CROSSSLOT'
  | 'PIPELOAD_CONNECTION_FAILED'
  | 'PIPELOAD_CONNECTION_LOST'
  | 'PIPELOAD_CLUSTER_REDIRECT'
  | 'PIPELOAD_AUTH_FAILED'
  | 'PIPELOAD_PERMISSION_DENIED'
  | 'PIPELOAD_READ_FAILED'
  | 'PIPELOAD_TLS_FAILED'
  | 'PIPELOAD_TIMEOUT'
  | 'PIPELOAD_ABORTED'
  | 'PIPELOAD_OUTPUT_CLOSED'
  | 'PIPELOAD_OUTPUT_FAILED'
  | 'PIPELOAD_CALLBACK_FAILED'
  | 'PIPELOAD_INPUT_FAILED'
  | 'PIPELOAD_CHECKPOINT_INVALID'
  | 'PIPELOAD_CHECKPOINT_NOT_FOUND'
  | 'PIPELOAD_CHECKPOINT_UNFINISHED'
  | 'PIPELOAD_INTERNAL'

export class PipeloadError extends Error {
  code: ErrorCode
  /** Exit code the CLI uses for this error. */
  readonly exitCode: number
  file?: string
  line?: number
  offset?: number
  /** What was done before the failure, when the load had started. */
  summary?: Summary
  /** The option at fault (PIPELOAD_OPTION_INVALID; 'delimiter' for a CSV/TSV header that reads as one column). */
  option?: string
  /** PIPELOAD_INPUT_INVALID: the input is a binary file, not the text its format names. */
  binary?: 'parquet' | 'zip' | 'gzip'
  /** PIPELOAD_OUTPUT_FAILED / PIPELOAD_OUTPUT_CLOSED: which output, 'stdout', 'checkpoint', 'rejects', … */
  output?: string
  /** PIPELOAD_CALLBACK_FAILED: the callback that threw, 'onProgress', 'onFailure', 'onResume' or 'onReconnect'; `cause` is what it threw. */
  callback?: string
  /** The underlying error, e.g. what an input iterable threw (PIPELOAD_INPUT_FAILED). */
  cause?: unknown
  /** PIPELOAD_RECORD_FAILED / PIPELOAD_TOO_MANY_ERRORS: the failure that stopped the run. */
  failure?: Failure
  /** PIPELOAD_RECORD_FAILED: how many more records of the batches already sent failed. */
  alsoFailed?: number
  /** An http(s) input, as shown (no credentials, no query): PIPELOAD_INPUT_NOT_FOUND / PIPELOAD_INPUT_INVALID. */
  url?: string
  /** The HTTP status an http(s) input answered with, when that stopped the run. */
  status?: number
  /** PIPELOAD_OPTION_INVALID for an input pattern that matches no file: the pattern. */
  pattern?: string
  /** PIPELOAD_TEMPLATE_INVALID: the command template at fault (a `key`'s as `HSET <key> *`). */
  template?: string
  /** The message as the command line says it (`--key 'row:{$n}'`, `--same-key`), where that differs: the CLI prints it. */
  cliMessage?: string
}

export function load (options: LoadOptions): Promise<Summary>

export type BenchWorkload = 'incr' | 'set' | 'hset' | 'ping'

/** Options of bench(): a synthetic workload, or `input` with import options. */
export interface BenchOptions extends ConnectionOptions {
  /** Default 'incr' (INCR one key `count` times). Left out with `input`. */
  workload?: BenchWorkload
  /** Commands per row for a synthetic workload. Default 10 x window x the largest batch size, at least 100000, at most 1000000. */
  count?: number
  /**
   * Default [1, 10, 100, 1000, 5000, 10000, 100000] (5000: the import's default batch size);
   * also "1,10,100". Sizes above the count are skipped but the smallest of them.
   */
  batchSizes?: number[] | string
  /**
   * Connections per server (per master of a cluster), as load()'s `connections`: a count,
   * 'auto' or a list of them ([1, 2, 4] or "1,2,4"). The batch-size rows run over the fewest;
   * with two counts or more, `connectionSweep` times each at the picked batch size.
   * Left out: one connection, and none of the connection fields in the result.
   */
  connections?: number | 'auto' | Array<number | 'auto'> | string
  /** Batches in flight for the pipeline rows (in a row always uses 1). Default 4. */
  window?: number
  /** Runs per row; the row shows the median run and the spread. Default 1. */
  repeat?: number
  /** false: skip the in-a-row row (speedup is then null). Default true. */
  baseline?: boolean
  /** Simulated round-trip time through a delay proxy on loopback: a number is milliseconds; or "250ms", "0.25s". */
  rtt?: Duration
  /** rtt in milliseconds. */
  rttMs?: number
  /** With rtt: each round trip varies by up to ± this much; a number is milliseconds. */
  jitter?: Duration
  /** jitter in milliseconds. */
  jitterMs?: number
  /** A row stops sending after this long (0: never); a number is milliseconds. Default "10s". */
  maxRowTime?: Duration
  /** maxRowTime in milliseconds. */
  maxRowTimeMs?: number
  /** Time the real import of this file; every template's key gets the run's prefix. */
  input?: string
  format?: Format
  header?: boolean
  delimiter?: string
  jsonPath?: string
  maxRecordSize?: number | string
  key?: string
  command?: string | string[]
  commands?: string[]
  /** As load()'s: templates whose keys name no field are meant. */
  sameKey?: boolean
  ttl?: number | string
  /** Milliseconds between CLIENT LIST / RSS samples. Default 10. */
  sampleIntervalMs?: number
  /** Stops the run; its keys are deleted; bench() rejects with PIPELOAD_ABORTED. */
  signal?: AbortSignal
  /** Called as each row (and each repeated run) starts, then about every 250 ms while it runs. */
  onProgress?: (p: BenchProgress) => void
}

export interface BenchProgress {
  row: number
  /** Rows planned; with a file it can shrink once the file's size is known. */
  rows: number
  run: number
  runs: number
  mode: 'in-a-row' | 'pipeline'
  batchSize: number
  window: number
  /** Commands sent so far in this run of the row. */
  ops: number
  /** File workload: records read so far; null for a synthetic workload. */
  records: number | null
  elapsedMs: number
  /** Commands per row (synthetic workloads); null for a file. */
  count: number | null
  /** The row stops sending after this long; null: never. */
  maxRowTimeMs: number | null
  /** With `connections`: the row's data connections. */
  connections?: number
}

export interface BenchRow {
  mode: 'in-a-row' | 'pipeline'
  /** With `connections`: the data connections the row sent over (the in-a-row row: 1). */
  connections?: number
  /** 1 for the in-a-row row. */
  batchSize: number
  window: number
  /** Commands sent and acknowledged (fewer than count when the row was capped). */
  ops: number
  /** File workload: records loaded. */
  records?: number
  batches: number
  durationMs: number
  opsPerSec: number
  /** File workload: records a second, as the import's summary counts them (rows/s); null otherwise. */
  recordsPerSec: number | null
  /** opsPerSec over the in-a-row row's; null without the baseline. */
  speedup: number | null
  /** Batch round trip: from writing a batch to its last reply. */
  latencyMs: { p50: number | null, p99: number | null, max: number | null }
  /** Peak CLIENT LIST omem of the data connection (a cluster: the largest of its connections, one per master); null when CLIENT is not permitted. */
  serverReplyPeakBytes: number | null
  /** Peak CLIENT LIST tot-mem of the data connection (a cluster: as serverReplyPeakBytes); null when not permitted. */
  serverTotalPeakBytes: number | null
  serverSamples: number
  /** Peak RSS of this process during the row. */
  clientRssPeakBytes: number
  /** The server holds exactly what was sent (INCR's value, every key, every record). */
  correct: boolean
  /** Stopped by maxRowTime before sending everything. */
  capped: boolean
  /**
   * A pipeline row whose batches were all in flight at once (batches <= window): it timed
   * one round trip, not a rate, and is never the fastest nor the recommendation.
   */
  oneRoundTrip: boolean
  /** Round trips the row needed at least: batches / window, rounded up. */
  roundTrips: number
  /** Correct and at least minRoundTrips round trips: only ranked rows can be the fastest or the pick. */
  ranked: boolean
  /** ± ops/s: half the spread of the runs, or the 95% margin from five slices of one run; null when unknown. */
  marginOpsPerSec: number | null
  marginFrom: 'runs' | 'slices' | null
  runs: number
  opsPerSecMin: number
  opsPerSecMax: number
  fastest: boolean
}

export interface BenchSkippedRow {
  mode: 'pipeline'
  batchSize: number
  window: number
  reason: 'cannot-finish'
  /** ceil(batches / window). */
  minRoundTrips: number
  /** minRoundTrips x the least PING, in ms. */
  minDurationMs: number
}

export interface BenchResult {
  workload: BenchWorkload | 'file'
  input: string | null
  /** Commands per row, or the file's records. */
  count: number | null
  /** The simulated RTT; null when not simulated. */
  rttMs: number | null
  jitterMs: number | null
  rttSimulated: boolean
  /** Median PING round trip over the path the data took. */
  pingMs: number
  target: string
  window: number
  repeat: number
  /** false when the in-a-row row was skipped. */
  baseline: boolean
  maxRowTimeMs: number | null
  /** Batch sizes not run: above the commands of a row, they would send the same single batch as a smaller one. */
  skippedBatchSizes: number[]
  /** Rows not run: they could not finish under maxRowTime even at the least PING, and a ranked row did. */
  skippedRows: BenchSkippedRow[]
  /** The default count, grown with the largest batch size and the window. */
  countGrown: boolean
  /** Round trips a row needs to be ranked (10). */
  minRoundTrips: number
  /** The fastest row that measured a rate (not one round trip); null when that is in a row. */
  fastestBatchSize: number | null
  /** The smallest batch size within 10% of the fastest, among rows that measured a rate; null when fewer than two batch sizes did. */
  recommendedBatchSize: number | null
  rows: BenchRow[]
  /** With `connections`: the counts, resolved ('auto' asked of the server), ascending; the batch-size rows ran over the first. */
  connections?: number[]
  /** With 'auto' among `connections`: what it came to and why; else null. */
  connectionsAuto?: string | null
  /** With two connection counts or more: one row per count at one batch size. */
  connectionSweep?: BenchConnectionSweep
}

export interface BenchConnectionSweep {
  /** The batch size every row ran at: the recommended one, else the fastest ranked, else the largest run. */
  batchSize: number
  basis: 'recommended' | 'fastest' | 'largest'
  /** The count of the fastest ranked row; null when none was ranked. */
  fastestConnections: number | null
  /** The fewest connections within 10% of the fastest, among ranked rows; null when fewer than two were. */
  recommendedConnections: number | null
  /** Each a BenchRow with `connections` and `vsOne` (ops/s against the one-connection row; null without one). */
  rows: Array<BenchRow & { connections: number, vsOne: number | null }>
}

/** Time the workload in a row and at each batch size; touches only its own keys. */
export function bench (options?: BenchOptions): Promise<BenchResult>

export const EXIT: Readonly<{
  OK: 0, RECORD_ERRORS: 1, USAGE: 2, INPUT: 3, CONNECTION: 4, OUTPUT: 74, INTERNAL: 70, SIGINT: 130, SIGTERM: 143
}>
export const CODES: Readonly<Record<ErrorCode, number>>
export const DEFAULTS: Readonly<{
  header: boolean, batchSize: number, window: number, connections: number, maxBatchBytes: number, maxRecordSize: number,
  onError: 'abort', timeout: number, retryTimeout: number, connectTimeout: number, progressInterval: number, maxFailures: number,
  workers: 'auto', chunkSize: number
}>

/**
 * A JSON number whose text a JS number would change (12345678901234567890, 1.10, 1e3, -0), as
 * map() sees it: written as `text`, the input's digits; arithmetic and comparisons use its value
 * as a double (valueOf); String(n) and `${n}` give the text.
 */
export class JsonNumber {
  constructor (text: string)
  readonly text: string
  valueOf (): number
  toString (): string
  toJSON (): number
}

export type ExportType = 'string' | 'hash' | 'list' | 'set' | 'zset' | 'stream'
export type ExportFormat = 'ndjson' | 'csv' | 'parquet'

/** exportKeys() options (docs/library.md "exportKeys"); the connection options are load()'s, but `redis`, `timeout` and `onReconnect`. */
export interface ExportOptions extends Omit<ConnectionOptions, 'redis' | 'onReconnect'> {
  /** A file path (created or truncated; gzipped when it ends in .gz) or a Writable (written to, not ended). */
  output: string | NodeJS.WritableStream
  /** Default 'ndjson' (docs/export.md): every type. 'csv': hashes; 'parquet': hashes and strings. */
  format?: ExportFormat
  /** SCAN's MATCH pattern: only the keys that match. */
  match?: string
  /** Only keys of these types (one type: SCAN's TYPE option); an array or 'hash,string'. Default: every type, or the types the format holds ('csv': hash; 'parquet': hash, string); another is refused. */
  types?: ExportType[] | string
  /** csv, parquet: the hash fields written, as columns in this order; an array or 'a,b,c'. Default: the fields of the first `sample` keys. */
  fields?: string[] | string
  /** csv, parquet without `fields`: the columns are the fields of the first this many keys. Default 100. */
  sample?: number
  /** csv, parquet: bytes one hash may hold (a big one is joined into one row in memory): a number, or a size such as '64MiB'. Default 64 MiB. */
  maxRecordSize?: number | string
  /** parquet: rows a row group holds at most. Default 10000. */
  rowGroupSize?: number
  /** parquet: bytes a row group holds at most (about). Default 8 MiB. */
  rowGroupBytes?: number | string
  /** Keys read per round trip. Default 250. */
  batchSize?: number
  /** Batches awaiting replies at most, per master. Default 4. */
  window?: number
  /** Elements per page of a big key: a record ("part") each. Default 1000. */
  pageSize?: number
  /** SCAN's COUNT. Default 1000. */
  scanCount?: number
  /** Elements a batch is expected to bring at most (fewer keys a batch when keys are big): a memory guard. Default 100000. */
  maxElements?: number
  onProgress?: (p: ExportProgress) => void
  /** ms between onProgress calls. Default 250. */
  progressInterval?: number
  signal?: AbortSignal
  /**
   * A file where each master's SCAN cursor whose keys are all written, and the output's
   * length holding them, are kept (every 500 ms, at the end, on abort). Only with an NDJSON
   * file as `output` (.gz too: written in gzip members; not a stream). docs/export.md
   * "Resume and consistency".
   */
  checkpoint?: string
  /** Go on from `checkpoint`: the output is cut back to the length it records, each master SCANned on from its cursor. */
  resume?: boolean
}

/** What an export's summary says of its checkpoint (with `checkpoint` only). */
export interface ExportCheckpointSummary {
  /** The checkpoint path. */
  file: string
  /** Whether this run went on from a checkpoint. */
  resumed: boolean
  /** The output's bytes kept from the runs before (null: a new file). */
  keptBytes: number | null
  /** A resume of a complete export: nothing was read or written. */
  nothingLeft: boolean
  /** Keys the runs before wrote (a key written again after a resume counts again). */
  keysBefore: number
  /** With nothingLeft: when the export finished (ISO 8601). */
  finishedAt?: string
}

export interface ExportProgress {
  /** Keys written so far. */
  keys: number
  /** DBSIZE summed over the masters at the start. */
  total: number
  keysPerSec: number
  /** Bytes written (before gzip). */
  bytes: number
  elapsedMs: number
  /** Null with match or types (DBSIZE then counts keys not written), or before the first key. */
  etaMs: number | null
}

export interface ExportSummary {
  /** Keys written (a key read again from its start counts once; one written again after a reconnect, a failover or a moved slot, twice). */
  keys: number
  types: Partial<Record<ExportType, number>>
  /** Records after a key's first (the parts of big keys). */
  parts: number
  /** DBSIZE summed over the masters at the start. */
  total: number
  /** Keys gone between SCAN and their read: not written. */
  deleted: number
  /** Keys whose type changed each time they were read (3 times): not written, or written in part. */
  changed: number
  /** Keys read again from their start: their type changed between two pages. */
  restarted: number
  /** Keys of other types than `types` asked (several types: filtered after TYPE). */
  otherTypes: number
  /** Keys of types export does not write (a module's), by type. */
  unsupported: Record<string, number>
  batches: number
  /** Connections lost and made again (docs/export.md "Faults"): the keys from the last SCAN cursor written whole read again. */
  reconnects: number
  /** Of those, to another server process (restarted, a failover's new master): its SCAN from cursor 0. */
  rescans: number
  /** A cluster only (docs/export.md "Faults"). */
  cluster?: ExportClusterFaults
  /** Bytes written (before gzip). */
  bytes: number
  /** The path, or 'the output' for a stream ('stdout' in the CLI). */
  output: string
  format: ExportFormat
  /** host:port[/db] of the one server, or 'the cluster'. */
  target: string
  /** host:port of each server read. */
  masters: string[]
  durationMs: number
  keysPerSec: number
  /** With `checkpoint` only. */
  checkpoint?: ExportCheckpointSummary
}

/** What a cluster's export met (docs/export.md "Faults"). */
export interface ExportClusterFaults {
  /** Masters whose read started again on the master that took their slots. */
  failovers: number
  /** Key reads sent again after MOVED. */
  moved: number
  /** Key reads sent again after ASK (with ASKING). */
  asked: number
  /** Slots whose master at the end is not the one they were read from; null: no node answered CLUSTER SLOTS at the end. */
  slotsMoved: number | null
  /** Slots whose keys were read again where they are now (moved, or being migrated at the end). */
  slotsReread: number
}

/** Write the keyspace of a server, or of every master of a cluster, to a file or stream. */
export function exportKeys (options: ExportOptions): Promise<ExportSummary>

declare const pipeload: {
  load: typeof load, bench: typeof bench, exportKeys: typeof exportKeys, PipeloadError: typeof PipeloadError, EXIT: typeof EXIT, CODES: typeof CODES, DEFAULTS: typeof DEFAULTS,
  JsonNumber: typeof JsonNumber
}
export default pipeload
