'use strict'

// For `pipeload import examples/data/cities.csv --map examples/map/big-cities.cjs` (README):
// the cities over 10 million people as hashes with numbers for population and coordinates,
// plus an index set per country; every other city is skipped (null). ctx = { n, line, file }.
module.exports = (city, ctx) => {
  const population = Number(city.population)
  if (!(population >= 10_000_000)) return null
  return [
    ['HSET', `bigcity:${city.id}`, 'name', city.name, 'country', city.country, 'population', population,
      'lat', Number(city.lat), 'lon', Number(city.lon), 'source', `${ctx.file}:${ctx.line}`],
    ['SADD', `bigcities:${city.country}`, city.id]
  ]
}
