// Placeholder datasets with no field, no incoming lineage (present or past), no job run that read or wrote them
// and no aspect version of their own (nor tags set on their fields in DataHub)
// (a delete that arrived first is kept: it places later-arriving, older versions in time). Locked, then looked
// at again, as in cleanup_placeholder_fields: another writer may be giving one a field or an edge.
MATCH (d:Dataset {placeholder: true})
WHERE NOT (d)-[:HasField]->() AND NOT ()-[:DataDerivedFrom|PreviouslyDerivedFrom]->(d) AND NOT ()-[:Read|Wrote]->(d)
  AND d.upstreamLineageTs IS NULL AND d.datasetUpstreamLineageTs IS NULL AND d.jobLineageDeletes IS NULL
  AND d.editableTs IS NULL
SET d.placeholder = true
WITH d
WHERE NOT (d)-[:HasField]->() AND NOT ()-[:DataDerivedFrom|PreviouslyDerivedFrom]->(d) AND NOT ()-[:Read|Wrote]->(d)
  AND d.upstreamLineageTs IS NULL AND d.datasetUpstreamLineageTs IS NULL AND d.jobLineageDeletes IS NULL
  AND d.editableTs IS NULL
DELETE d
