// Lineage drawn by hand (fieldgraph edge add), holding from `at`: (down)-[:DataDerivedFrom {source: 'manual'}]->(up).
// An edge drawn already holds on as it is (its validFrom, who drew it, its note). An edge removed after `at`
// is not drawn again: the drawing is older than the removal (it arrived late), which ended it already.
// $rows: [{down, up, at, props}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})
MATCH (u:DatasetField {urn: row.up})
OPTIONAL MATCH (d)-[p:PreviouslyDerivedFrom]->(u)
WHERE p.source = 'manual' AND p.validTo > row.at
WITH row, d, u, count(p) AS removedLater
WHERE removedLater = 0
MERGE (d)-[e:DataDerivedFrom {source: 'manual'}]->(u)
ON CREATE SET e += row.props, e.validFrom = row.at, e.firstSeen = row.at, e.lastSeen = row.at
