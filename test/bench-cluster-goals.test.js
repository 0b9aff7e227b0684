'use strict'
/* global describe, it, expect */ // vitest globals (see vitest.config.js)

// bench/cluster.js for issue 35 (item 4): the flags each --connections value passes (none for
// a list of just 1, so those runs are today's), and the goals it prints from its rows: one
// process against the best k-process row, each connection count against one connection,
// pipeload against redis-cli --pipe, the peak RSS by parse workers; a speed goal is "not
// measured here" on fewer than 16 cores. The rows are written by hand (rows/s chosen so each
// ratio is known), no server.

const { connectionArgs } = require('../bench/cluster')
const { addRatios, goalLines } = require('../bench/cluster-report')

/** A row as bench/cluster.js measures one (wall from rows/s over 1M rows). */
function row (o) {
  const rowsPerSec = o.rowsPerSec
  return {
    target: o.target, masters: o.masters ?? 0, ioThreads: o.ioThreads ?? null, variant: o.variant, tool: o.tool || 'pipeload',
    workers: o.workers ?? null, workerCount: o.workerCount ?? null, connections: o.connections ?? null, processes: o.processes ?? 1,
    runs: 1, wall: 1e6 / rowsPerSec, rowsPerSec, cpu: 1, mainCpu: null, rssMB: o.rssMB ?? 100, ok: true, errors: []
  }
}

function clusterRows () {
  return [
    row({ target: '1 server (no cluster)', variant: '1 process, --connections 1', connections: 1, rowsPerSec: 300_000, workerCount: 0, rssMB: 120 }),
    row({ target: '1 server (no cluster)', variant: '1 process, --connections 2', connections: 2, rowsPerSec: 270_000, workerCount: 0, rssMB: 121 }),
    row({ target: 'cluster, 3 masters', masters: 3, variant: '1 process, --workers 4, --connections 1', workers: 4, connections: 1, rowsPerSec: 560_000, workerCount: 4, rssMB: 343 }),
    row({ target: 'cluster, 3 masters', masters: 3, variant: '1 process, --workers 4, --connections 2', workers: 4, connections: 2, rowsPerSec: 700_000, workerCount: 4, rssMB: 190 }),
    row({ target: 'cluster, 3 masters', masters: 3, variant: '4 processes (--shard i/4, --workers 0)', workers: 0, processes: 4, rowsPerSec: 720_000, rssMB: 110 })
  ]
}

describe('bench/cluster.js --connections', () => {
  it('passes nothing for a list of just 1, and --connections <n> for every value of any other list', () => {
    expect(connectionArgs({ connections: [1] }, 1)).toEqual([])
    expect(connectionArgs({ connections: [1, 2, 4] }, 1)).toEqual(['--connections', '1'])
    expect(connectionArgs({ connections: [1, 2, 4] }, 4)).toEqual(['--connections', '4'])
    expect(connectionArgs({ connections: ['auto'] }, 'auto')).toEqual(['--connections', 'auto'])
  })
})

describe('bench/cluster.js issue 35 goals', () => {
  it('on 2 cores: the speed goals are "not measured here (2 cores)" with the measured figures, the memory goals met or not', () => {
    const rows = clusterRows()
    addRatios(rows)
    const g = goalLines(rows, { rows: 3_000_000, cpus: 2, server: 'Redis 7.0.15' })[35]
    // 700k / 720k = 97 %.
    expect(g).toContain('3 masters: one process ≥ 95 % of the best k-process row: 97 % (1 process, --workers 4, --connections 2 700,000 rows/s, 4 processes (--shard i/4, --workers 0) 720,000 rows/s): not measured here (2 cores)')
    expect(g).toContain('1 server (no cluster), 1 process, --connections 2: 0.90x --connections 1 (goal ≥ 1.0x without I/O threads: not measured here (2 cores))')
    expect(g).toContain('cluster, 3 masters, 1 process, --workers 4, --connections 2: 1.25x --connections 1 (goal ≥ 1.0x without I/O threads: not measured here (2 cores))')
    expect(g).toContain('peak RSS, 1 server (no cluster), 1 process, --connections 1 (0 parse workers): 120 MB (goal ≤ 150 MB: met)')
    expect(g).toContain('peak RSS, cluster, 3 masters, 1 process, --workers 4, --connections 1 (4 parse workers): 343 MB (goal ≤ 200 MB: not met)')
    expect(g).toContain('peak RSS, cluster, 3 masters, 1 process, --workers 4, --connections 2 (4 parse workers): 190 MB (goal ≤ 200 MB: met)')
  })

  it('on 16 cores: met or not met; a k-process row missing is said so', () => {
    const rows = clusterRows()
    addRatios(rows)
    const g = goalLines(rows, { rows: 1_000_000, cpus: 16, server: 'Redis 8.0.6' })[35]
    expect(g).toContain('3 masters: one process ≥ 95 % of the best k-process row: 97 % (1 process, --workers 4, --connections 2 700,000 rows/s, 4 processes (--shard i/4, --workers 0) 720,000 rows/s): met')
    expect(g).toContain('1 server (no cluster), 1 process, --connections 2: 0.90x --connections 1 (goal ≥ 1.0x without I/O threads: not met)')
    expect(g).toContain('peak RSS, cluster, 3 masters, 1 process, --workers 4, --connections 2 (4 parse workers): 190 MB (goal ≤ 200 MB, set for 3,000,000 rows: met)')
    const alone = clusterRows().slice(0, 3)
    addRatios(alone)
    expect(goalLines(alone, { rows: 1_000_000, cpus: 16, server: 'Redis 8.0.6' })[35]).toContain('3 masters: one process ≥ 95 % of the best k-process row: not measured (no --processes row)')
  })

  it('--io-threads: pipeload against the cli --pipe row of its server, the goal at io-threads 4 into Valkey 9 only', () => {
    const at = (n, cli, one, four) => [
      row({ target: `1 server, io-threads ${n}`, ioThreads: n, variant: 'valkey-cli --pipe', tool: 'cli', rowsPerSec: cli }),
      row({ target: `1 server, io-threads ${n}`, ioThreads: n, variant: '1 process, --workers 0, --connections 1', workers: 0, connections: 1, rowsPerSec: one, workerCount: 0 }),
      row({ target: `1 server, io-threads ${n}`, ioThreads: n, variant: '1 process, --workers 0, --connections 4', workers: 0, connections: 4, rowsPerSec: four, workerCount: 0 })
    ]
    const rows = [...at(1, 280_000, 340_000, 336_000), ...at(4, 300_000, 270_000, 420_000)]
    addRatios(rows)
    expect(rows.map(r => r.vsCli && Number(r.vsCli.toFixed(2)))).toEqual([null, 1.21, 1.2, null, 0.9, 1.4])
    const g = goalLines(rows, { rows: 1_000_000, cpus: 16, server: 'Valkey 9.1.2' })[35]
    expect(g).toContain('io-threads 1: best pipeload process (1 process, --workers 0, --connections 1) 1.21x valkey-cli --pipe (no goal at io-threads 1)')
    expect(g).toContain('io-threads 4: best pipeload process (1 process, --workers 0, --connections 4) 1.40x valkey-cli --pipe (goal ≥ 1.3x into Valkey 9.1 with io-threads 4: met)')
    expect(g).toContain('1 server, io-threads 1, 1 process, --workers 0, --connections 4: 0.99x --connections 1 (goal ≥ 1.0x without I/O threads: not met)')
    expect(g).toContain('1 server, io-threads 4, 1 process, --workers 0, --connections 4: 1.56x --connections 1 (the server has 4 I/O threads: no goal)')
    const two = goalLines(rows, { rows: 1_000_000, cpus: 2, server: 'Valkey 9.1.2' })[35]
    expect(two).toContain('io-threads 4: best pipeload process (1 process, --workers 0, --connections 4) 1.40x valkey-cli --pipe (goal ≥ 1.3x into Valkey 9.1 with io-threads 4: not measured here (2 cores))')
    const redis = goalLines(rows, { rows: 1_000_000, cpus: 16, server: 'Redis 8.0.6' })[35]
    expect(redis).toContain('io-threads 4: best pipeload process (1 process, --workers 0, --connections 4) 1.40x valkey-cli --pipe (goal ≥ 1.3x into Valkey 9.1 with io-threads 4; this server: Redis 8.0.6: not measured here (another server))')
  })
})
