// A field's past states (a replayed timeline). $rows: [{urn, props: {validFrom, validTo, removed, stateKey, ...}}]
UNWIND $rows AS row
MATCH (f:DatasetField {urn: row.urn})
CREATE (f)-[:HadState]->(h:FieldState)
SET h += row.props
