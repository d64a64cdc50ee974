// The stored job-lineage edges (CDAP, OpenLineage, SQL) into datasets, present and past, for a replay. $urns: [datasetUrn]
UNWIND $urns AS urn
MATCH (:Dataset {urn: urn})-[:HasField]->(d:DatasetField)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->(u:DatasetField)
WHERE e.sourceFormat IN ['cdap', 'openlineage', 'sql']
RETURN urn AS dataset, d.urn AS down, u.urn AS up, properties(e) AS props
