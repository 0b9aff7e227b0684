'use strict'

// Certificates for the TLS tests, made at test time with the openssl command (no keys are
// kept in the repository): a CA, a server certificate for localhost and 127.0.0.1 (in the
// subjectAltName, as clients verify it), a client certificate signed by the same CA, and a
// second CA that signed nothing the server uses (to show that the wrong CA is refused).

const { execFileSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

function openssl (args, cwd) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']

function makeCa (dir, name) {
  const key = path.join(dir, `${name}.key`)
  const crt = path.join(dir, `${name}.crt`)
  openssl(['req', '-x509', ...KEY, '-keyout', key, '-out', crt, '-days', '2', '-subj', `/CN=pipeload test ${name}`], dir)
  return { key, crt }
}

function makeLeaf (dir, name, ca, extensions) {
  const key = path.join(dir, `${name}.key`)
  const csr = path.join(dir, `${name}.csr`)
  const crt = path.join(dir, `${name}.crt`)
  const ext = path.join(dir, `${name}.ext`)
  fs.writeFileSync(ext, extensions.join('\n') + '\n')
  openssl(['req', ...KEY, '-keyout', key, '-out', csr, '-subj', `/CN=${name}`], dir)
  openssl(['x509', '-req', '-in', csr, '-CA', ca.crt, '-CAkey', ca.key, '-set_serial', '0x' + crypto.randomBytes(8).toString('hex'),
    '-days', '2', '-out', crt, '-extfile', ext], dir)
  return { key, crt }
}

/** Make the test PKI in `dir`; returns file paths. */
function makeCerts (dir) {
  fs.mkdirSync(dir, { recursive: true })
  const ca = makeCa(dir, 'ca')
  const otherCa = makeCa(dir, 'other-ca')
  const server = makeLeaf(dir, 'server', ca, [
    'basicConstraints=CA:FALSE',
    'keyUsage=digitalSignature,keyEncipherment',
    'extendedKeyUsage=serverAuth',
    'subjectAltName=DNS:localhost,IP:127.0.0.1'
  ])
  const client = makeLeaf(dir, 'client', ca, [
    'basicConstraints=CA:FALSE',
    'keyUsage=digitalSignature,keyEncipherment',
    'extendedKeyUsage=clientAuth'
  ])
  return { dir, ca: ca.crt, otherCa: otherCa.crt, serverCert: server.crt, serverKey: server.key, clientCert: client.crt, clientKey: client.key }
}

module.exports = { makeCerts }
