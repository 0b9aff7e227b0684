'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

const os = require('node:os')
const { normalizeLoadOptions } = require('../lib/options')

describe('load options: worker', () => {
  const base = { input: 'x.csv', key: 'k:{id}' }
  it('is off by default, on when asked, and "auto" means more than 2 cores', () => {
    expect(normalizeLoadOptions(base).worker).toBe(false)
    expect(normalizeLoadOptions({ ...base, worker: true }).worker).toBe(true)
    expect(normalizeLoadOptions({ ...base, worker: 'auto' }).worker).toBe(os.availableParallelism() > 2)
  })
})
