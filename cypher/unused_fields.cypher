// Fields nobody reads now: listed fields (neither placeholders nor removed) of the datasets matched ($dataset: a
// dataset URN, $platform: a platform name; null: any) with no lineage edge that holds now into them, nor into their
// whole dataset (a field derived from a dataset reads all of it). fieldRead, datasetRead: when the latest past edge
// into the field, into its dataset, stopped holding (null: none ever did).
MATCH (d:Dataset)-[:HasField]->(f:DatasetField)
WHERE ($dataset IS NULL OR d.urn = $dataset) AND ($platform IS NULL OR d.platform = $platform)
  AND coalesce(f.placeholder, false) = false AND coalesce(f.removed, false) = false
  AND NOT (f)<-[:DataDerivedFrom]-() AND NOT (d)<-[:DataDerivedFrom]-()
OPTIONAL MATCH (f)<-[p:PreviouslyDerivedFrom]-()
WITH d, f, max(p.validTo) AS fieldRead
OPTIONAL MATCH (d)<-[q:PreviouslyDerivedFrom]-()
RETURN d.urn AS dataset, f.urn AS urn, f.fieldPath AS fieldPath, f.simplePath AS simplePath, f.type AS type,
       f.nativeDataType AS nativeDataType, fieldRead, max(q.validTo) AS datasetRead
ORDER BY dataset, fieldPath
