// Lineage drawn by hand removed at `at` (fieldgraph edge remove): the edge stops holding and becomes a
// PreviouslyDerivedFrom edge with validTo and who removed it (removedBy), kept for as-of questions. An edge drawn
// after `at` (the removal is older: it arrived late) holds on. $rows: [{down, up, at, by}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})-[e:DataDerivedFrom]->(u:DatasetField {urn: row.up})
WHERE e.source = 'manual' AND coalesce(e.validFrom, 0) <= row.at
CREATE (d)-[p:PreviouslyDerivedFrom]->(u)
SET p = properties(e), p.validTo = row.at, p.removedBy = row.by
DELETE e
