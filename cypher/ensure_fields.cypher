// Placeholder fields for references not (uniquely) resolved. $rows: [{datasetUrn, urn, props}]
UNWIND $rows AS row
MATCH (d:Dataset {urn: row.datasetUrn})
MERGE (f:DatasetField {urn: row.urn})
SET f += row.props
MERGE (d)-[:HasField]->(f)
