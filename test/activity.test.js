'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// lib/send/activity.js: how long a connection has been quiet, counted without a clock read
// per reply (the timeout checks of Pipe and the cluster's nodes, the cluster's progress).
const { Activity } = require('../lib/send/activity')

const pause = ms => new Promise(resolve => setTimeout(resolve, ms)) // time passing is what is tested
// Quiet for a pause of QUIET ms, and just made busy: under half of it (not a few ms, which a
// loaded machine can pass between two lines of a test).
const QUIET = 200

describe('Activity', () => {
  it('quiet since it was made while nothing is counted', async () => {
    const a = new Activity()
    await pause(QUIET)
    expect(a.quietMs()).toBeGreaterThanOrEqual(QUIET - 5)
  })

  it('a reply counted since the last look makes it quiet from this look on', async () => {
    const a = new Activity()
    await pause(QUIET)
    expect(a.quietMs()).toBeGreaterThanOrEqual(QUIET - 5)
    a.count++
    expect(a.quietMs()).toBeLessThan(QUIET / 2)
    await pause(QUIET)
    expect(a.quietMs()).toBeGreaterThanOrEqual(QUIET - 5) // the same count: still quiet since the look
  })

  it('touch() marks progress now', async () => {
    const a = new Activity()
    await pause(QUIET)
    a.touch()
    expect(a.quietMs()).toBeLessThan(QUIET / 2)
  })
})
