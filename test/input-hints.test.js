'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// Inputs that parse but are not what their name or --format says: refused at their first bytes
// or their header, before anything is written, with what the input is and the fix (issue 34,
// items 3 and 6). "Nothing written": the test's own server still holds no key.

const { useServer } = require('./helpers/redis-server')
const { runCli } = require('./helpers/run-cli')
const { load } = require('..')

let srv
let redis
let write
useServer('pipeload-input-hints-', s => { ({ srv, redis, write } = s) })

/** `header` and `rows` records of three fields joined by `d`: ~20 bytes a row. */
function table (d, rows) {
  let s = ['id', 'name', 'v'].join(d) + '\n'
  for (let i = 1; i <= rows; i++) s += [i, `name ${i}`, `value ${i}`].join(d) + '\n'
  return s
}

const ROWS = 20_000 // ~500 KB: more than one 256 KiB read, and several --workers chunks

describe('a header that reads as one column but holds another delimiter (item 3)', () => {
  it('a ;-separated .csv whose template names no column: exit 2 and the delimiter hint, nothing written, in every mode', async () => {
    const file = write('semi.csv', table(';', ROWS))
    const refusal = `pipeload: ${file}:1: the header split on ',' is one column, "id;name;v"; the header contains ';': try --delimiter ';' (if one column is meant, give --delimiter or --columns)\n`
    for (const extra of [[], ['--workers', '2'], ['--workers', '1'], ['--format', 'csv']]) {
      const r = await runCli(['import', file, '--key', 'semi:{$n}', '-u', srv.url, ...extra])
      expect(r.code, extra.join(' ')).toBe(2)
      expect(r.stderr, extra.join(' ')).toBe(refusal)
      expect(await redis.dbsize()).toBe(0)
    }
    // The hint is right: with it the file loads, three fields a row.
    const ok = await runCli(['import', file, '--key', 'semi:{id}', '-u', srv.url, '-q', '--delimiter', ';'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(await redis.hgetall(`semi:${ROWS}`)).toEqual({ id: String(ROWS), name: `name ${ROWS}`, v: `value ${ROWS}` })
    await redis.flushdb()
  })

  it('--format tsv on a comma file: refused the same, the hint naming --format csv', async () => {
    const file = write('comma.txt', table(',', ROWS))
    const r = await runCli(['import', file, '--format', 'tsv', '-c', 'SET tsv:{$n} 1', '-u', srv.url])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`pipeload: ${file}:1: the header split on tabs is one column, "id,name,v"; the header contains ',': try --delimiter ',' or --format csv (if one column is meant, give --delimiter or --columns)\n`)
    expect(await redis.dbsize()).toBe(0)
  })

  it('--columns or --delimiter says one column is meant: it loads as it is', async () => {
    const file = write('one.csv', 'sentence;with;semicolons\nfirst; line\nsecond; line\n')
    const r = await runCli(['import', file, '--columns', 'text', '-c', 'SET one:{$n} {text}', '-u', srv.url, '-q'])
    expect(r.code, r.stderr).toBe(0)
    expect(await redis.mget('one:1', 'one:2')).toEqual(['first; line', 'second; line'])
    const d = await runCli(['import', file, '--delimiter', ',', '-c', 'SET one:{$n} x', '-u', srv.url, '-q'])
    expect(d.code, d.stderr).toBe(0)
    await redis.flushdb()
  })

  it('load() refuses it with PIPELOAD_OPTION_INVALID (option delimiter) before connecting', async () => {
    const file = write('lib-semi.csv', table(';', 10))
    const err = await load({ input: file, key: 'lib:{$n}', url: srv.url }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_OPTION_INVALID')
    expect(err.option).toBe('delimiter')
    expect(err.message).toContain("the header contains ';': try --delimiter ';'")
    expect(await redis.dbsize()).toBe(0)
  })
})

/** A zip archive (stored, one member) of `content`, as zip(1) writes one. */
function zipOf (name, content) {
  const zlib = require('node:zlib')
  const crc = zlib.crc32(content)
  const n = Buffer.from(name)
  const local = Buffer.alloc(30)
  local.writeUInt32LE(0x04034b50, 0)
  local.writeUInt16LE(10, 4)
  local.writeUInt32LE(crc, 14)
  local.writeUInt32LE(content.length, 18)
  local.writeUInt32LE(content.length, 22)
  local.writeUInt16LE(n.length, 26)
  const central = Buffer.alloc(46)
  central.writeUInt32LE(0x02014b50, 0)
  central.writeUInt16LE(20, 4)
  central.writeUInt16LE(10, 6)
  central.writeUInt32LE(crc, 16)
  central.writeUInt32LE(content.length, 20)
  central.writeUInt32LE(content.length, 24)
  central.writeUInt16LE(n.length, 28)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(46 + n.length, 12)
  end.writeUInt32LE(30 + n.length + content.length, 16)
  return Buffer.concat([local, n, content, central, n, end])
}

describe('a binary file under a text format\'s name or --format says what it is (item 6)', () => {
  const zlib = require('node:zlib')
  const fs = require('node:fs')
  const path = require('node:path')
  const { ROOT } = require('./helpers/run-cli')
  const parquet = () => fs.readFileSync(path.join(ROOT, 'examples', 'data', 'cities.parquet'))

  it('Parquet named .csv or given --format ndjson: exit 3, --format parquet, nothing written, in every mode', async () => {
    const file = write('cities.csv', parquet())
    for (const extra of [[], ['--workers', '2'], ['--workers', '1']]) {
      const r = await runCli(['import', file, '-c', 'SET pq:{id} {name}', '-u', srv.url, ...extra])
      expect(r.code, extra.join(' ')).toBe(3)
      expect(r.stderr, extra.join(' ')).toBe(`pipeload: ${file}:1: this is a Parquet file, not CSV text: load it with --format parquet (or name it ${path.join(path.dirname(file), 'cities.parquet')})\n`)
    }
    const nd = await runCli(['import', file, '--format', 'ndjson', '-c', 'SET pq:{id} {name}', '-u', srv.url])
    expect(nd.code).toBe(3)
    expect(nd.stderr).toContain(`${file}:1: this is a Parquet file, not NDJSON text: load it with --format parquet`)
    const stdin = await runCli(['import', '-', '--format', 'json', '-c', 'SET pq:{id} {name}', '-u', srv.url], { input: parquet() })
    expect(stdin.code).toBe(3)
    expect(stdin.stderr).toBe('pipeload: <stdin>:1: this is a Parquet file, not JSON text: Parquet is read from its end, which a stream cannot seek to: save it to a file and load that (--format parquet, or a .parquet name)\n')
    // The hint is right.
    const ok = await runCli(['import', file, '--format', 'parquet', '-c', 'SET pq:{id} {name}', '-u', srv.url, '-q'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(await redis.get('pq:1')).toBe('Tokyo')
    await redis.flushdb()
  })

  it('a zip archive (more than one read long) named .csv: not read, and how to unzip it; on stdin too', async () => {
    const zip = zipOf('data.csv', Buffer.from(table(',', ROWS)))
    expect(zip.length).toBeGreaterThan(256 * 1024)
    const file = write('data.csv', zip)
    for (const extra of [[], ['--workers', '2']]) {
      const r = await runCli(['import', file, '-c', 'SET zip:{id} {name}', '-u', srv.url, ...extra])
      expect(r.code).toBe(3)
      expect(r.stderr).toBe(`pipeload: ${file}:1: this is a zip archive, not CSV text: pipeload does not read zip archives; unzip it first, e.g. unzip -p ${file} | pipeload import - --format csv … (unzip -l lists its files; name one after the archive to take it alone)\n`)
    }
    const stdin = await runCli(['import', '-', '--format', 'tsv', '-c', 'SET zip:{0} 1', '-u', srv.url], { input: zip })
    expect(stdin.code).toBe(3)
    expect(stdin.stderr).toBe('pipeload: <stdin>:1: this is a zip archive, not TSV text: pipeload does not read zip archives; save it to a file and unzip it first (unzip -l lists its files; unzip -p FILE NAME | pipeload import - --format tsv …)\n')
    expect(await redis.dbsize()).toBe(0)
  })

  it('gzip inside gzip, and gzip-compressed Parquet: what it is and how to inflate it', async () => {
    const twice = write('twice.csv.gz', zlib.gzipSync(zlib.gzipSync(table(',', 10))))
    const r = await runCli(['import', twice, '-c', 'SET gz:{id} {name}', '-u', srv.url])
    expect(r.code).toBe(3)
    expect(r.stderr).toBe(`pipeload: ${twice}:1: this is gzip data inside gzip (compressed twice), not CSV text: inflate it once first, e.g. gunzip -c ${twice} | pipeload import - --format csv …\n`)
    const pq = write('pq.csv.gz', zlib.gzipSync(parquet()))
    const p = await runCli(['import', pq, '-c', 'SET gz:{id} {name}', '-u', srv.url])
    expect(p.code).toBe(3)
    expect(p.stderr).toBe(`pipeload: ${pq}:1: this is gzip-compressed Parquet, not CSV text: Parquet is read from its end, which gzip cannot seek to: inflate it to a file first (gunzip -c ${pq} > data.parquet) and load that\n`)
    expect(await redis.dbsize()).toBe(0)
  })

  it('a .parquet that is gzip or a zip archive says so, not only that its footer is missing', async () => {
    const gz = write('gz.parquet', zlib.gzipSync(parquet()))
    const r = await runCli(['import', gz, '-c', 'SET p:{id} {name}', '-u', srv.url])
    expect(r.code).toBe(3)
    expect(r.stderr).toBe(`pipeload: ${gz}: this is gzip data, not a Parquet file: Parquet is read from its end, which gzip cannot seek to; inflate it to a file first (gunzip -c ${gz} > data.parquet) and load that, or, for gzipped CSV or JSON, give --format\n`)
    const zip = write('zip.parquet', zipOf('cities.parquet', parquet()))
    const z = await runCli(['import', zip, '-c', 'SET p:{id} {name}', '-u', srv.url])
    expect(z.code).toBe(3)
    expect(z.stderr).toBe(`pipeload: ${zip}: this is a zip archive, not a Parquet file: pipeload does not read zip archives; unzip it first (unzip -l ${zip} lists its files)\n`)
  })
})

describe('JSON that is no array of records says where the records are (item 6)', () => {
  /** A FeatureCollection as ogr2ogr writes one: "type", "name", "crs" (an object), then "features". */
  function featureCollection (n) {
    const features = []
    for (let i = 1; i <= n; i++) features.push({ type: 'Feature', properties: { id: i, name: `place ${i}` }, geometry: { type: 'Point', coordinates: [i / 1000, -i / 1000] } })
    return JSON.stringify({ type: 'FeatureCollection', name: 'places', crs: { type: 'name', properties: { name: 'urn:ogc:def:crs:OGC:1.3:CRS84' } }, features }, null, 1)
  }

  it('a GeoJSON FeatureCollection without --json-path: exit 3, --json-path "features", nothing written (also with --on-error skip)', async () => {
    const text = featureCollection(3000)
    expect(text.length).toBeGreaterThan(256 * 1024)
    const file = write('places.json', text)
    const line = text.split('\n').findIndex(l => l.includes('"features"')) + 1
    for (const extra of [[], ['--on-error', 'skip'], ['--workers', '1']]) {
      const r = await runCli(['import', file, '-c', 'SET geo:{$n} 1', '-u', srv.url, ...extra])
      expect(r.code, extra.join(' ')).toBe(3)
      expect(r.stderr, extra.join(' ')).toContain(`pipeload: ${file}:${line}: the document is an object whose member "features" is an array: for the records in it, --json-path "features"\n`)
      expect(await redis.dbsize()).toBe(0)
    }
    // The hint is right: every feature loads.
    const ok = await runCli(['import', file, '--json-path', 'features', '-c', 'SET geo:{properties.id} {properties.name}', '-u', srv.url, '-q'])
    expect(ok.code, ok.stderr).toBe(0)
    const oracle = JSON.parse(text).features
    expect(await redis.dbsize()).toBe(oracle.length)
    expect(await redis.get('geo:2999')).toBe(oracle[2998].properties.name)
    await redis.flushdb()
  })

  it('load() refuses an API answer ({"count": 2, "results": [...]}) the same way', async () => {
    const file = write('answer.json', '{"count": 2, "results": [{"id": 1}, {"id": 2}]}')
    const err = await load({ input: file, command: 'SET api:{id} 1', url: srv.url }).catch(e => e)
    expect(err.code).toBe('PIPELOAD_INPUT_INVALID')
    expect(err.option).toBe('jsonPath')
    expect(err.message).toBe(`${file}:1: the document is an object whose member "results" is an array: for the records in it, --json-path "results"`)
    expect(await redis.dbsize()).toBe(0)
  })

  it('a .json file of one JSON value per line: exit 3, --format ndjson, nothing written', async () => {
    const lines = []
    // Objects of objects: the first line alone reads as an object keyed by id (a record "a").
    for (let i = 1; i <= 20_000; i++) lines.push(JSON.stringify({ [`k${i}`]: { v: `value ${i}` } }))
    const text = lines.join('\n') + '\n'
    expect(text.length).toBeGreaterThan(256 * 1024)
    const file = write('lines.json', text)
    for (const extra of [[], ['--on-error', 'skip']]) {
      const r = await runCli(['import', file, '-c', 'SET nd:{$key} {v}', '-u', srv.url, ...extra])
      expect(r.code).toBe(3)
      expect(r.stderr).toContain(`pipeload: ${file}:2: a second JSON value after the one on line 1: this looks like NDJSON (one JSON value per line), not one JSON document: --format ndjson (or name it ${file.replace(/json$/, 'ndjson')})\n`)
      expect(await redis.dbsize()).toBe(0)
    }
    const stdin = await runCli(['import', '-', '--format', 'json', '-c', 'SET nd:{$n} 1', '-u', srv.url], { input: text })
    expect(stdin.code).toBe(3)
    expect(stdin.stderr).toContain('pipeload: <stdin>:2: a second JSON value after the one on line 1: this looks like NDJSON (one JSON value per line), not one JSON document: --format ndjson\n')
    expect(await redis.dbsize()).toBe(0)
  })
})
