// Field-to-field lineage that held over [validFrom, validTo) (a replayed timeline). $rows: [{down, up, props}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})
MATCH (u:DatasetField {urn: row.up})
CREATE (d)-[e:PreviouslyDerivedFrom]->(u)
SET e += row.props
