// The first time a schema listed each field (its HasField edge's validFrom), from a replayed timeline.
// $rows: [{urn, listedFrom}]
UNWIND $rows AS row
MATCH (:Dataset)-[h:HasField]->(f:DatasetField {urn: row.urn})
SET h.validFrom = row.listedFrom
