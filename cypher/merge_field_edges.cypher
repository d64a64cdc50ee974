// Field-to-field lineage: (downstream)-[:DataDerivedFrom]->(upstream). $rows: [{down, up, source, props}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})
MATCH (u:DatasetField {urn: row.up})
MERGE (d)-[e:DataDerivedFrom {source: row.source}]->(u)
SET e += row.props
