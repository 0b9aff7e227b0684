'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// A worker thread's errors reach the loader as they were thrown: a user's error (a bad
// record, a bad template) keeps its code and position and is not reported as internal.

describe('errors across threads (lib/threads/errors.js)', () => {
  const { serializeError, reviveError } = require('../lib/threads/errors')
  const { PipeloadError } = require('../lib/errors')
  const { structuredClone: clone } = globalThis

  it('a PipeloadError comes back as one, with its code and position', () => {
    const err = new PipeloadError('PIPELOAD_INPUT_INVALID', 'bad row', { file: 'a.csv', line: 7, offset: 120, raw: 'x' })
    const back = reviveError(clone(serializeError(err)))
    expect(back).toBeInstanceOf(PipeloadError)
    expect(back).toMatchObject({ code: 'PIPELOAD_INPUT_INVALID', message: 'bad row', file: 'a.csv', line: 7, offset: 120, raw: 'x' })
  })

  it('any other error stays a plain Error (an internal one), its stack kept', () => {
    const err = new TypeError('oops')
    const back = reviveError(clone(serializeError(err)))
    expect(back).not.toBeInstanceOf(PipeloadError)
    expect(back.message).toBe('oops')
    expect(back.stack).toBe(err.stack)
  })
})
