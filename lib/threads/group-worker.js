'use strict'

// A parse worker's side of a Parquet input read in parallel (./row-groups.js):
// each row group it is given is read (its projected columns only), decoded, converted,
// mapped and encoded on its own, as the sequential reader would read it, and its batches go
// back to the loader, which sends them in file order. A row group needs nothing from the
// ones before it: where its rows are and how many records come before it are known from
// the footer, so it is encoded at once, numbered in the whole run ({$n}) and the file ({$line}).

const { formatOf } = require('../read/formats')
const { Chain } = require('../encode/chain')

class GroupEncoder {
  /**
   * @param {{ name, path, metadata, columns, shape }} input the file, its footer (read once by
   *   the loader, so no worker reads it again), the columns to read, the mapper's shape
   * @param {object} o the worker's load options (workerOptions)
   */
  constructor (input, o) {
    this.input = input
    this.o = o
    this.mapper = null
    this.opening = formatOf('parquet').entry().openFile(input.path, input.name, input.metadata)
    this.opening.catch(() => {}) // its error is the first group's
  }

  /**
   * Row group `g`, its first `drop` rows left out (--resume), encoded; `before`: records of the
   * run before its first. Each batch goes to `emit` as soon as it is encoded, its last with
   * `last` true, so that the loader sends the group while it is encoded and no worker holds a
   * whole group's RESP. Throws what the sequential reader throws for this group (a page that
   * cannot be read names file, row group and column), before any batch of it.
   * Batches' `bytesRead`: how far through the file their rows are, as on one thread.
   */
  async encode ({ g, drop, before }, free, emit) {
    const pf = await this.opening
    const chain = new Chain(this.o, { mapper: this.mapper, shape: this.input.shape, skip: drop, before, free })
    this.mapper = chain.mapper
    const text = Boolean(this.input.shape.parquetColumns) // the loader chose text rows (read/parquet/input.js)
    const batches = pf.batches(this.input.columns, { fromGroup: g, toGroup: g + 1, text, names: Boolean(this.input.shape.parquetNames) })
    let held = null // the latest batch: the last one is known only at the end
    const out = batch => {
      if (held !== null) emit(held, false)
      held = batch
    }
    for await (const b of batches) {
      for (const batch of chain.add(b)) out(batch)
      if (chain.stopped) break
    }
    if (!chain.stopped) {
      chain.checkSkipped()
      out(chain.take())
    }
    emit(held, true)
  }

  async close () {
    try {
      const pf = await this.opening
      await pf.close()
    } catch {}
  }
}

module.exports = { GroupEncoder }
