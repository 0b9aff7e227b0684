'use strict'
/* global describe, it, expect, beforeAll, afterAll */

// Every shell example in README.md runs here, against a server of our own: `npx pipeload`
// runs this checkout's bin, `redis-cli` talks to the test server, REDIS_URL points there.
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { startRedis } = require('./helpers/redis-server')

const ROOT = path.join(__dirname, '..')
const BIN = path.join(ROOT, 'bin', 'pipeload.js')
const run = promisify(execFile)

/** The commands of every ```sh block, without comments and the commands tests cannot nest. */
function readmeCommands () {
  const text = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map(m => m[1])
  return blocks.flatMap(b => b.split('\n'))
    .map(l => l.trim())
    .filter(l => l && !l.startsWith('#') && l !== 'npm test')
    .map(l => l.replace(/^npm install && /, ''))
}

let server

beforeAll(async () => { server = await startRedis() })
afterAll(async () => { await server?.stop() })

describe('README examples', () => {
  const commands = readmeCommands()

  it('has examples to run', () => {
    expect(commands.length).toBeGreaterThan(8)
    expect(commands[0]).toMatch(/^npx pipeload import examples\/data\/cities\.csv/)
  })

  it.each(commands)('%s', async (command) => {
    const shell = command
      .replaceAll('npx pipeload', `"${process.execPath}" "${BIN}"`)
      .replaceAll('redis-cli', `redis-cli -p ${server.port}`)
    const { stdout, stderr } = await run('bash', ['-o', 'pipefail', '-c', shell], {
      cwd: ROOT, env: { ...process.env, REDIS_URL: server.url }, maxBuffer: 64 << 20
    })
    expect(stderr).not.toMatch(/\n\s+at /)
    if (/--dry-run resp \| redis-cli/.test(command)) expect(stdout).toMatch(/errors: 0, replies: 50/)
    if (/--json$/.test(command)) expect(JSON.parse(stdout).errors).toBe(0)
  })

  it('left the data the examples describe', async () => {
    const redis = server.client()
    expect(await redis.hgetall('city:11')).toEqual({
      id: '11', name: 'New York', country: 'US', population: '18819000', lat: '40.7128', lon: '-74.0060',
      note: 'Five boroughs:\nManhattan, Brooklyn, Queens, The Bronx, Staten Island'
    })
    expect(await redis.get('city:4:name')).toBe('São Paulo')
    expect(await redis.ttl('city:4:name')).toBeGreaterThan(3000)
    expect(await redis.get('city:1:pop')).toBe('37400068')
    expect(await redis.scard('cities:CN')).toBe(12)
  })
})
