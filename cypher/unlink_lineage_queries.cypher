// A dataset's upstreamLineage changed: forget the queries its previous version said made it.
// $rows: [{datasetUrn}]
UNWIND $rows AS row
MATCH (:Dataset {urn: row.datasetUrn})-[r:MadeByQuery]->(:Query)
DELETE r
