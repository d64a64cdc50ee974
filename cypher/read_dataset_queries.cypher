// The queries each dataset's present upstreamLineage names, with their statements. $urns: [dataset URN]
UNWIND $urns AS urn
MATCH (d:Dataset {urn: urn})
OPTIONAL MATCH (d)-[r:MadeByQuery]->(q:Query)
RETURN d.urn AS dataset, d.upstreamLineageTs AS ts,
       collect(CASE WHEN q IS NULL THEN NULL ELSE [q.urn, q.statement, q.ts, r.upstreams] END) AS queries
