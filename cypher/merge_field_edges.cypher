// Field-to-field lineage that holds now: (downstream)-[:DataDerivedFrom]->(upstream). An edge that already
// holds the same fact keeps its validFrom and firstSeen; lastSeen is the newest version listing it.
// $rows: [{down, up, source, fact, validFrom, props}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})
MATCH (u:DatasetField {urn: row.up})
MERGE (d)-[e:DataDerivedFrom {source: row.source, fact: row.fact}]->(u)
ON CREATE SET e.validFrom = row.validFrom, e.firstSeen = row.validFrom
SET e += row.props
