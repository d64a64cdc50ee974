// The datasets at the upstream end of stored lineage edges (present and past) into a dataset: where deleting
// them may leave placeholders without edges, which the writer cleans up holding their locks. A row names the
// edges: those of one source (or any), only those derived from DataHub queries or any.
// $rows: [{datasetUrn, source, queries}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->(u)
WHERE (row.source IS NULL OR e.source = row.source) AND (NOT row.queries OR e.source STARTS WITH 'urn:li:query:')
OPTIONAL MATCH (ud:Dataset)-[:HasField]->(u)
RETURN DISTINCT coalesce(ud.urn, u.urn) AS urn
