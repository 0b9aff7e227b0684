'use strict'

// The output formats of `pipeload export`, by name: each module exports
// createWriter(out, options) → { write(record) → undefined | Promise, async end() }
// (docs/export.md). Loaded on first use, so a run pulls in only its own format's code
// (Parquet's writer library is an ES module, imported when a Parquet export begins).
// ndjson is added by the engine's side of issue 36; the merge combines the two lists.

module.exports = {
  csv: () => require('./csv'),
  parquet: () => require('./parquet')
}
