// Fields nobody read at $asOf (ms since the epoch), as unused_fields: the fields (not placeholders) of the datasets
// matched with no lineage edge into them, nor into their dataset, that held at $asOf (present DataDerivedFrom and
// past PreviouslyDerivedFrom edges over [validFrom, validTo)); fieldRead, datasetRead: the latest validTo at or
// before $asOf. With the field's present state (since `since`) and the past one that held at $asOf, if any: the
// caller keeps those listed then.
MATCH (d:Dataset)-[:HasField]->(f:DatasetField)
WHERE ($dataset IS NULL OR d.urn = $dataset) AND ($platform IS NULL OR d.platform = $platform)
  AND coalesce(f.placeholder, false) = false
OPTIONAL MATCH (f)<-[e:DataDerivedFrom|PreviouslyDerivedFrom]-()
WITH d, f,
     max(CASE WHEN e IS NOT NULL AND coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)
              THEN 1 ELSE 0 END) AS fieldReadThen,
     max(CASE WHEN e.validTo <= $asOf THEN e.validTo ELSE null END) AS fieldRead
OPTIONAL MATCH (d)<-[q:DataDerivedFrom|PreviouslyDerivedFrom]-()
WITH d, f, fieldReadThen, fieldRead,
     max(CASE WHEN q IS NOT NULL AND coalesce(q.validFrom, 0) <= $asOf AND (q.validTo IS NULL OR q.validTo > $asOf)
              THEN 1 ELSE 0 END) AS datasetReadThen,
     max(CASE WHEN q.validTo <= $asOf THEN q.validTo ELSE null END) AS datasetRead
WHERE fieldReadThen = 0 AND datasetReadThen = 0
OPTIONAL MATCH (f)-[:HadState]->(h:FieldState)
WHERE h.validFrom <= $asOf AND h.validTo > $asOf
RETURN d.urn AS dataset, f.urn AS urn, f.fieldPath AS fieldPath, f.simplePath AS simplePath,
       coalesce(f.since, 0) AS since, coalesce(f.removed, false) AS removed, f.type AS type,
       f.nativeDataType AS nativeDataType, fieldRead, datasetRead, properties(h) AS past
ORDER BY dataset, fieldPath
