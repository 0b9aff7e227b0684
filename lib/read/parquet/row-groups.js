'use strict'

// A Parquet file's row groups as the unit of --resume, --shard and --workers. A row group is
// the smallest part of a Parquet file that can be decoded alone (each column chunk starts
// with its own pages and dictionary) and the file's footer says how many rows each holds,
// so where a row is, and which bytes hold it, is known before anything is decoded.
//
// `groups`: the file's row groups in file order, as their row counts ([272384, 272384, …]).

/**
 * The row groups shard `index` of `count` loads: one contiguous run of them, [from, to), cut
 * where the rows before are nearest k·total/count. Contiguous rather than every n-th group:
 * a shard reads one span of the file (sequential reads, few Range requests for a URL), its
 * rows are one run of the file's rows, and the cuts follow the rows, not the number of
 * groups, so a file whose groups differ in size is still shared evenly as far as whole
 * groups allow. With fewer groups than shards, some shards get none (they load nothing).
 * @param {number[]} groups
 * @returns {{ from: number, to: number, firstRow: number, rows: number }}
 */
function groupShare (groups, index, count) {
  const starts = firstRows(groups)
  const total = starts[groups.length]
  const cut = k => {
    if (k === 0) return 0
    if (k === count) return groups.length
    const target = k * total / count
    let g = 0
    while (g < groups.length && starts[g + 1] <= target) g++ // the last group starting at or before target
    // The nearer of that group's start and end.
    return g < groups.length && starts[g + 1] - target < target - starts[g] ? g + 1 : g
  }
  const from = cut(index)
  const to = Math.max(from, cut(index + 1))
  return { from, to, firstRow: starts[from], rows: starts[to] - starts[from] }
}

/** firstRows(groups)[g]: the rows before group g (0-based index of its first row); [n]: all rows. */
function firstRows (groups) {
  const starts = [0]
  for (const rows of groups) starts.push(starts[starts.length - 1] + rows)
  return starts
}

/**
 * Where to begin to skip the first `skip` rows of groups [from, to): the first group holding a
 * row not skipped, and how many of its rows to drop. The groups before it are not read at all.
 * `group` is `to` when every row is skipped; null when there are fewer rows than `skip`.
 * @returns {{ group: number, drop: number } | null}
 */
function startAfter (groups, skip, from = 0, to = groups.length) {
  let left = skip
  for (let g = from; g < to; g++) {
    if (left < groups[g]) return { group: g, drop: left }
    left -= groups[g]
  }
  return left === 0 ? { group: to, drop: 0 } : null
}

module.exports = { groupShare, startAfter, firstRows }
