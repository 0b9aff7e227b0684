'use strict'
/* global beforeAll, afterAll */

// An HTTP server on loopback for the URL-input tests, started before a file's tests and
// closed after them. `routes` maps a path (without its query) to a (req, res) handler; other
// paths get a 404. `seen` records every request ({ url, path, headers }); `base` is its
// http://127.0.0.1:<port> once started.

const http = require('node:http')

function useHttpServer () {
  const web = { routes: new Map(), seen: [], base: null, server: null }
  beforeAll(async () => {
    web.server = http.createServer((req, res) => {
      const path = req.url.split('?')[0]
      web.seen.push({ url: req.url, path, headers: req.headers })
      const route = web.routes.get(path)
      if (route) return route(req, res)
      res.writeHead(404, { 'content-type': 'text/plain' })
      res.end('not here')
    })
    await new Promise(resolve => web.server.listen(0, '127.0.0.1', resolve))
    web.base = `http://127.0.0.1:${web.server.address().port}`
  })
  afterAll(async () => {
    web.server.closeAllConnections()
    await new Promise(resolve => web.server.close(resolve))
  })
  return web
}

module.exports = { useHttpServer }
