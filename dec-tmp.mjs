import { parquetMetadataAsync, asyncBufferFromFile, parquetRead } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
const file = await asyncBufferFromFile(process.argv[2])
const mode = process.argv[3]
const t0 = performance.now()
const metadata = await parquetMetadataAsync(file)
let start = 0, n = 0
for (const rg of metadata.row_groups) {
  const rows = Number(rg.num_rows)
  await parquetRead({ file, metadata, compressors: mode === 'nocomp' ? undefined : compressors, rowStart: start, rowEnd: start + rows, columns: process.argv[4] ? process.argv[4].split(',') : undefined, onChunk: (c) => { if (c.columnName === 'id') n += c.columnData.length } })
  start += rows
}
console.log(n, (performance.now() - t0).toFixed(0), 'ms', (process.resourceUsage().maxRSS/1024).toFixed(0), 'MB')
