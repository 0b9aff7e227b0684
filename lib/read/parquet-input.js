'use strict'

const fs = require('node:fs')
const { openParquetFile } = require('./parquet')

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
 * @returns {Promise<{ batches: AsyncIterable<object>, shape: { file }, empty: false, resumeShape: () => object }>}
 */
async function openParquetRecords (desc, o) {
  const pf = await openParquetFile(desc.name, desc.path)
  let columns
  try {
    // map() gets the whole record; templates their columns only.
    columns = pf.projection(o.map ? null : o.fieldsUsed)
  } catch (err) {
    await pf.close()
    throw err
  }
  return {
    batches: closing(pf, pf.batches(columns)),
    shape: { file: desc.name },
    empty: false,
    parquet: pf,
    resumeShape: () => ({ gzip: false, columns: null, fields: null })
  }
}

/** The batches, then the file closed (also when the consumer stops early or reading fails). */
async function * closing (pf, batches) {
  try {
    yield * batches
  } finally {
    await pf.close()
  }
}

module.exports = { openParquetRecords, isParquetFile }
