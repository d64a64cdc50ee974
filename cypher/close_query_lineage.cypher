// Edges derived from DataHub queries stop holding at `at` (they become PreviouslyDerivedFrom edges): those into a
// dataset whose present upstreamLineage no longer names their query (`keep`: the queries it names), or, with
// `only`, those of one query whose statement changed. Edges that began at `at` or later never held: they go
// (drop_query_lineage). $rows: [{datasetUrn, at, keep: [query URN], only}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(d:DatasetField)-[e:DataDerivedFrom]->(u)
WHERE e.sourceFormat = 'sql' AND e.source STARTS WITH 'urn:li:query:' AND NOT e.source IN row.keep
  AND (row.only IS NULL OR e.source = row.only) AND coalesce(e.validFrom, 0) < row.at
CREATE (d)-[p:PreviouslyDerivedFrom]->(u)
SET p = properties(e), p.validTo = row.at
DELETE e
