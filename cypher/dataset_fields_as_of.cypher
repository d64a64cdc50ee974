// Every field of dataset $urn with its present state (since `since`) and the past state that held at $asOf
// (ms since the epoch), if any; `fieldgraph fields --as-of` keeps those that existed then.
MATCH (:Dataset {urn: $urn})-[:HasField]->(f:DatasetField)
OPTIONAL MATCH (f)-[:HadState]->(h:FieldState)
WHERE h.validFrom <= $asOf AND h.validTo > $asOf
RETURN f.urn AS urn, f.fieldPath AS fieldPath, f.simplePath AS simplePath, f.refPath AS refPath,
       coalesce(f.placeholder, false) AS placeholder, coalesce(f.since, 0) AS since, coalesce(f.removed, false) AS removed,
       f.type AS type, f.nativeDataType AS nativeDataType, f.nullable AS nullable, f.isPartOfKey AS isPartOfKey,
       f.description AS description, f.declared AS declared, properties(h) AS past
ORDER BY fieldPath
