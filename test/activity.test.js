'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// lib/send/activity.js: how long a connection has been quiet, counted without a clock read
// per reply (the timeout checks of Pipe and the cluster's nodes, the cluster's progress).
const { Activity } = require('../lib/send/activity')

const pause = ms => new Promise(resolve => setTimeout(resolve, ms)) // time passing is what is tested

describe('Activity', () => {
  it('quiet since it was made while nothing is counted', async () => {
    const a = new Activity()
    await pause(40)
    expect(a.quietMs()).toBeGreaterThanOrEqual(35)
  })

  it('a reply counted since the last look makes it quiet from this look on', async () => {
    const a = new Activity()
    await pause(40)
    expect(a.quietMs()).toBeGreaterThanOrEqual(35)
    a.count++
    expect(a.quietMs()).toBeLessThan(10)
    await pause(40)
    expect(a.quietMs()).toBeGreaterThanOrEqual(35) // the same count: still quiet since the look
  })

  it('touch() marks progress now', async () => {
    const a = new Activity()
    await pause(40)
    a.touch()
    expect(a.quietMs()).toBeLessThan(10)
  })
})
