// Fields' states as of $asOf (ms since the epoch): the present one (since `since`) and the past one that held
// then, if any (null: none). $urns: [field urn]
UNWIND $urns AS urn
MATCH (f:DatasetField {urn: urn})
OPTIONAL MATCH (f)-[:HadState]->(h:FieldState)
WHERE h.validFrom <= $asOf AND h.validTo > $asOf
RETURN f.urn AS urn, coalesce(f.placeholder, false) AS placeholder, coalesce(f.since, 0) AS since,
       coalesce(f.removed, false) AS removed, f.type AS type, f.nativeDataType AS nativeDataType,
       f.nullable AS nullable, f.description AS description, f.isPartOfKey AS isPartOfKey, f.tags AS tags,
       f.glossaryTerms AS glossaryTerms, properties(h) AS past
