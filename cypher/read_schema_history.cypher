// The stored timelines of datasets' fields, for a replay: each real field's present state (since `since`)
// and its past states. $urns: [datasetUrn]
UNWIND $urns AS urn
MATCH (:Dataset {urn: urn})-[:HasField]->(f:DatasetField)
WHERE coalesce(f.placeholder, false) = false
OPTIONAL MATCH (f)-[:HadState]->(h:FieldState)
RETURN urn AS dataset, f.urn AS urn, coalesce(f.since, f.schemaTs, 0) AS since, coalesce(f.removed, false) AS removed,
       f.type AS type, f.nativeDataType AS nativeDataType, f.nullable AS nullable, f.description AS description,
       f.isPartOfKey AS isPartOfKey, f.tags AS tags, f.glossaryTerms AS glossaryTerms,
       collect(properties(h)) AS past
