'use strict'

/**
 * A URL's scheme ("redis://", "https://"; "" without one), its user-info (everything
 * between "//" and the last "@", or null) and the rest. The last "@", not the first: a
 * password may hold a raw "@", "/", ":" or "#", and whatever it holds must never be taken
 * for the host (and then printed). `beforeQuery` (http(s) URLs): only an "@" before the
 * first "?" counts, so a query may hold one.
 * Shared by Redis URLs (lib/send/connection.js) and http(s) inputs (./http-input.js).
 */
function splitUrl (url, { beforeQuery = false } = {}) {
  const m = /^([a-z][a-z0-9+.-]*:)?\/\//i.exec(url)
  const head = m ? m[0] : ''
  const body = url.slice(head.length)
  const q = beforeQuery ? body.indexOf('?') : -1
  const at = (q < 0 ? body : body.slice(0, q)).lastIndexOf('@')
  return at < 0 ? { scheme: head, userinfo: null, rest: body } : { scheme: head, userinfo: body.slice(0, at), rest: body.slice(at + 1) }
}

/** "user:password" → { user, pass } as written (still %-encoded); no ":" → pass ''. */
function userAndPassword (userinfo) {
  const colon = userinfo.indexOf(':')
  return colon < 0 ? { user: userinfo, pass: '' } : { user: userinfo.slice(0, colon), pass: userinfo.slice(colon + 1) }
}

module.exports = { splitUrl, userAndPassword }
