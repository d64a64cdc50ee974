// Neo4j Browser: draws a shortest lineage path from field $from up to field $to (to depth 10): $from is the
// downstream field, $to one of its upstream fields; no row if $to is not upstream of $from.
// Needs: :params {from: 'urn:li:datasetField:(...)', to: 'urn:li:datasetField:(...)'}
// Runs on both backends (FalkorDB takes shortestPath only in WITH or RETURN, hence the WITH).
MATCH (a:DatasetField {urn: $from}), (b:DatasetField {urn: $to})
WITH shortestPath((a)-[:DataDerivedFrom*1..10]->(b)) AS p
WHERE p IS NOT NULL
RETURN p
