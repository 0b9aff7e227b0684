'use strict'

const { int, count, bytes, duration, clock } = require('../run/reporter')

// export's progress line and summary, as text. Pure: returns strings.

/** keys of the total (DBSIZE summed over the masters), rate, bytes written, time, ETA. */
function formatExportProgress (p) {
  let s = `${int(p.keys)}`
  if (p.total > 0) s += ` of ${count(p.total, 'key')} (${(100 * Math.min(1, p.keys / p.total)).toFixed(1)}%)`
  else s += p.keys === 1 ? ' key' : ' keys'
  s += ` · ${int(p.keysPerSec)} keys/s · ${bytes(p.bytes)} · ${clock(p.elapsedMs)} elapsed`
  if (p.etaMs != null) s += ` · ETA ${clock(p.etaMs)}`
  return s
}

/** Two lines: what was written where, and what was skipped; then one after a --resume, and a cluster's faults. */
function formatExportSummary (s) {
  const c = s.checkpoint
  if (c?.nothingLeft) return `nothing left to export: checkpoint ${c.file} records a complete export of ${count(c.keysBefore, 'key')} to ${s.output} (finished ${c.finishedAt}); the output was not touched`
  const byType = Object.entries(s.types).map(([t, n]) => `${t} ${int(n)}`).join(', ')
  const parts = s.parts ? `, ${count(s.parts, 'more part')} of big keys` : ''
  const rate = s.keys > 0 ? ` · ${int(s.keysPerSec)} keys/s` : ''
  const from = s.masters.length > 1 ? `${count(s.masters.length, 'master')} of the cluster` : s.target
  const skipped = []
  if (s.deleted) skipped.push(`${int(s.deleted)} deleted before they were read`)
  if (s.changed) skipped.push(`${int(s.changed)} whose type kept changing`)
  if (s.otherTypes) skipped.push(`${int(s.otherTypes)} of other types`)
  for (const [t, n] of Object.entries(s.unsupported)) skipped.push(`${int(n)} of type ${t} (not exported)`)
  const again = s.restarted ? ` · ${count(s.restarted, 'key')} read again from the start (its type changed between pages)` : ''
  const resumed = c?.resumed ? [`resumed from checkpoint ${c.file}: the first ${bytes(c.keptBytes)} of ${s.output} kept (${count(c.keysBefore, 'key')} written before), the rest written again`] : []
  const lost = s.reconnects ? ` · reconnected ${count(s.reconnects, 'time')}${s.rescans ? ` (${int(s.rescans)} to a restarted or new server: its SCAN from the start)` : ''}: keys read again, some written twice` : ''
  const lines = [
    `exported ${count(s.keys, 'key')}${byType ? ` (${byType})` : ''}${parts} from ${from} to ${s.output} in ${duration(s.durationMs)}${rate} · ${bytes(s.bytes)} written`,
    `skipped: ${skipped.length ? skipped.join(', ') : 'none'}${again}${lost}`,
    ...resumed
  ]
  const warning = clusterWarning(s.cluster)
  if (warning) lines.push(warning)
  return lines.join('\n')
}

/** A cluster whose slots moved or whose masters failed over during the export (docs/export.md "Faults"). */
function clusterWarning (c) {
  if (!c) return ''
  const said = []
  if (c.failovers) said.push(`${count(c.failovers, 'master')} failed over: read again from the new master`)
  if (c.moved || c.asked) said.push(`${count(c.moved + c.asked, 'key read')} redirected (MOVED ${int(c.moved)}, ASK ${int(c.asked)})`)
  if (c.slotsMoved || c.slotsReread) said.push(`${count(c.slotsMoved, 'slot')} moved to another master during the export; the keys of ${count(c.slotsReread, 'slot')} (moved, or being migrated at the end) read again where they are now, some written twice${c.slotsReread < c.slotsMoved ? ': slots still moving after 3 rounds, a key of them may be missing' : ''} (docs/export.md#faults)`)
  if (c.slotsMoved === null) said.push('no node answered CLUSTER SLOTS at the end: slots that moved are not known')
  return said.length ? `warning: ${said.join('; ')}` : ''
}

module.exports = { formatExportProgress, formatExportSummary }
