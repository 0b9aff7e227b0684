'use strict'

const fs = require('node:fs')
const { openParquetFile, ParquetFile } = require('./reader')
const { groupShare, startAfter } = require('./row-groups')
const { skipRecords, tooFew } = require('../skip')

// A described Parquet input (lib/read/input.js) opened as the reader batches the encoder takes:
// the footer read, the templates' columns checked against the schema (before anything is
// sent), then the row groups one after another.

const MAGIC = Buffer.from('PAR1')

/** Whether a file begins with Parquet's magic bytes (a name without a known extension). */
function isParquetFile (path) {
  let fd
  try {
    fd = fs.openSync(path, 'r')
    const head = Buffer.alloc(4)
    return fs.readSync(fd, head, 0, 4, 0) === 4 && head.equals(MAGIC)
  } catch {
    return false // describing it goes on and says what is wrong
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * The row groups a run reads of the file, [from, to), and the rows to drop from the first:
 * its --shard share (desc.shard, { mode: 'groups', index, count }: a contiguous run of row
 * groups, lib/read/parquet/row-groups.js groupShare says why) or every group, less the first `skip`
 * rows (--resume), whose row groups are not read at all. More rows skipped than the share
 * holds: the checkpoint was not written for this input.
 */
function readPlan (pf, desc, skip, checkpoint) {
  const rows = pf.rowGroups.map(g => g.rows)
  const share = desc.shard ? groupShare(rows, desc.shard.index, desc.shard.count) : { from: 0, to: rows.length }
  const start = startAfter(rows, skip, share.from, share.to)
  if (start === null) throw tooFew(skip, rows.slice(share.from, share.to).reduce((a, b) => a + b, 0), checkpoint)
  return { from: start.group, to: share.to, drop: start.drop }
}

/**
 * The input's records from row `skip` of its share on (the caller skips nothing more:
 * `skipped` says so). A template field that is no column fails here, before anything is sent.
 * @returns {Promise<{ batches: AsyncIterable<object>, shape: { file }, empty: false, skipped: number, parquet, columns, plan, resumeShape: () => object }>}
 */
async function openParquetRecords (desc, o, skip = 0) {
  // A URL: its buffer reads by Range requests (opened by lib/read/http-input.js's openUrl).
  const pf = desc.buffer ? await ParquetFile.open({ name: desc.name, buffer: desc.buffer }) : await openParquetFile(desc.name, desc.path)
  let columns, plan
  try {
    // map() gets the whole record; templates their columns only.
    columns = pf.projection(o.map ? null : o.fieldsUsed)
    plan = readPlan(pf, desc, skip, o.checkpoint)
  } catch (err) {
    await pf.close()
    throw err
  }
  // Text rows where the templates need nothing but the columns' bytes (ParquetFile.readsAsText).
  const text = pf.readsAsText(columns, o.map ? null : o.fieldsUsed)
  const names = text && o.fieldsUsed.all // `*`: each value with its column's name before it
  const batches = pf.batches(columns, { fromGroup: plan.from, toGroup: plan.to, text, names })
  return {
    batches: closing(pf, plan.drop ? skipRecords(batches, plan.drop, o.checkpoint) : batches),
    // shard: {$n} is refused, as for every format (a share's records are not numbered from the input's first).
    shape: { file: desc.name, ...(desc.shard ? { shard: desc.shard } : {}), ...(text ? { rows: 'parquet', parquetColumns: columns, parquetNames: names } : {}) },
    empty: false,
    skipped: skip,
    parquet: pf,
    columns,
    plan,
    resumeShape: () => ({ gzip: false, columns: null, fields: null })
  }
}

/**
 * --shard of a Parquet input: which row groups are its share is known once its footer is read
 * (readPlan), so nothing is read here (a URL of several inputs is not even requested yet).
 */
function parquetShare ({ index, count }) {
  return { mode: 'groups', index, count }
}

/** The batches, then the file closed (also when the consumer stops early or reading fails). */
async function * closing (pf, batches) {
  try {
    yield * batches
  } finally {
    await pf.close()
  }
}

module.exports = { openParquetRecords, parquetShare, readPlan, isParquetFile }
