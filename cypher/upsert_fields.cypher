// Create or update schema fields and their HasField edge (validFrom: the first time a schema listed the field);
// a field's present state starts at its first version (`since`; archive_field_states moves it on).
// $rows: [{datasetUrn, urn, at, props}]
UNWIND $rows AS row
MATCH (d:Dataset {urn: row.datasetUrn})
MERGE (f:DatasetField {urn: row.urn})
SET f += row.props, f.since = coalesce(f.since, row.at)
MERGE (d)-[h:HasField]->(f)
SET h.validFrom = CASE WHEN h.validFrom IS NULL OR row.at < h.validFrom THEN row.at ELSE h.validFrom END
