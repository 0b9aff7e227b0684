'use strict'

const { Option } = require('commander')
const { PipeloadError } = require('../errors')
const { OPTIONS, optionEntry } = require('../run/option-table')
const { durationFlag } = require('./duration-flag')

// The commands' flags, made from the option table (lib/run/option-table.js): a flag's
// spelling, help line, choices and default are written there once, for import and bench.

function collect (value, previous) {
  return previous.concat([value])
}

/** The commander options of one table entry: its flag, then its `more` flags; `prefix` starts each help line. */
function flagOptions (entry, prefix = '') {
  const out = []
  if (entry.flag) {
    const o = new Option(entry.flag, prefix + entry.help)
    if (entry.choices) o.choices(entry.choices)
    if (entry.repeatable) o.argParser(collect).default([])
    if (entry.flagDefault !== undefined) o.default(flagDefault(entry), entry.defaultText)
    out.push(o)
  }
  for (const m of entry.more || []) {
    const o = new Option(m.flag, m.help ? prefix + m.help : '')
    out.push(m.hidden ? o.hideHelp() : o)
  }
  return out
}

/** The value commander fills in for a flag not given: a duration as typed, 30s. */
function flagDefault (entry) {
  if (entry.flagDefault !== true) return entry.flagDefault
  return entry.duration ? `${entry.default / 1000}s` : entry.default
}

/** Add the flags of these table entries (or names) to `cmd`, in order. */
function addFlags (cmd, entries, prefix) {
  for (const e of entries) {
    const entry = typeof e === 'string' ? optionEntry(e) : e
    for (const o of flagOptions(entry, prefix)) cmd.addOption(o)
  }
  return cmd
}

/** The import command's flags: every entry with a flag but the connection's, in table order. */
const IMPORT_FLAGS = OPTIONS.filter(e => (e.flag || e.more) && !e.common)
/** The connection flags every command takes. */
const COMMON_FLAGS = OPTIONS.filter(e => e.flag && e.common)

/**
 * A removed option's flag on the command line: a usage error (exit 2) naming what to use
 * instead. Commander reads it (a hidden flag), so the message is ours, not "unknown option".
 */
function refuseRemoved (flags) {
  for (const e of OPTIONS) {
    if (!e.removed) continue
    const value = flags[e.name]
    if (value === undefined) continue
    const flag = value === false ? `--no-${e.name}` : `--${e.name}`
    throw new PipeloadError('PIPELOAD_OPTION_INVALID', `${flag} was removed: use ${e.removed[flag]}`, { option: flag })
  }
}

/**
 * load() options from the import flags that map one to one (the flag's value, a duration's
 * checked for its unit); `skip` names those the caller reads itself.
 */
function plainOptions (flags, skip) {
  const out = {}
  for (const e of IMPORT_FLAGS) {
    if (!e.name || e.removed || skip.includes(e.name)) continue
    const attr = new Option(e.flag).attributeName()
    out[e.name] = e.duration ? durationFlag(flags[attr], e.flag.split(' ')[0]) : flags[attr]
  }
  return out
}

module.exports = { collect, addFlags, flagOptions, refuseRemoved, plainOptions, IMPORT_FLAGS, COMMON_FLAGS }
