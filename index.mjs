// ESM entry: the package is CommonJS; this re-exports it for `import { load } from 'pipeload'`.
import pipeload from './lib/index.js'

export const { load, bench, exportKeys, PipeloadError, EXIT, CODES, DEFAULTS, JsonNumber } = pipeload
export default pipeload
