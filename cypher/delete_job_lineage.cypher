// Remove every job-lineage edge (CDAP, OpenLineage) into a deleted dataset. $rows: [{datasetUrn}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[e:DataDerivedFrom]->()
WHERE e.sourceFormat IN ['cdap', 'openlineage']
DELETE e
