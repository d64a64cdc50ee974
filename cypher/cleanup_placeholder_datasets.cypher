// Placeholder datasets with no field, no incoming lineage (present or past) and no lineage aspect of their own.
MATCH (d:Dataset {placeholder: true})
WHERE NOT (d)-[:HasField]->() AND NOT ()-[:DataDerivedFrom|PreviouslyDerivedFrom]->(d)
  AND d.upstreamLineageTs IS NULL AND d.datasetUpstreamLineageTs IS NULL
DELETE d
