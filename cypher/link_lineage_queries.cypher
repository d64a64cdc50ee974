// The queries a dataset's upstreamLineage says made it from some of its upstreams without giving field lineage
// (the lineage is derived from each query's statement, whichever arrives first). $rows: [{datasetUrn, query, upstreams}]
UNWIND $rows AS row
MATCH (d:Dataset {urn: row.datasetUrn})
MERGE (q:Query {urn: row.query})
MERGE (d)-[r:MadeByQuery]->(q)
SET r.upstreams = row.upstreams
