// Field-to-field lineage: (downstream)-[:DataDerivedFrom]->(upstream). $rows: [{down, up, source, props}]
// A DataHub aspect replaces the whole edge set: firstSeen and lastSeen are the aspect's stamp (props.lastSeen).
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})
MATCH (u:DatasetField {urn: row.up})
MERGE (d)-[e:DataDerivedFrom {source: row.source}]->(u)
SET e += row.props, e.firstSeen = row.props.lastSeen
