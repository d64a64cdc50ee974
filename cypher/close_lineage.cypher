// A newer version of a lineage aspect: the dataset's edges from it that the version does not repeat (the same
// fact between the same fields) stop holding at its time and become PreviouslyDerivedFrom edges.
// $rows: [{datasetUrn, source, at, keep: [[down, up, fact]]}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(d:DatasetField)-[e:DataDerivedFrom]->(u)
WHERE e.source = row.source AND NOT [d.urn, u.urn, coalesce(e.fact, '')] IN row.keep
CREATE (d)-[p:PreviouslyDerivedFrom]->(u)
SET p = properties(e), p.validTo = row.at
DELETE e
