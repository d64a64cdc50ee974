// Remove a dataset's edges from one lineage aspect, present and past, to write its replayed timeline.
// $rows: [{datasetUrn, source}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->()
WHERE e.source = row.source
DELETE e
