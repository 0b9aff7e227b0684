'use strict'

const { keepsAnnotation, STRUCT_PROTO } = require('./values')
const { MAX_DEPTH } = require('../row')

// A Parquet file's footer as pipeload reads it: its schema checked before anything walks it
// (hyparquet's schema tree and value assembly recurse, and trust each element's number of
// children), and the metadata given to hyparquet: the leaves' annotations removed but
// strings' (it then gives stored values, values.js turns them into text), struct
// fields named `__proto__` renamed (its struct assembly assigns fields: `__proto__` would set
// the struct's prototype).

/**
 * Throws (an Error whose message says what is wrong) unless `schema`, the footer's flat list
 * of elements in depth-first order, is a tree: a root, each group followed by its
 * `num_children` elements, nothing after the root's last, and no deeper than MAX_DEPTH
 * levels (as JSON and NDJSON input: 1000).
 */
function checkSchema (schema) {
  if (!Array.isArray(schema) || schema.length === 0) throw new Error('its schema has no elements')
  const open = [] // the children still to come of each group enclosing the element
  for (let i = 0; i < schema.length; i++) {
    const e = schema[i]
    if (i > 0 && open.length === 0) throw new Error(`its schema has ${schema.length - i} elements after the last of its root's ${schema[0].num_children || 0} columns`)
    if (open.length) open[open.length - 1]--
    const n = e.num_children
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= 0)) throw new Error(`its schema element "${e.name}" has ${n} children`)
    if (n > 0 || i === 0) {
      if (open.length >= MAX_DEPTH) throw new Error(`its schema nests columns more than ${MAX_DEPTH} levels deep`)
      open.push(n || 0)
    }
    while (open.length && open[open.length - 1] === 0) open.pop()
  }
  if (open.length) throw new Error(`its schema ends within ${open.length === 1 ? 'its root' : `a group ${open.length - 1} levels deep`}: ${open[open.length - 1]} of its elements are missing`)
}

/**
 * The metadata hyparquet reads: the leaves' annotations removed but strings', and every
 * element below the top level named `__proto__` (a struct's field) named STRUCT_PROTO, in the
 * schema and in the column chunks' paths. The file's own metadata is left as it is.
 */
function readableMetadata (metadata) {
  const top = topLevel(metadata.schema)
  const schema = metadata.schema.map((e, i) => {
    let out = e.num_children || keepsAnnotation(e) ? e : { ...e, converted_type: undefined, logical_type: undefined }
    if (e.name === '__proto__' && !top.has(i)) out = { ...out, name: STRUCT_PROTO }
    return out
  })
  if (schema.every((e, i) => e.name === metadata.schema[i].name)) return { ...metadata, schema }
  const rename = path => path.map((p, k) => k > 0 && p === '__proto__' ? STRUCT_PROTO : p)
  const rowGroups = metadata.row_groups.map(g => ({
    ...g,
    columns: g.columns.map(c => c.meta_data ? { ...c, meta_data: { ...c.meta_data, path_in_schema: rename(c.meta_data.path_in_schema) } } : c)
  }))
  return { ...metadata, schema, row_groups: rowGroups }
}

/** The indices of the root's children in a checked schema. */
function topLevel (schema) {
  const out = new Set()
  let i = 1
  for (let c = 0; c < (schema[0].num_children || 0); c++) {
    out.add(i)
    i = after(schema, i)
  }
  return out
}

/** The index after element i and its descendants. */
function after (schema, i) {
  let left = 1
  while (left > 0) {
    left += (schema[i].num_children || 0) - 1
    i++
  }
  return i
}

module.exports = { checkSchema, readableMetadata }
