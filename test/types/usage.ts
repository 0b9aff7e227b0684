// Compiled by test/types.test.js with `tsc --noEmit`: the public API as a user writes it.
import { Readable } from 'node:stream'
import Redis from 'ioredis'
import pipeload, { load, bench, exportKeys, PipeloadError, EXIT, JsonNumber, type Summary, type LoadOptions, type BenchResult, type ExportSummary } from 'pipeload'

async function main (): Promise<void> {
  const summary: Summary = await load({ url: 'redis://127.0.0.1:6379', input: 'users.csv', key: 'user:{id}' })
  const n: number = summary.records + summary.errors + summary.durationMs
  const p50: number | null = summary.rttMs.p50
  const twice: boolean = summary.possibleDuplicates && summary.resentCommands > 0 && summary.notIdempotent?.includes('RPUSH') === true
  const opts: LoadOptions = {
    redis: new Redis({ lazyConnect: true }),
    input: (async function * () { yield { id: 1, v: 'x' } })(),
    map: rec => [['SET', `k:${rec.id}`, rec.v]],
    batchSize: 1000,
    window: 4,
    ttl: 60,
    onProgress: p => { const r: number = p.recordsPerSec; void r },
    signal: new AbortController().signal
  }
  await pipeload.load(opts)
  // binary arguments go out as their bytes; [] sends nothing for a record
  const several: Summary = await load({ input: ['a.csv', 'parts/*.ndjson', 'https://example.com/c.csv', '-'], format: 'csv', key: 'k:{id}' })
  await load({ input: 'coords.csv', relaxQuotes: true, key: 'point:{id}' })
  // Parquet: a path or URL; failures of its rows carry their row group
  await load({ input: 'lake/part-*.parquet', format: 'parquet', command: 'SET f:{id} {emb:f32}', onFailure: f => { const g: number | undefined = f.rowGroup; void g } })
  const firstFile: { input: string, records: number, loaded: number, errors: number, skipped: number } = several.files[0]
  const fell = several.files[0].fallback // n parse workers handed over to one thread: where and why
  if (fell) { const from: number = fell.from; const at: number = fell.line + fell.offset; const why: string = fell.reason; void from; void at; void why }
  void firstFile
  await load({ input: [{ id: 1 }], map: rec => rec.id === 2 ? [] : [['SET', Buffer.from('k'), new Uint8Array([0xff]), new DataView(new ArrayBuffer(2)), new ArrayBuffer(1), 10n]] })
  await load({ input: Readable.from(['{"id":1}\n']), format: 'ndjson', command: ['HSET u:{id} *', 'SADD ids {id}'] })
  // a number a JS number would change comes to map() as a JsonNumber: its text, its value
  await load({ input: 'big.ndjson', map: rec => rec.id instanceof JsonNumber ? [['SET', `k:${rec.id.text}`, rec.id, Number(rec.id) + 1]] : null })
  const digits: string = new JsonNumber('12345678901234567890').text
  void digits
  await load({ input: 'users.csv', key: 'user:{id}', tls: { ca: Buffer.from(''), servername: 'redis.example.com' } })
  await load({ input: 'users.csv', key: 'user:{id}', tls: true, sentinels: [{ host: '10.0.0.1', port: 26379 }, '10.0.0.2:26379'], masterName: 'mymaster' })
  const skipped = await load({ input: 'users.csv', key: 'user:{id}', onError: 'skip', maxErrors: 100, rejects: 'rejects.ndjson' })
  const rejected: number = skipped.rejects?.records ?? 0
  const at: number | null = skipped.failures[0]?.offset ?? null
  void rejected; void at
  const shard: string | null = (await load({ input: 'users.csv', key: 'user:{id}', shard: '1/4' })).shard
  await load({ input: 'users.csv', key: 'user:{id}', shard: { index: 1, count: 4 } })
  // @ts-expect-error a shard is "i/n" or { index, count }
  await load({ input: 'users.csv', key: 'user:{id}', shard: 1 })
  void shard
  const job = await load({ input: 'users.csv', key: 'user:{id}', checkpoint: 'users.ckpt', resume: 'if-present' })
  const resumed: boolean | null = job.resumed
  const from: number | null = job.resumedFrom
  const unclean: boolean | null = job.uncleanStop
  void resumed; void from; void unclean
  await load({ input: 'users.csv', key: 'user:{id}', checkpoint: 'users.ckpt', resume: true, onResume: e => { const what: Array<'target' | 'commands'> = e.unchecked; void what } })
  // @ts-expect-error resume is true, false or 'if-present'
  await load({ input: 'users.csv', key: 'user:{id}', checkpoint: 'users.ckpt', resume: 'auto' })
  try {
    await load({ input: '-', format: 'csv', header: false, command: 'SET r:{0} {1}', dryRun: 'resp', onError: 'abort' })
  } catch (err) {
    if (err instanceof PipeloadError) {
      const code: string = err.code
      const exit: number = err.exitCode
      const next: number | null | undefined = err.summary?.stoppedAt?.line
      if (err.code === 'PIPELOAD_RECORD_FAILED' || err.code === 'PIPELOAD_TOO_MANY_ERRORS') void next
      void code; void exit
    }
  }
  const timing: BenchResult = await bench({ url: 'redis://127.0.0.1:6379', workload: 'set', count: 1000, batchSizes: [10, 100], rtt: '50ms' })
  const best: number | null = timing.rows[0].serverReplyPeakBytes
  const margin: number | null = timing.rows[0].ranked ? timing.rows[0].marginOpsPerSec : timing.skippedRows[0].minDurationMs
  void margin
  const swept: BenchResult = await bench({ url: 'redis://127.0.0.1:6379', workload: 'hset', connections: [1, 2, 'auto'] })
  const pick: number | null | undefined = swept.connectionSweep?.recommendedConnections
  const over: number | undefined = swept.connectionSweep?.rows[0].connections
  void pick; void over
  await bench({ connections: '1,2,4' })
  await pipeload.bench({ input: 'users.csv', key: 'user:{id}', repeat: 3, baseline: false, onProgress: p => { const b: number = p.batchSize; const n: number = p.ops; void b; void n } })
  void best
  const usage: number = EXIT.USAGE
  void n; void p50; void usage
}

async function exporting (): Promise<number> {
  const s: ExportSummary = await exportKeys({ url: 'redis://127.0.0.1:6379/2', output: 'dump.ndjson.gz', match: 'user:*', types: ['hash', 'string'], onProgress: p => { void p.etaMs } })
  await pipeload.exportKeys({ output: process.stdout, types: 'zset', retryTimeout: '2m', timeout: '90s' })
  await exportKeys({ output: 'users.csv', format: 'csv', fields: ['name', 'email'], sample: 500, maxRecordSize: '16MiB' })
  const p = await exportKeys({ output: 'dump.parquet', format: 'parquet', fields: 'name,email', rowGroupSize: 5000, rowGroupBytes: 8 << 20 })
  if (p.format === 'parquet') void p.keys
  const moved: number | null = s.cluster ? s.cluster.slotsMoved : 0
  return s.keys + (s.types.hash ?? 0) + s.deleted + s.reconnects + s.rescans + (moved ?? 0)
}
void exporting
// @ts-expect-error: output is required
exportKeys({ match: 'a*' })
// @ts-expect-error: no such type
exportKeys({ output: 'x', types: ['json'] })
// @ts-expect-error: no such format
exportKeys({ output: 'x', format: 'xml' })

// @ts-expect-error: input is required
load({ key: 'k:{id}' })
// @ts-expect-error: no such workload
bench({ workload: 'del' })
// @ts-expect-error: connections are counts or 'auto'
bench({ connections: [true] })
// @ts-expect-error: dryRun takes 'resp' or 'text'
load({ input: 'a.csv', key: 'k', dryRun: 'yes' })
// workers: a number of threads or 'auto', nothing else
load({ input: 'a.csv', key: 'k', workers: 4 })
load({ input: 'a.csv', key: 'k', workers: 'auto' })
// @ts-expect-error: workers takes a number or 'auto', not any string
load({ input: 'a.csv', key: 'k', workers: 'many' })
// @ts-expect-error: not a count as text either (the CLI's "4" is read before load())
load({ input: 'a.csv', key: 'k', workers: '4' })

void main
