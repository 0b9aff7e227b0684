'use strict'

const fs = require('node:fs')
const { PipeloadError } = require('../errors')

// What an output path may be, checked before it is opened.
// - The checkpoint is replaced by renaming a new file over its path. Over anything but a
//   regular file that destroys what is there: as root, `--checkpoint /dev/null` put a plain
//   file where the device was; over a symlink, the link goes. So only a regular file or a
//   path not there yet is taken, at the start and before every rename; its temporary file is
//   opened without following a symlink, and must be a regular file too.
// - The rejects file is written into, never renamed over: a character device (/dev/stderr,
//   /dev/null) or a pipe someone reads is a fine place for it. A FIFO no process reads
//   would block the open (and with it the whole process: Ctrl-C too) until one does; a
//   block device would have its data overwritten: both are refused.

const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW, O_NONBLOCK } = fs.constants

/** What a file that is neither regular nor a directory is, in words; null for those two. */
function specialKind (st) {
  if (st.isSymbolicLink()) return 'a symbolic link'
  if (st.isFIFO()) return 'a FIFO (named pipe)'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isSocket()) return 'a socket'
  return null
}

/** lstat, or null when it cannot say (not there, a path under a file: opening it tells). */
function lstatOrNull (file) {
  try {
    return fs.lstatSync(file, { throwIfNoEntry: false }) ?? null
  } catch {
    return null
  }
}

/** Why the checkpoint may not be renamed over `file` (a device, a FIFO, a symlink…), or null. */
function notReplaceable (file) {
  const st = lstatOrNull(file)
  const kind = st && specialKind(st)
  if (!kind) return null
  let to = ''
  if (st.isSymbolicLink()) try { to = ` to ${fs.readlinkSync(file)}` } catch {}
  return `it is ${kind}${to}, not a regular file`
}

/** Refuse a --checkpoint path that a rename would destroy: before anything is read or sent. */
function refuseCheckpointPath (file) {
  const why = notReplaceable(file)
  if (why === null) return
  throw new PipeloadError('PIPELOAD_OPTION_INVALID',
    `checkpoint ${file} cannot be written: ${why}; a checkpoint is replaced by renaming a new file over its path, which would replace it: give the path of a regular file, or of one not there yet`,
    { option: 'checkpoint', file })
}

/**
 * Open the checkpoint's temporary file for writing, truncated: never through a symlink,
 * never waiting for a FIFO's reader, and only a regular file (what is there is renamed over
 * the checkpoint).
 */
function openTemp (tmp) {
  let fd
  try {
    fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK, 0o666)
  } catch (err) {
    if (err.code === 'ELOOP') throw notRegular(tmp, 'a symbolic link')
    if (err.code === 'ENXIO') throw notRegular(tmp, 'a FIFO (named pipe)')
    throw err
  }
  const st = fs.fstatSync(fd)
  if (!st.isFile()) {
    fs.closeSync(fd)
    throw notRegular(tmp, specialKind(st) || 'not a regular file')
  }
  return fd
}

function notRegular (file, kind) {
  return Object.assign(new Error(`its temporary file ${file} is ${kind}, not a regular file`), { code: 'ENOTREG' })
}

/**
 * Open the rejects file (`flags`: 'w' or 'a'). A FIFO with no reader, a socket and a block
 * device are refused with the reason (an Error with code ENOTREG); other errors are open's.
 */
function openRejects (file, flags) {
  let st = null
  try { st = fs.statSync(file, { throwIfNoEntry: false }) ?? null } catch {} // open says why
  if (st && st.isBlockDevice()) {
    throw Object.assign(new Error('it is a block device: writing to it would overwrite the data on the device'), { code: 'ENOTREG' })
  }
  if (st && st.isSocket()) throw Object.assign(new Error('it is a socket, which cannot be opened as a file'), { code: 'ENOTREG' })
  if (st && st.isFIFO()) {
    // Without a reader a plain open would wait for one, holding the process; O_NONBLOCK
    // fails at once instead (ENXIO). Opened again as usual then: writes wait for the reader.
    let probe
    try {
      probe = fs.openSync(file, O_WRONLY | O_NONBLOCK)
    } catch (err) {
      if (err.code === 'ENXIO') throw Object.assign(new Error('it is a FIFO (named pipe) that no process has open for reading: start its reader first'), { code: 'ENOTREG' })
      throw err
    }
    try {
      return fs.openSync(file, flags)
    } finally {
      fs.closeSync(probe)
    }
  }
  return fs.openSync(file, flags)
}

module.exports = { refuseCheckpointPath, notReplaceable, openTemp, openRejects, specialKind }
