// restore-csv.cjs: pipeload import users.csv --map restore-csv.cjs
module.exports = ({ key, ...fields }) => {
  const pairs = Object.entries(fields).filter(([, v]) => v !== '')
  return pairs.length === 0 ? null : [['HSET', key, ...pairs.flat()]]
}
