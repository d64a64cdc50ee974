// Fields of dataset $urn.
MATCH (d:Dataset {urn: $urn})-[:HasField]->(f:DatasetField)
RETURN f.urn AS urn, f.fieldPath AS fieldPath, f.simplePath AS simplePath, f.type AS type,
       f.nativeDataType AS nativeDataType, f.nullable AS nullable, f.isPartOfKey AS isPartOfKey,
       f.removed AS removed, f.placeholder AS placeholder, f.description AS description
ORDER BY fieldPath
