'use strict'

/** Resolves once `out` drains; rejects if it fails or closes first (it would never drain). */
function drained (out) {
  return new Promise((resolve, reject) => {
    const done = err => {
      out.off('drain', onDrain)
      out.off('error', onError)
      out.off('close', onClose)
      if (err) reject(err)
      else resolve()
    }
    const onDrain = () => done()
    const onError = err => done(err)
    const onClose = () => done(out.errored || Object.assign(new Error('the output closed'), { code: 'EPIPE' }))
    out.on('drain', onDrain)
    out.on('error', onError)
    out.on('close', onClose)
  })
}

module.exports = { drained }
