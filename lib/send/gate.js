'use strict'

// One waiter for "room to send" or "all acknowledged": the sender awaits wait(ready), and
// every event that may change the answer (a reply, a drain, a reconnect) calls wake(). A
// fatal error, once `failure()` returns one, rejects the waiter instead.

class Gate {
  /** @param {() => Error|null} failure the error that ends all waiting, if any */
  constructor (failure) {
    this.failure = failure
    this.waiter = null
  }

  wait (ready) {
    const fatal = this.failure()
    if (fatal) return Promise.reject(fatal)
    if (ready()) return Promise.resolve()
    return new Promise((resolve, reject) => { this.waiter = { ready, resolve, reject } })
  }

  wake () {
    const w = this.waiter
    if (!w) return
    const fatal = this.failure()
    if (fatal) { this.waiter = null; w.reject(fatal) } else if (w.ready()) { this.waiter = null; w.resolve() }
  }
}

module.exports = { Gate }
