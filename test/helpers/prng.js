'use strict'

/** mulberry32: small, seedable, good enough to pick mutations and generate inputs. */
function prng (seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = n => Math.floor(next() * n)
  return { next, int, pick: arr => arr[int(arr.length)], chance: p => next() < p }
}

module.exports = { prng }
