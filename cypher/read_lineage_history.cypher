// The stored edges of lineage aspects, present and past, for a replay. $rows: [{datasetUrn, source}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(d:DatasetField)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->(u)
WHERE e.source = row.source
RETURN row.datasetUrn AS dataset, row.source AS source, d.urn AS down, u.urn AS up, u.datasetUrn IS NULL AS toDataset,
       properties(e) AS props
