// Remove the job-lineage edges (CDAP, OpenLineage, SQL; not those of DataHub queries, which their
// upstreamLineage ends: close_query_lineage) into a dataset, present and past, to write its replayed
// timeline. $rows: [{datasetUrn}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->()
WHERE e.sourceFormat IN ['cdap', 'openlineage', 'sql'] AND NOT e.source STARTS WITH 'urn:li:query:'
DELETE e
