// Remove a dataset's incoming lineage edges written from one aspect (replaced or deleted). $rows: [{datasetUrn, source}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[e:DataDerivedFrom]->()
WHERE e.source = row.source
DELETE e
