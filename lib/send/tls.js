'use strict'

const fs = require('node:fs')
const net = require('node:net')
const { PipeloadError } = require('../errors')

// TLS settings, one shape for both planes: the ioredis control client and the data socket
// get the same object (ioredis passes it to tls.connect as we do). Verification is on
// unless rejectUnauthorized is false, which only --tls-insecure / an explicit option sets.

const INSECURE_WARNING = "Warning: --tls-insecure: the server's certificate is not verified; the connection is encrypted, but anyone on the way can pretend to be the server."

function invalid (name, expected, got) {
  const shown = typeof got === 'string' ? JSON.stringify(got) : typeof got
  return new PipeloadError('PIPELOAD_OPTION_INVALID', `${name} must be ${expected}, got ${shown}`, { option: name })
}

const isPem = v => typeof v === 'string' || Buffer.isBuffer(v) || (Array.isArray(v) && v.every(x => typeof x === 'string' || Buffer.isBuffer(x)))

/**
 * The library's `tls` option (ioredis style: true, or { ca, cert, key, servername,
 * rejectUnauthorized, …other tls.connect options }) as a plain object, or undefined for none.
 */
function normalizeTls (value) {
  if (value === undefined || value === null || value === false) return undefined
  if (value === true) return {}
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('tls', 'true or an object { ca, cert, key, servername, rejectUnauthorized }', value)
  for (const k of ['ca', 'cert', 'key']) {
    if (value[k] !== undefined && !isPem(value[k])) throw invalid(`tls.${k}`, 'PEM text or a Buffer (the contents, not a file name)', value[k])
  }
  if ((value.cert === undefined) !== (value.key === undefined)) {
    throw invalid(value.cert === undefined ? 'tls.cert' : 'tls.key', 'given together with ' + (value.cert === undefined ? 'tls.key' : 'tls.cert') + ' (a client certificate and its key)', 'nothing')
  }
  if (value.servername !== undefined && (typeof value.servername !== 'string' || !value.servername)) throw invalid('tls.servername', 'a host name', value.servername)
  if (value.rejectUnauthorized !== undefined && typeof value.rejectUnauthorized !== 'boolean') throw invalid('tls.rejectUnauthorized', 'true or false', value.rejectUnauthorized)
  return { ...value }
}

function readPem (flag, file) {
  try {
    return fs.readFileSync(file)
  } catch (err) {
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `${flag} ${file}: cannot read it (${err.code || err.message})`, { option: flag })
  }
}

/**
 * The CLI's --tls* flags as a `tls` option (files read here), or undefined when none is
 * given. Any --tls-* flag turns TLS on. --tls-insecure warns on stderr.
 */
function tlsFromFlags (flags, warn) {
  const any = flags.tls || flags.tlsCa || flags.tlsCert || flags.tlsKey || flags.tlsServername || flags.tlsInsecure
  if (!any) return undefined
  if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) {
    const [given, missing] = flags.tlsCert ? ['--tls-cert', '--tls-key'] : ['--tls-key', '--tls-cert']
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `${given} needs ${missing}: a client certificate and its private key go together`, { option: given })
  }
  const t = {}
  if (flags.tlsCa) t.ca = readPem('--tls-ca', flags.tlsCa)
  if (flags.tlsCert) t.cert = readPem('--tls-cert', flags.tlsCert)
  if (flags.tlsKey) t.key = readPem('--tls-key', flags.tlsKey)
  if (flags.tlsServername) t.servername = flags.tlsServername
  if (flags.tlsInsecure) {
    warn(INSECURE_WARNING)
    t.rejectUnauthorized = false
  }
  return t
}

/**
 * tls.connect options for a socket to `host`: SNI and the name the certificate is checked
 * against are tls.servername, else the host name we were given (never an IP address: RFC
 * 6066 forbids it in SNI, and Node then checks the IP we connect to).
 */
function tlsConnectOptions (t, host) {
  const servername = t.servername || (host && !net.isIP(host) ? host : undefined)
  return servername ? { ...t, servername } : { ...t }
}

// Node's verification failures (err.code) and what to do about each.
const UNTRUSTED = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG', 'INVALID_CA', 'CERT_REJECTED'])
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID'])

/** A TLS failure as a one-line reason with the fix, or null when `err` is not about TLS. */
function describeTlsError (err) {
  const code = err && err.code
  if (!code) return null
  // OpenSSL's own errors are multi-line with source paths; `reason` is the readable part.
  const msg = err.reason || String(err.message).split('\n')[0]
  if (UNTRUSTED.has(code)) return `the server's TLS certificate is not trusted (${msg}): give the CA that signed it with --tls-ca (tls.ca), or skip verification with --tls-insecure`
  if (EXPIRED.has(code)) return `the server's TLS certificate is not valid now (${msg})`
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the server's TLS certificate is not for this name (${msg}): connect by a name it lists, or give that name with --tls-servername (tls.servername)`
  if (/CERTIFICATE_REQUIRED|ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA|ALERT_HANDSHAKE_FAILURE/.test(code)) return `the server refused the TLS handshake (${msg}): it wants a client certificate it trusts: give --tls-cert and --tls-key (tls.cert, tls.key)`
  if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|UNKNOWN_PROTOCOL|RECORD_LAYER_FAILURE/.test(code)) return `TLS handshake failed (${msg}): the server may not speak TLS on this port: drop --tls / use redis://`
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) return `TLS handshake failed (${msg})`
  return null
}

module.exports = { normalizeTls, tlsFromFlags, tlsConnectOptions, describeTlsError, INSECURE_WARNING }
