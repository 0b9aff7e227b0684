'use strict'

// The one list of error replies that say "not now", for one server (pipe.js), each cluster
// node (cluster.js) and a connection's setup (connection.js: a reconnect refused this way
// is tried again): the server is loading its data, busy with a script, a replica without
// its master, a cluster slot being moved, a cluster without a quorum. Another attempt may
// be answered; the command is not the record's failure. The code is the reply's first
// word: BUSYKEY and BUSYGROUP are not BUSY. (There were three lists: one server's lacked
// CLUSTERDOWN, which a cluster node used with --no-cluster sends, and missed a code with no
// text after it; the other two took any word boundary after the code.)
const NOT_READY = /^(?:LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)(?: |$)/

/** Is this error reply (its message) one that says "not now"? */
function notReady (message) {
  return NOT_READY.test(message)
}

module.exports = { notReady }
