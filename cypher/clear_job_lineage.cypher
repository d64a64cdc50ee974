// Remove the job-lineage edges (CDAP, OpenLineage, SQL) into a dataset, present and past, to write its replayed
// timeline. $rows: [{datasetUrn}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->()
WHERE e.sourceFormat IN ['cdap', 'openlineage', 'sql']
DELETE e
