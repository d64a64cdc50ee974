// Fields of dataset $urn (placeholders when they hold now: a present edge refers to them, or a job declared them).
MATCH (d:Dataset {urn: $urn})-[:HasField]->(f:DatasetField)
WHERE coalesce(f.placeholder, false) = false OR (f)-[:DataDerivedFrom]-() OR f.declared = true
RETURN f.urn AS urn, f.fieldPath AS fieldPath, f.simplePath AS simplePath, f.type AS type,
       f.nativeDataType AS nativeDataType, f.nullable AS nullable, f.isPartOfKey AS isPartOfKey,
       f.removed AS removed, f.placeholder AS placeholder, f.description AS description
ORDER BY fieldPath
