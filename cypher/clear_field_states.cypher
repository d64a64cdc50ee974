// Remove the past states of a dataset's fields, to write its replayed timeline. $rows: [{datasetUrn}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[:HasField]->(:DatasetField)-[:HadState]->(h:FieldState)
DETACH DELETE h
