'use strict'

/* global describe, it, expect, beforeAll, afterAll */ // vitest globals (see vitest.config.js)
const net = require('node:net')
const { startRedis, deadPort, isPortFree, ping } = require('./helpers/redis-server')

describe('test harness: private redis-server', () => {
  let srv
  beforeAll(async () => { srv = await startRedis() })
  afterAll(async () => { if (srv) await srv.stop() })

  it('starts on a free non-default port and answers PING', async () => {
    expect(srv.port).not.toBe(6379)
    expect(srv.url).toBe(`redis://127.0.0.1:${srv.port}`)
    const c = srv.client()
    expect(await c.ping()).toBe('PONG')
    const info = await c.info('server')
    // Any version: which servers the suites run against is test/helpers/servers.js's business.
    expect(info).toMatch(/^redis_version:\d+\.\d+\.\d+\r?$/m)
    expect(info).toContain(`tcp_port:${srv.port}`)
  })

  it('runs with no persistence in its own dir', async () => {
    const c = srv.client()
    expect(await c.config('GET', 'save')).toEqual(['save', ''])
    expect(await c.config('GET', 'appendonly')).toEqual(['appendonly', 'no'])
    expect(await c.config('GET', 'dir')).toEqual(['dir', require('node:fs').realpathSync(srv.dir)])
  })

  it('restart keeps the port and serves again (data is gone)', async () => {
    const c = srv.client()
    await c.set('h:restart', '1')
    const port = srv.port
    const pid = srv.proc.pid
    await srv.restart()
    expect(srv.port).toBe(port)
    expect(srv.proc.pid).not.toBe(pid)
    expect(await ping(port)).toBe(true)
    const fresh = srv.client()
    expect(await fresh.get('h:restart')).toBe(null)
  })

  it('passes extra args to the server', async () => {
    const other = await startRedis({ args: ['--databases', '3'] })
    try {
      const c = other.client()
      expect(await c.config('GET', 'databases')).toEqual(['databases', '3'])
      expect(other.port).not.toBe(srv.port)
    } finally {
      await other.stop()
    }
  })

  it('fails with a clear error including the server output on bad args', async () => {
    await expect(startRedis({ args: ['--no-such-option', 'x'] }))
      .rejects.toThrow(/failed to start[\s\S]*no-such-option/i)
  })

  it('stop frees the port, removes the dir and closes clients', async () => {
    const other = await startRedis()
    const { port, dir } = other
    const c = other.client()
    expect(await c.ping()).toBe('PONG')
    await other.stop()
    expect(other.proc.exitCode !== null || other.proc.signalCode !== null).toBe(true)
    expect(await ping(port)).toBe(false)
    expect(await isPortFree(port)).toBe(true)
    expect(require('node:fs').existsSync(dir)).toBe(false)
    expect(c.status).toBe('end')
  })

  it('kill() crashes the server (for connection-loss tests)', async () => {
    const other = await startRedis()
    try {
      await other.kill('SIGKILL')
      expect(other.proc.signalCode).toBe('SIGKILL')
      expect(await ping(other.port)).toBe(false)
    } finally {
      await other.stop()
    }
  })
})

describe('test harness: deadPort()', () => {
  it('refuses connections, and no server can take the port while it is held', async () => {
    const dead = await deadPort()
    try {
      const err = await new Promise((resolve, reject) => {
        const s = net.connect(dead.port, '127.0.0.1')
        s.on('connect', () => { s.destroy(); reject(new Error('connected to a dead port')) })
        s.on('error', resolve)
      })
      expect(err.code).toBe('ECONNREFUSED')
      expect(await isPortFree(dead.port)).toBe(false)
      // A redis-server (which sets SO_REUSEADDR) cannot bind it either.
      await expect(startRedis({ args: ['--port', String(dead.port)] })).rejects.toThrow(/address already in use/i)
    } finally {
      await dead.close()
    }
  })
})
