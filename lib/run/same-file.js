'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { PipeloadError } = require('../errors')

// An output that is also an input (`--rejects data.csv`, `--checkpoint data.csv`, a --map
// module or a --tls-* file as either, or the checkpoint and the rejects file one path) would
// be truncated or replaced before it is read: refused before anything is opened. Paths are
// compared as files, not as text: an existing regular file by device and inode (a symlink,
// `./x` and `x`, a hard link: one file), a path not there yet by its real directory and name.

/**
 * What identifies the file at `file`; null for something that is not a regular file (a
 * device such as /dev/stderr, a pipe): writing to it destroys nothing.
 */
function fileKey (file) {
  let st = null
  try { st = fs.statSync(file) } catch {} // not there, or a path under a file: the run's own check names it
  if (st) return st.isFile() ? `${st.dev}:${st.ino}` : null
  let dir = path.dirname(path.resolve(file))
  try { dir = fs.realpathSync(dir) } catch {}
  return path.join(dir, path.basename(file))
}

/**
 * Throw PIPELOAD_OPTION_INVALID when an output is one of the inputs or another output.
 * @param {{ option: string, file: string }[]} outputs the files the run writes, by the option naming them
 * @param {{ what: string, file: string }[]} inputs the files it reads ('the input', 'the --map module', …)
 */
function refuseOutputsOverInputs (outputs, inputs) {
  const known = []
  for (const i of inputs) {
    const key = fileKey(i.file)
    if (key !== null) known.push({ key, what: `${i.what} ${i.file}`, why: 'it would be overwritten before it is read' })
  }
  for (const o of outputs) {
    const key = fileKey(o.file)
    if (key === null) continue
    const same = known.find(k => k.key === key)
    if (same) {
      throw new PipeloadError('PIPELOAD_OPTION_INVALID', `${o.option} ${o.file} is ${same.what}: ${same.why}; choose another path`, { option: o.option, file: o.file })
    }
    known.push({ key, what: `the same file as ${o.option} ${o.file}`, why: 'each output needs its own file' })
  }
}

module.exports = { refuseOutputsOverInputs, fileKey }
