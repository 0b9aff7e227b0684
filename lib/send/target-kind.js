'use strict'

const { ask } = require('./connection')

// Which sink a server gets: a cluster node the cluster sink (cluster.js), any other server a
// Pipe. Asked before either is loaded, so that a run into one server loads no cluster code.

/**
 * Is the server behind this control client a cluster node? (INFO cluster; false when not
 * allowed.) Bounded by `ms` and `signal`: a server that does not answer is an error, not "no".
 */
async function isCluster (control, { ms, said, signal } = {}) {
  if (control.isCluster) return true
  const info = await ask(control, 'while asking INFO cluster whether it is a cluster node (--no-cluster skips this)',
    () => control.info('cluster').catch(() => ''), { ms, said, signal })
  return /^cluster_enabled:1\b/m.test(info)
}

module.exports = { isCluster }
