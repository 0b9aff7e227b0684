// restore-parquet.cjs: pipeload import dump.parquet --map restore-parquet.cjs --replace
module.exports = ({ key, type, ttl, value, ...fields }) => {
  const expiry = ttl === null ? [] : ['PX', String(ttl)]
  if (type === 'string') return [['SET', key, value, ...expiry]]
  const pairs = Object.entries(fields).filter(([, v]) => v !== null)
  const cmds = [['HSET', key, ...pairs.flat()]]
  if (ttl !== null) cmds.push(['PEXPIRE', key, String(ttl)])
  return cmds
}
