'use strict'

const { openChain } = require('../encode/chain')

// The chain of an input run on this thread (--workers 0; records and map(), which cannot
// cross to a worker; a Parquet file read through a URL's one Range reader).

/**
 * Encoded batches from the input, encoded on this thread; `at`: `skip`, its first records,
 * dropped (--resume); `before`: records of the run before its first ({$n}).
 */
async function openHere (input, o, { skip = 0, before = skip } = {}) {
  const src = await openChain(input, o, { skip, before })
  const batches = src.batches
  return {
    batches,
    resumeShape: src.resumeShape,
    close: async () => {
      input.stream?.destroy?.() // a read still waiting on an idle stream ends now
      const closed = batches.return()
      // Aborted while an iterable's next() was pending (Run.pump stopped waiting for it): the
      // return waits behind that next(), which may never settle. Not awaited: the run ends.
      if (input.kind === 'records' && o.signal?.aborted) closed.catch(() => {})
      else await closed
    }
  }
}

module.exports = { openHere }
