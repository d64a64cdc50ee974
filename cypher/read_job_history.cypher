// The stored job-lineage edges (CDAP, OpenLineage, SQL; not those of DataHub queries, which their
// upstreamLineage ends: close_query_lineage) into datasets, present and past, for a replay. $urns: [datasetUrn]
UNWIND $urns AS urn
MATCH (:Dataset {urn: urn})-[:HasField]->(d:DatasetField)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->(u:DatasetField)
WHERE e.sourceFormat IN ['cdap', 'openlineage', 'sql'] AND NOT e.source STARTS WITH 'urn:li:query:'
RETURN urn AS dataset, d.urn AS down, u.urn AS up, properties(e) AS props
