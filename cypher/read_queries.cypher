// Stored queries with the datasets whose upstreamLineage names them (and that aspect's stamp). $urns: [query URN]
UNWIND $urns AS urn
MATCH (q:Query {urn: urn})
OPTIONAL MATCH (d:Dataset)-[r:MadeByQuery]->(q)
RETURN q.urn AS urn, q.statement AS statement, q.language AS language, q.ts AS ts,
       collect(CASE WHEN d IS NULL THEN NULL ELSE [d.urn, r.upstreams, d.upstreamLineageTs] END) AS datasets
