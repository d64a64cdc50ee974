// Placeholder datasets with no field, no incoming lineage (present or past) and no aspect version of their own
// (a delete that arrived first is kept: it places later-arriving, older versions in time).
MATCH (d:Dataset {placeholder: true})
WHERE NOT (d)-[:HasField]->() AND NOT ()-[:DataDerivedFrom|PreviouslyDerivedFrom]->(d)
  AND d.upstreamLineageTs IS NULL AND d.datasetUpstreamLineageTs IS NULL AND d.jobLineageDeletes IS NULL
DELETE d
