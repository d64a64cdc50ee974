// Field-to-dataset lineage that holds now (fineGrainedLineages with upstreamType DATASET); as merge_field_edges.
// $rows: [{down, up, source, fact, validFrom, props}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})
MATCH (u:Dataset {urn: row.up})
MERGE (d)-[e:DataDerivedFrom {source: row.source, fact: row.fact}]->(u)
ON CREATE SET e.validFrom = row.validFrom, e.firstSeen = row.validFrom
SET e += row.props
