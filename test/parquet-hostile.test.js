'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// Parquet files that lie (issue 37 items 3, 4 and 8), written byte by byte
// (helpers/parquet-raw.js) where no writer would write them, by DuckDB where one does: pages
// that decompress to more than their header says (bombs: memory.test.js has their memory),
// a column or struct field named `__proto__`, strings that are not UTF-8, dictionary indices
// past the dictionary, schemas that are no tree or nest 5,000 levels; and the rejects file's
// `raw` of a Parquet row, whose 64-bit integers and decimals must be their exact text. Each
// refusal is exit 3 naming the file (and the row group and column where a page is at fault),
// no stack trace, on the main thread and with parse workers.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { runCli } = require('./helpers/run-cli')
const { writeQuery } = require('./helpers/parquet')
const { parquetFile, oneColumn, plainInt32, plainInt64, plainBytes, dictionaryIndices, zstdRle, compressZeros, varint } = require('./helpers/parquet-raw')
const { scaledMs } = require('./helpers/wait')

let dir
beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-parquet-hostile-')) })
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

function write (name, bytes) {
  const file = path.join(dir, name)
  fs.writeFileSync(file, bytes)
  return file
}

const NO_STACK = /\n\s+at /
const WORKERS = [[], ['--workers', '2']]

/** A dry run as text of `file` with `commands`; `extra`: more flags. */
/** `--same-key`: the files here are of a row or none, and some tests write it to the key `k`. */
function dryRun (file, commands, extra = []) {
  return runCli(['import', file, '--dry-run', 'text', '--same-key', ...commands.flatMap(c => ['-c', c]), ...extra])
}

/** One INT64 column `id` of one row (7) in one page of `codec`: `body` as stored, `size` as its header says. */
function int64Page (codec, body, size = 8) {
  return oneColumn({ name: 'id', type: 'INT64', rows: 1, codec, pages: [{ kind: 'data', values: 1, encoding: 'PLAIN', body, size }] })
}

describe('a page that decompresses to more than its header says (a decompression bomb)', () => {
  const MB = 1024 * 1024
  const seven = plainInt64([7n])

  it('gzip, brotli, zstd: stopped at the header\'s size; exit 3 naming file, row group and column; with workers too', async () => {
    const bombs = {
      gzip: int64Page('GZIP', await compressZeros('gzip', 64 * MB)),
      brotli: int64Page('BROTLI', await compressZeros('brotli', 64 * MB)),
      zstd: int64Page('ZSTD', zstdRle(64 * MB))
    }
    for (const [codec, bytes] of Object.entries(bombs)) {
      const file = write(`${codec}-bomb.parquet`, bytes)
      for (const extra of WORKERS) {
        const res = await dryRun(file, ['SET k:{id} {id}'], extra)
        expect(res.code, `${codec} ${extra}: ${res.stderr}`).toBe(3)
        expect(res.stderr).toContain(`${codec}-bomb.parquet: row group 0 (rows 1-1), column "id": cannot be read: ${codec}: the page decompresses to more than the 8 bytes its header says`)
        expect(res.stderr).not.toMatch(NO_STACK)
        expect(res.stdout).toBe('')
      }
    }
  }, scaledMs(60_000))

  it('snappy: its own length must be the header\'s, and one the data can make; a page over 1 GiB is refused before it is allocated', async () => {
    const snappy = (length, data) => Buffer.concat([varint(length), data])
    const literal = Buffer.concat([Buffer.from([(8 - 1) << 2]), seven]) // a literal of the 8 bytes
    const cases = [
      [snappy(8, literal), 2147483647, 'the page header says it holds 2147483647 bytes uncompressed, more than a page may (1073741824 bytes, 1 GiB)'],
      [snappy(8, literal), 1073741825, 'the page header says it holds 1073741825 bytes uncompressed, more than a page may'],
      [snappy(16, literal), 8, 'snappy: the page\'s data says it holds 16 bytes, its header 8'],
      [snappy(64 * MB, literal), 64 * MB, `snappy: 9 bytes of snappy data cannot hold the ${64 * MB} bytes its header says`]
    ]
    for (const [body, size, reason] of cases) {
      const file = write('snappy-bomb.parquet', int64Page('SNAPPY', body, size))
      for (const extra of WORKERS) {
        const res = await dryRun(file, ['SET k:{id} {id}'], extra)
        expect(res.code, res.stderr).toBe(3)
        expect(res.stderr).toContain(`snappy-bomb.parquet: row group 0 (rows 1-1), column "id": cannot be read: ${reason}`)
        expect(res.stderr).not.toMatch(NO_STACK)
      }
    }
    // The same page with its true sizes reads.
    const ok = await dryRun(write('snappy-ok.parquet', int64Page('SNAPPY', snappy(8, literal))), ['SET k:{id} {id}'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout).toBe('SET k:7 7\n')
  })

  it('a page whose data makes fewer bytes than its header says is refused too, as is a header of a negative size', async () => {
    const short = await dryRun(write('short.parquet', int64Page('GZIP', zlib.gzipSync(seven), 16)), ['SET k:{id} {id}'])
    expect(short.code).toBe(3)
    expect(short.stderr).toContain('column "id": cannot be read: gzip: the page decompresses to 8 bytes, not the 16 its header says')
    const negative = await dryRun(write('negative.parquet', int64Page('BROTLI', zlib.brotliCompressSync(seven), -8)), ['SET k:{id} {id}'])
    expect(negative.code).toBe(3)
    expect(negative.stderr).toContain('column "id": cannot be read: the page header gives its uncompressed size as -8')
  })

  it('files DuckDB writes with every codec still read', async () => {
    for (const codec of ['snappy', 'gzip', 'zstd', 'brotli', 'lz4', 'lz4_raw', 'uncompressed']) {
      const file = await writeQuery(path.join(dir, `duck-${codec}.parquet`), "SELECT i AS id, repeat('x', i % 50) AS s FROM range(3000) r(i)", `COMPRESSION ${codec}`)
      const res = await dryRun(file, ['SET k:{id} {s}'])
      expect(res.code, `${codec}: ${res.stderr}`).toBe(0)
      const lines = res.stdout.trim().split('\n')
      expect(lines.length).toBe(3000)
      expect(lines[2999]).toBe(`SET k:2999 ${'x'.repeat(2999 % 50)}`)
    }
  }, scaledMs(60_000))
})

/** Two REQUIRED columns, `id` (INT32 1..n) and `name` of `type` (a UTF8 string by default), in one row group of one page each. */
function idAnd (name, values, { type = 'BYTE_ARRAY', converted = 'UTF8', pages } = {}) {
  const n = values.length
  const body = plainBytes(values)
  return parquetFile({
    schema: [{ name: 'schema', children: 2 }, { name: 'id', type: 'INT32', repetition: 'REQUIRED' }, { name, type, repetition: 'REQUIRED', converted }],
    rowGroups: [{
      rows: n,
      columns: [
        { path: ['id'], type: 'INT32', pages: [{ kind: 'data', values: n, encoding: 'PLAIN', body: plainInt32(values.map((_, i) => i + 1)), size: 4 * n }] },
        { path: [name], type, pages: pages || [{ kind: 'data', values: n, encoding: 'PLAIN', body, size: body.length }] }
      ]
    }]
  })
}

describe('a column or field named __proto__ is a field like any other', () => {
  it('a column: in *, by name, in {$}, to a map function; with workers too', async () => {
    const file = write('proto.parquet', idAnd('__proto__', ['a', 'b']))
    for (const extra of WORKERS) {
      const star = await dryRun(file, ['HSET h:{id} *'], extra)
      expect(star.stdout).toBe('HSET h:1 id 1 __proto__ a\nHSET h:2 id 2 __proto__ b\n')
      const named = await dryRun(file, ['SET s:{id} {__proto__}', 'SET j:{id} {$}'], extra)
      expect(named.code, named.stderr).toBe(0)
      expect(named.stdout).toBe('SET s:1 a\nSET j:1 "{\\"id\\":1,\\"__proto__\\":\\"a\\"}"\nSET s:2 b\nSET j:2 "{\\"id\\":2,\\"__proto__\\":\\"b\\"}"\n')
    }
    const map = write('map.js', 'module.exports = r => [["SET", "m:" + r.id, Object.hasOwn(r, "__proto__") + " " + r.__proto__ + " " + Object.keys(r).join(",")]]')
    const mapped = await runCli(['import', file, '--dry-run', 'text', '--map', map])
    expect(mapped.stdout).toBe('SET m:1 "true a id,__proto__"\nSET m:2 "true b id,__proto__"\n')
  })

  it('a struct\'s field (DuckDB writes it): by path and in the struct\'s JSON', async () => {
    const file = await writeQuery(path.join(dir, 'proto-struct.parquet'), "SELECT i AS id, {'__proto__': 'p' || i, 'b': i} AS st FROM range(1, 3) r(i)")
    const res = await dryRun(file, ['SET f:{id} {st.__proto__}', 'SET s:{id} {st}'])
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toBe('SET f:1 p1\nSET s:1 "{\\"__proto__\\":\\"p1\\",\\"b\\":1}"\nSET f:2 p2\nSET s:2 "{\\"__proto__\\":\\"p2\\",\\"b\\":2}"\n')
  })
})

describe('strings that are not UTF-8 are refused, not sent as U+FFFD', () => {
  const bad = Buffer.from([0x61, 0xff, 0x62])
  const reason = 'a string value is not UTF-8 (its byte 2 of 3 is 0xff), which Redis would get as U+FFFD'

  it('in a PLAIN page and in a dictionary, as text rows and as records, with workers too: exit 3, nothing sent', async () => {
    const dict = plainBytes(['ok', bad])
    const indices = dictionaryIndices([0, 1])
    const files = {
      plain: write('utf8-plain.parquet', idAnd('s', ['ok', bad])),
      dictionary: write('utf8-dict.parquet', idAnd('s', ['ok', bad], {
        pages: [{ kind: 'dictionary', values: 2, body: dict, size: dict.length }, { kind: 'data', values: 2, encoding: 'RLE_DICTIONARY', body: indices, size: indices.length }]
      })),
      json: write('utf8-json.parquet', idAnd('s', ['"ok"', bad], { converted: 'JSON' })) // text too, not decoded by hyparquet
    }
    for (const [kind, file] of Object.entries(files)) {
      for (const commands of [['SET k:{id} {s}'], ['SET k:{id} {$}']]) {
        for (const extra of WORKERS) {
          const res = await dryRun(file, commands, extra)
          expect(res.code, `${kind} ${commands} ${extra}: ${res.stderr}`).toBe(3)
          expect(res.stderr).toContain(`${path.basename(file)}: row group 0 (rows 1-2), column "s": cannot be read: ${reason}`)
          expect(res.stderr).not.toMatch(NO_STACK)
          expect(res.stdout).toBe('')
        }
      }
    }
  })

  it('bytes (no STRING type) are sent as they are', async () => {
    const file = write('bytes.parquet', idAnd('s', ['ok', bad], { converted: null }))
    const res = await runCli(['import', file, '--dry-run', 'resp', '-c', 'SET k:{id} {s}'])
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdoutBytes.includes(Buffer.concat([Buffer.from('$3\r\n'), bad, Buffer.from('\r\n')]))).toBe(true)
  })
})

describe('a dictionary index past the dictionary', () => {
  it('fails the row group before any of its rows is sent, as text rows and as records, with workers too', async () => {
    // 100 rows over a dictionary of 25 entries: rows 26-100 point past it.
    const entries = plainBytes(Array.from({ length: 25 }, (_, i) => `e${i}`))
    const indices = dictionaryIndices(Array.from({ length: 100 }, (_, i) => i))
    const file = write('dict-range.parquet', idAnd('s', Array.from({ length: 100 }, () => ''), {
      pages: [{ kind: 'dictionary', values: 25, body: entries, size: entries.length }, { kind: 'data', values: 100, encoding: 'RLE_DICTIONARY', body: indices, size: indices.length }]
    }))
    for (const commands of [['SET k:{id} {s}'], ['HSET k:{id} *'], ['SET k:{id} {$}']]) {
      for (const extra of WORKERS) {
        const res = await dryRun(file, commands, extra)
        expect(res.code, `${commands} ${extra}: ${res.stderr}`).toBe(3)
        expect(res.stderr).toContain('dict-range.parquet: row group 0 (rows 1-100), column "s": cannot be read: a dictionary-encoded page\'s value 26 is entry 25 of a dictionary of 25 entries')
        expect(res.stderr).not.toMatch(NO_STACK)
        expect(res.stdout).toBe('')
      }
    }
  })

  it('in a struct (hyparquet assembles it): refused, not sent as null', async () => {
    const entries = plainBytes(['x'])
    // Definition levels: both rows' struct present (an RLE run of 2 of level 1, width 1); indices 0, 5.
    const levels = Buffer.concat([varint(2 << 1), Buffer.from([1])])
    const length = Buffer.alloc(4)
    length.writeUInt32LE(levels.length)
    const body = Buffer.concat([length, levels, dictionaryIndices([0, 5])])
    const file = write('dict-struct.parquet', parquetFile({
      schema: [{ name: 'schema', children: 2 }, { name: 'id', type: 'INT32', repetition: 'REQUIRED' },
        { name: 'st', repetition: 'OPTIONAL', children: 1 }, { name: 'a', type: 'BYTE_ARRAY', repetition: 'REQUIRED', converted: 'UTF8' }],
      rowGroups: [{
        rows: 2,
        columns: [
          { path: ['id'], type: 'INT32', pages: [{ kind: 'data', values: 2, encoding: 'PLAIN', body: plainInt32([1, 2]) }] },
          { path: ['st', 'a'], type: 'BYTE_ARRAY', pages: [{ kind: 'dictionary', values: 1, body: entries }, { kind: 'data', values: 2, encoding: 'RLE_DICTIONARY', body }] }
        ]
      }]
    }))
    for (const extra of WORKERS) {
      const res = await dryRun(file, ['SET k:{id} {st}'], extra)
      expect(res.code, res.stderr).toBe(3)
      expect(res.stderr).toContain('dict-struct.parquet: row group 0 (rows 1-2), column "st": cannot be read: a value its page does not hold (a dictionary index past the dictionary, or fewer values than its levels say)')
      expect(res.stderr).not.toMatch(NO_STACK)
      expect(res.stdout).toBe('')
    }
  })

  it('a page of more values than the row group has rows (2^28 indices in one RLE run of a few bytes): refused before its array is made', async () => {
    const file = write('dict-count.parquet', oneColumn({
      name: 'id', type: 'INT64', rows: 1, pages: [{ kind: 'dictionary', values: 1, body: plainInt64([7n]) },
        { kind: 'data', values: 2 ** 28, encoding: 'RLE_DICTIONARY', body: Buffer.concat([Buffer.from([1]), varint(2 ** 29), Buffer.from([0])]) }]
    }))
    for (const extra of WORKERS) {
      const res = await dryRun(file, ['SET k:{id} {id}'], extra)
      expect(res.code, res.stderr).toBe(3)
      expect(res.stderr).toContain('dict-count.parquet: row group 0 (rows 1-1), column "id": cannot be read: a page of 268435456 values where the row group has 1 rows left')
    }
  })

  it('a dictionary-encoded page without a dictionary is refused too', async () => {
    const indices = dictionaryIndices([0, 0])
    const file = write('no-dict.parquet', idAnd('s', ['', ''], { pages: [{ kind: 'data', values: 2, encoding: 'RLE_DICTIONARY', body: indices, size: indices.length }] }))
    for (const commands of [['SET k:{id} {s}'], ['SET k:{id} {$}']]) {
      const res = await dryRun(file, commands)
      expect(res.code, res.stderr).toBe(3)
      expect(res.stderr).toContain('column "s": cannot be read: a dictionary-encoded page without a dictionary page before it')
    }
  })
})

/** A file whose one column is an INT32 leaf under `depth` nested optional groups, one row (42). */
function nested (depth) {
  const schema = [{ name: 'schema', children: 1 }]
  const names = []
  for (let i = 0; i < depth; i++) {
    schema.push({ name: `g${i}`, repetition: 'OPTIONAL', children: 1 })
    names.push(`g${i}`)
  }
  schema.push({ name: 'leaf', type: 'INT32', repetition: 'OPTIONAL' })
  names.push('leaf')
  // One definition level, the deepest (every group and the leaf present): an RLE run of one.
  const width = Math.ceil(Math.log2(depth + 2))
  const level = Buffer.alloc(Math.ceil(width / 8))
  level.writeUIntLE(depth + 1, 0, level.length)
  const levels = Buffer.concat([varint(1 << 1), level])
  const length = Buffer.alloc(4)
  length.writeUInt32LE(levels.length)
  const body = Buffer.concat([length, levels, plainInt32([42])])
  return parquetFile({ schema, rowGroups: [{ rows: 1, columns: [{ path: names, type: 'INT32', pages: [{ kind: 'data', values: 1, encoding: 'PLAIN', body, size: body.length }] }] }] })
}

describe('a schema that is no tree, or nests too deep', () => {
  it('5,000 levels: exit 3, the footer refused with why, no stack trace; 999 still read', async () => {
    const deep = write('deep.parquet', nested(5000))
    for (const extra of WORKERS) {
      for (const commands of [['SET k {g0}'], ['SET k 1']]) {
        const res = await dryRun(deep, commands, extra)
        expect(res.code, res.stderr).toBe(3)
        expect(res.stderr).toContain('deep.parquet: cannot read the Parquet footer (a Parquet file is read from its end): its schema nests columns more than 1000 levels deep')
        expect(res.stderr).not.toMatch(NO_STACK)
      }
    }
    const refused = await dryRun(write('deep-1000.parquet', nested(1000)), ['SET k 1'])
    expect(refused.code).toBe(3)
    const ok = await dryRun(write('deep-999.parquet', nested(999)), ['SET k {g0.g1.g2}'])
    expect(ok.code, ok.stderr).toBe(0)
    let expected = '{"leaf":42}'
    for (let i = 998; i >= 3; i--) expected = `{"g${i}":${expected}}`
    expect(ok.stdout).toBe(`SET k ${JSON.stringify(expected)}\n`)
  }, scaledMs(60_000))

  it('malformed: elements missing, left over, or a negative number of children: exit 3, no stack trace', async () => {
    const int = { type: 'INT32', repetition: 'REQUIRED' }
    const cases = [
      [[{ name: 'schema', children: 3 }, { name: 'id', ...int }], 'its schema ends within its root: 2 of its elements are missing'],
      [[{ name: 'schema', children: 2 }, { name: 'st', repetition: 'OPTIONAL', children: 4 }, { name: 'a', ...int }], 'its schema ends within a group 1 levels deep: 3 of its elements are missing'],
      [[{ name: 'schema', children: 1 }, { name: 'id', ...int }, { name: 'x', ...int }], 'its schema has 1 elements after the last of its root\'s 1 columns'],
      [[{ name: 'schema', children: 1 }, { name: 'st', repetition: 'OPTIONAL', children: -1 }], 'its schema element "st" has -1 children'],
      [[], 'its schema has no elements']
    ]
    for (const [schema, reason] of cases) {
      const file = write('malformed.parquet', parquetFile({ schema, rowGroups: [{ rows: 0, columns: [] }] }))
      for (const extra of WORKERS) {
        const res = await dryRun(file, ['SET k 1'], extra)
        expect(res.code, `${reason}: ${res.stderr}`).toBe(3)
        expect(res.stderr).toContain(`malformed.parquet: cannot read the Parquet footer (a Parquet file is read from its end): ${reason}`)
        expect(res.stderr).not.toMatch(NO_STACK)
      }
    }
  })
})

describe('the rejects file\'s raw of a Parquet row', () => {
  it('writes 64-bit integers and decimals as their exact text, as text rows, as records and with workers', async () => {
    // id: INT64 past 2^53; price: DECIMAL(18, 2) in an INT64; name: null in row 1 (the row fails).
    const ids = ['9007199254740993', '-9223372036854775807']
    const prices = ['1234567890123456.78', '12.30']
    const unscaled = prices.map(p => BigInt(p.replace('.', '')))
    const name = plainBytes(['b'])
    const file = write('exact.parquet', parquetFile({
      schema: [{ name: 'schema', children: 3 }, { name: 'id', type: 'INT64', repetition: 'REQUIRED' },
        { name: 'price', type: 'INT64', repetition: 'REQUIRED', converted: 'DECIMAL', scale: 2, precision: 18 },
        { name: 'name', type: 'BYTE_ARRAY', repetition: 'OPTIONAL', converted: 'UTF8' }],
      rowGroups: [{
        rows: 2,
        columns: [
          { path: ['id'], type: 'INT64', pages: [{ kind: 'data', values: 2, encoding: 'PLAIN', body: plainInt64(ids), size: 16 }] },
          { path: ['price'], type: 'INT64', pages: [{ kind: 'data', values: 2, encoding: 'PLAIN', body: plainInt64(unscaled), size: 16 }] },
          // Definition levels 0, 1 (bit-packed: one group of 8, width 1), then the one value.
          { path: ['name'], type: 'BYTE_ARRAY', pages: [{ kind: 'data', values: 2, encoding: 'PLAIN', body: optionalLevels([0, 1], name) }] }
        ]
      }]
    }))
    const rejects = path.join(dir, 'rejects.ndjson')
    for (const commands of [['SET k:{id} {price} {name}'], ['SET k:{id} {name}', 'SET j:{id} {$}']]) {
      for (const extra of WORKERS) {
        const res = await dryRun(file, commands, ['--on-error', 'skip', '--rejects', rejects, ...extra])
        expect(res.code, res.stderr).toBe(1)
        const lines = fs.readFileSync(rejects, 'utf8').trim().split('\n').map(l => JSON.parse(l))
        expect(lines.length).toBe(1)
        expect(lines[0]).toMatchObject({ line: 1, code: 'PIPELOAD_FIELD_MISSING' })
        expect(lines[0].raw).toBe(`{"id":${ids[0]},"price":${prices[0]},"name":null}`)
      }
    }
  })
})

/** A page body of an OPTIONAL column: its definition levels (bit-packed, width 1, after their length), then `values`. */
function optionalLevels (defs, values) {
  let bits = 0
  defs.forEach((d, i) => { bits |= d << i })
  const levels = Buffer.from([(1 << 1) | 1, bits])
  const length = Buffer.alloc(4)
  length.writeUInt32LE(levels.length)
  return Buffer.concat([length, levels, values])
}
