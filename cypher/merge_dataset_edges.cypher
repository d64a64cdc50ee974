// Field-to-dataset lineage (fineGrainedLineages with upstreamType DATASET). $rows: [{down, up, source, props}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})
MATCH (u:Dataset {urn: row.up})
MERGE (d)-[e:DataDerivedFrom {source: row.source}]->(u)
SET e += row.props, e.firstSeen = row.props.lastSeen
