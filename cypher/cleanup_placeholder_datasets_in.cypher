// cleanup_placeholder_datasets, among the datasets a writer holds the locks of (see
// cleanup_placeholder_fields_in). $datasets: [dataset URN]
UNWIND $datasets AS urn
MATCH (d:Dataset {urn: urn})
WHERE d.placeholder = true
  AND NOT (d)-[:HasField]->() AND NOT ()-[:DataDerivedFrom|PreviouslyDerivedFrom]->(d) AND NOT ()-[:Read|Wrote]->(d)
  AND d.upstreamLineageTs IS NULL AND d.datasetUpstreamLineageTs IS NULL AND d.jobLineageDeletes IS NULL
  AND d.editableTs IS NULL
SET d.placeholder = true
WITH d
WHERE NOT (d)-[:HasField]->() AND NOT ()-[:DataDerivedFrom|PreviouslyDerivedFrom]->(d) AND NOT ()-[:Read|Wrote]->(d)
  AND d.upstreamLineageTs IS NULL AND d.datasetUpstreamLineageTs IS NULL AND d.jobLineageDeletes IS NULL
  AND d.editableTs IS NULL
DELETE d
