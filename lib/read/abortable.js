'use strict'

const { PipeloadError } = require('../errors')

// A read can wait for ever: a FIFO no process writes to, stdin or a stream that stalls, an
// async iterable that never yields, a parse worker waiting for one of these. Each such wait
// is raced against the run's AbortSignal, so aborting (Ctrl-C, SIGTERM, the library's
// `signal`) ends it at once with PIPELOAD_ABORTED, however long the input stays silent.
// One listener per reader, not one per read; and never Promise.race() against a promise
// that only settles on abort: each call would leave a reaction on it until then.

const aborted = () => new PipeloadError('PIPELOAD_ABORTED', 'the load was aborted')

class AbortRace {
  /**
   * @param {AbortSignal|null|undefined} signal
   * @param {() => Error} error the error a wait ends with on abort
   */
  constructor (signal, error = aborted) {
    this.signal = signal || null
    this.error = error
    this.reject = null // the wait in progress
    this.listener = null
    if (this.signal === null || this.signal.aborted) return
    this.listener = () => {
      this.listener = null
      const reject = this.reject
      this.reject = null
      if (reject) reject(this.error())
    }
    this.signal.addEventListener('abort', this.listener, { once: true })
  }

  /** What `promise` settles with, or PIPELOAD_ABORTED as soon as the signal aborts (its later outcome is dropped). */
  wait (promise) {
    if (this.signal === null) return promise
    if (this.signal.aborted) {
      promise.then(null, () => {})
      return Promise.reject(this.error())
    }
    return new Promise((resolve, reject) => {
      this.reject = reject
      const done = () => { if (this.reject === reject) this.reject = null }
      promise.then(v => { done(); resolve(v) }, e => { done(); reject(e) })
    })
  }

  close () {
    if (this.listener !== null) this.signal.removeEventListener('abort', this.listener)
    this.listener = null
  }
}

/**
 * The values of an async iterable, each wait for the next raced against `signal`. Ended by
 * its consumer, it ends the iterable (as for-await does); aborted, it asks the iterable to
 * end without waiting for it (a next() still pending would hold the answer back).
 * `error`: what the wait ends with on abort (PIPELOAD_ABORTED).
 */
async function * abortable (iterable, signal, error = aborted) {
  const it = iterable[Symbol.asyncIterator]()
  const race = new AbortRace(signal, error)
  let atYield = false
  let wasAborted = false
  try {
    for (;;) {
      let r
      try {
        r = await race.wait(it.next())
      } catch (err) {
        wasAborted = Boolean(signal?.aborted) && err?.code === 'PIPELOAD_ABORTED'
        throw err
      }
      if (r.done) return
      atYield = true
      yield r.value
      atYield = false
    }
  } finally {
    race.close()
    if (atYield && typeof it.return === 'function') await it.return()
    else if (wasAborted && typeof it.return === 'function') {
      try { Promise.resolve(it.return()).catch(() => {}) } catch {}
    }
  }
}

module.exports = { AbortRace, abortable, aborted }
