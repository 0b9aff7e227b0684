'use strict'

const { getKeyIndexes, exists } = require('@ioredis/commands')

// Which hash slot each command of an encoded batch belongs to, read from the RESP bytes the
// encoder wrote. Pure and I/O-free. Routing works on the bytes rather than on the records
// so that any encoder (main thread or worker, templates or a map function) feeds the
// cluster sink unchanged, and the slot map, which only the sink knows and which changes
// during a resharding, is applied as late as possible.
//
// Per command it finds the argument count, the command name and the byte ranges of its
// keys (as @ioredis/commands says where keys are), then hashes each key over its bytes in
// place, exactly as Redis does (CRC16/XMODEM mod 16384, `{tag}` hashing only the tag when
// the tag is not empty). No string is made per argument on the common path.

const SLOTS = 16384
const NO_KEY = -1 // a command without keys (PING): any master will do
const CROSS_SLOT = -2 // keys in more than one slot: never sent

const CRC16 = (() => {
  const t = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let c = i << 8
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff
    t[i] = c
  }
  return t
})()

function crc16 (buf, start, end) {
  let crc = 0
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ buf[i]) & 0xff]
  return crc
}

/** The hash slot of the key in buf[start, end): Redis' keyHashSlot(). */
function slotOfBytes (buf, start, end) {
  let open = -1
  for (let i = start; i < end; i++) {
    if (buf[i] === 0x7b) { open = i; break }
  }
  if (open !== -1) {
    for (let i = open + 1; i < end; i++) {
      if (buf[i] === 0x7d) {
        if (i > open + 1) return crc16(buf, open + 1, i) & (SLOTS - 1)
        break
      }
    }
  }
  return crc16(buf, start, end) & (SLOTS - 1)
}

/** The hash slot of a key given as a string. */
function slotOf (key) {
  const b = Buffer.from(String(key), 'utf8')
  return slotOfBytes(b, 0, b.length)
}

// Commands whose key positions depend on their arguments' values (numkeys, STORE, STREAMS,
// subcommands): their arguments are decoded and given to getKeyIndexes. All others have
// fixed positions that depend only on the argument count, computed once per count.
const DYNAMIC = new Set([
  'zunionstore', 'zinterstore', 'zdiffstore', 'eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro',
  'blmpop', 'bzmpop', 'sdiffcard', 'sintercard', 'sunioncard', 'lmpop', 'zunion', 'zinter', 'zmpop', 'zintercard',
  'zdiff', 'msetex', 'georadius', 'georadiusbymember', 'sort', 'sort_ro', 'migrate', 'xreadgroup', 'xread',
  'acl', 'backup', 'client', 'cluster', 'command', 'config', 'function', 'himport', 'hotkeys', 'latency', 'memory',
  'module', 'object', 'pubsub', 'script', 'slowlog', 'xgroup', 'xinfo'
])

class CommandSpec {
  constructor (name) {
    this.name = name
    this.known = exists(name)
    this.dynamic = DYNAMIC.has(name)
    this.byArgc = [] // argc -> Int32Array of the RESP argument numbers that are keys
  }

  /** RESP argument numbers (1 = first after the name) of the keys, for a fixed-position command. */
  keysFor (argc) {
    let k = this.byArgc[argc]
    if (k === undefined) {
      let idx
      if (!this.known) idx = argc > 1 ? [0] : [] // a module command (JSON.SET, TS.ADD…): its first argument
      else idx = getKeyIndexes(this.name, new Array(argc - 1).fill(''))
      k = this.byArgc[argc] = Int32Array.from(idx, i => i + 1)
    }
    return k
  }
}

/**
 * Scans encoded batches: for each command, where it ends and its slot (or NO_KEY /
 * CROSS_SLOT). Keeps a small cache of command specs keyed by the name's bytes.
 */
class SlotScanner {
  constructor () {
    this.specs = new Map()
    this.recent = [] // [{ bytes, spec }]: the last few names, compared byte by byte
    this.end = 0 // where the last scanned command ends
    this.lenEnd = 0
  }

  spec (buf, start, end) {
    const len = end - start
    const recent = this.recent
    outer:
    for (let r = 0; r < recent.length; r++) {
      const b = recent[r].bytes
      if (b.length !== len) continue
      for (let i = 0; i < len; i++) if ((buf[start + i] | 0x20) !== b[i]) continue outer
      return recent[r].spec
    }
    const name = buf.latin1Slice(start, end).toLowerCase()
    let spec = this.specs.get(name)
    if (!spec) this.specs.set(name, (spec = new CommandSpec(name)))
    if (/^[a-z0-9.|-]*$/.test(name)) { // the byte compare above folds case only for these
      recent.unshift({ bytes: Buffer.from(name, 'latin1'), spec })
      if (recent.length > 8) recent.pop()
    }
    return spec
  }

  /**
   * The slot of the command starting at buf[p]; `this.end` is set to where it ends.
   * Throws on bytes that are not a RESP array of bulk strings (a bug, not user input).
   */
  scan (buf, p) {
    if (buf[p] !== 0x2a) throw new Error(`cluster routing: no command at byte ${p}`)
    let argc = 0
    p++
    while (buf[p] !== 13) argc = argc * 10 + buf[p++] - 48
    p += 2
    const nameLen = this.readLen(buf, p)
    p = this.lenEnd
    const spec = this.spec(buf, p, p + nameLen)
    p += nameLen + 2
    if (spec.dynamic) return this.scanDynamic(buf, p, argc, spec)
    const keys = spec.keysFor(argc)
    let slot = NO_KEY
    let k = 0
    for (let a = 1; a < argc; a++) {
      const len = this.readLen(buf, p)
      p = this.lenEnd
      if (k < keys.length && keys[k] === a) {
        const s = slotOfBytes(buf, p, p + len)
        if (slot === NO_KEY) slot = s
        else if (slot !== s) slot = CROSS_SLOT
        k++
      }
      p += len + 2
    }
    this.end = p
    return slot
  }

  scanDynamic (buf, p, argc, spec) {
    const starts = []
    const args = []
    for (let a = 1; a < argc; a++) {
      const len = this.readLen(buf, p)
      p = this.lenEnd
      starts.push(p)
      args.push(buf.toString('utf8', p, p + len))
      p += len + 2
    }
    this.end = p
    let slot = NO_KEY
    for (const i of getKeyIndexes(spec.name, args)) {
      if (i >= args.length) continue
      const s = slotOfBytes(buf, starts[i], starts[i] + Buffer.byteLength(args[i]))
      if (slot === NO_KEY) slot = s
      else if (slot !== s) return CROSS_SLOT
    }
    return slot
  }

  /** `$<len>\r\n` at p: returns len; `this.lenEnd` is where the data starts. */
  readLen (buf, p) {
    if (buf[p] !== 0x24) throw new Error(`cluster routing: no bulk string at byte ${p}`)
    let n = 0
    p++
    while (buf[p] !== 13) n = n * 10 + buf[p++] - 48
    this.lenEnd = p + 2
    return n
  }
}


/**
 * Each command's start in an encoded batch (`starts`, with the end after the last) and its
 * hash slot (`slots`): what the cluster sink routes by, computed by it or by the workers.
 */
function commandSlots (scanner, buf, cmds) {
  const starts = new Uint32Array(cmds + 1)
  const slots = new Int16Array(cmds)
  let p = 0
  for (let c = 0; c < cmds; c++) {
    starts[c] = p
    slots[c] = scanner.scan(buf, p)
    p = scanner.end
  }
  starts[cmds] = p
  return { starts, slots }
}

module.exports = { SlotScanner, commandSlots, slotOf, slotOfBytes, crc16, SLOTS, NO_KEY, CROSS_SLOT }
