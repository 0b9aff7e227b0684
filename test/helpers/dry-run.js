'use strict'

const { PassThrough } = require('node:stream')
const { load } = require('../../lib')

/**
 * A dry run (RESP unless options say otherwise) into memory: the bytes written, the summary
 * (the error's summary when the run stopped), and the error (null when it did not).
 */
async function dryRunIntoMemory (options) {
  const output = new PassThrough()
  const chunks = []
  output.on('data', c => chunks.push(c))
  let summary = null
  let error = null
  try {
    summary = await load({ dryRun: 'resp', output, ...options })
  } catch (err) {
    error = err
    summary = err.summary ?? null
  }
  return { bytes: Buffer.concat(chunks), summary, error }
}

module.exports = { dryRunIntoMemory }
