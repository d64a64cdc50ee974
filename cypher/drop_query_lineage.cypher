// After close_query_lineage, with the same rows: the edges it would end that began at `at` or later never held
// (derived from a statement or a lineage version a newer one had replaced by then): they go, with no past.
// $rows: [{datasetUrn, at, keep: [query URN], only}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[e:DataDerivedFrom]->()
WHERE e.sourceFormat = 'sql' AND e.source STARTS WITH 'urn:li:query:' AND NOT e.source IN row.keep
  AND (row.only IS NULL OR e.source = row.only)
DELETE e
