'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// pipeload export from a 3-master cluster: given any node, every master is read; the file
// holds every key the test wrote (its own ioredis Cluster client) exactly once.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startCluster } = require('./helpers/cluster')
const { runCli } = require('./helpers/run-cli')
const { writeDataset, readExport, comparable } = require('./helpers/export-data')

describe('export from a cluster', () => {
  let cluster, client, tmp, want
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 })
    client = cluster.client()
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeload-export-cluster-'))
    // Key by key: a pipeline of an ioredis Cluster sends each command to its slot's master.
    want = await writeDataset(client, 'c:', { big: 1500, small: 200 })
  })
  afterAll(async () => {
    await cluster?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('reads every master side by side, from any node', async () => {
    const file = path.join(tmp, 'cluster.ndjson')
    const r = await runCli(['export', file, '-u', cluster.nodes[2].url, '--batch-size', '100', '--page-size', '100', '--json'])
    expect(r.code).toBe(0)
    const got = readExport(fs.readFileSync(file, 'utf8'))
    expect(comparable(got.keys)).toEqual(comparable(want))
    const s = JSON.parse(r.stdout)
    expect(s.masters.length).toBe(3)
    expect(s.keys).toBe(want.size)
    expect(s.total).toBe(want.size)
  })
})
