// Remove the renames a dataset's schemas stated, to write them again from its replayed timeline.
// $rows: [{datasetUrn}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[r:RenamedFrom]->()
WHERE r.source = 'schema'
DELETE r
