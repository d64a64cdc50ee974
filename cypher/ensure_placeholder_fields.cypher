// Placeholder fields, for writers that may run concurrently (the Kafka worker): like ensure_fields, but a
// field that is already real (a schema landed after the planner's read) is never turned into a placeholder.
// $rows: [{datasetUrn, urn, props}]
UNWIND $rows AS row
MATCH (d:Dataset {urn: row.datasetUrn})
MERGE (f:DatasetField {urn: row.urn})
ON CREATE SET f.placeholder = true
MERGE (d)-[:HasField]->(f)
WITH f, row
WHERE f.placeholder = true
SET f += row.props
