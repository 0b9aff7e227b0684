'use strict'

const { displayUrl } = require('../read/http-input')
const { formatOf } = require('../read/formats')

// --resume of an http(s) input. The checkpoint's `next` says where the record after the
// acknowledged prefix starts (byte offset, line, CSV header, fields per record): a server
// that accepts ranges sends only the bytes from there (Range, conditioned by If-Range on
// the validator the checkpoint kept), and the reader starts mid-input. Otherwise the input
// is downloaded again from its start and the loaded records are skipped, as for a file;
// the notice says why. Whether the resource is unchanged is decided by checkResumable,
// from the validators of whichever response came.

/**
 * The Range request to make for `state` (null: none), or why the input is read from its
 * start. `input` is the URL's description before its response (format from the path or
 * --format, when known); `shard`: --shard's, whose chunk numbers need the whole body.
 */
function rangePlan (checkpoint, state, input, { shard = null, restore = false } = {}) {
  if (!state || state.records === 0) return { range: null, reason: null }
  // A restore's part lines need the lines of their key before them (lib/encode/restore.js).
  if (restore) return { range: null, reason: 'a restore reads a dump from its start (a part of a key follows the lines before it)' }
  // Parquet is read by ranges anyway: the row groups before the first row to load are not requested.
  if (formatOf(input.format).ranges) return { range: null, reason: null }
  if (shard) return { range: null, reason: 'a shard counts its chunks from the start of the input' }
  const was = state.input || {}
  const next = state.next
  // Another URL: refused by checkResumable once the response is in.
  if (was.url !== displayUrl(input.url)) return { range: null, reason: null }
  if (input.format != null && !formatOf(input.format).midway) return { range: null, reason: 'a JSON document cannot be read from its middle' }
  if (!next) return { range: null, reason: 'the checkpoint has no byte position to start from' }
  if (next.gzip) return { range: null, reason: 'a gzip body cannot be read from its middle' }
  // If-Range takes a strong ETag or a date; with neither, checkResumable refuses.
  const strong = typeof was.etag === 'string' && !was.etag.startsWith('W/') ? was.etag : null
  const ifRange = strong ?? was.lastModified ?? null
  if (ifRange === null) return { range: null, reason: was.etag ? 'the server gives only a weak ETag, which a Range request cannot be conditioned on' : null }
  return {
    range: { offset: next.offset, ifRange, checkpoint, etag: was.etag ?? null, lastModified: was.lastModified ?? null, size: was.size ?? null },
    reason: null
  }
}

/**
 * How the run goes on once the response is in: `start` (the reader's, null from the
 * beginning), the records to skip after it, the records before the first one read ({$n}),
 * and the notice for onResume.
 */
function urlResumePlan (state, input, plan) {
  if (!state) return { start: null, skip: 0, before: 0, notice: null }
  const records = state.records
  if (input.range) {
    const n = state.next
    return {
      start: { offset: n.offset, line: n.line, columns: n.columns ?? null, fields: n.fields ?? null },
      skip: records - n.records, // acknowledged after the last known record start (usually 0)
      before: records,
      notice: { input: input.name, records, range: { offset: n.offset, line: n.line }, reason: null }
    }
  }
  const reason = plan.reason ?? (plan.range ? 'the server sent the whole body (HTTP 200), not the range asked for' : null)
  return { start: null, skip: records, before: records, notice: { input: input.name, records, range: null, reason } }
}

module.exports = { rangePlan, urlResumePlan }
